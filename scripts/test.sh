#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs every ctest. GPU tests
# (label gpu) report themselves as skipped on a machine without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
export PATH="/usr/local/cuda/bin:$PATH"
ctest --preset default "$@"
