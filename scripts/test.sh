#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every ctest. GPU tests
# (label gpu) report themselves as skipped on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default -G Ninja >/dev/null
cmake --build build
ctest --preset default "$@"
