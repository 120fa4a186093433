#!/usr/bin/env bash
# Installs what is missing and builds (the part quickstart.sh and test.sh share).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
export PATH="/usr/local/cuda/bin:$PATH"
cmake --preset default -G Ninja >/dev/null
cmake --build build
