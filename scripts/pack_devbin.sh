#!/usr/bin/env bash
# Copies stripped builds of the GPU-side programs into .devbin (git-ignored) so a lent GPU machine
# can run them without the 300+ MB build tree.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
cmake --build "$BUILD" --target gemmgen test_gpu bench_tutorials
mkdir -p .devbin
for f in tools/gemmgen/gemmgen tests/test_gpu benchmarks/bench_tutorials; do
  strip -o ".devbin/$(basename $f)" "$BUILD/$f"
done
# the nvcc-built programs: test_gpu runs the first when GEMMGEN_STANDALONE_TMA_COPY names it
for f in runtime/standalone_tma_copy benchmarks/dram_floor; do
  if [ -x "$BUILD/$f" ]; then cp "$BUILD/$f" .devbin/; fi
done
ls -la .devbin
