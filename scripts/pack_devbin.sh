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
# a user's program around the .cu `emit --schedule auto` writes for a skinny M (the swapped
# orientation's host entry), built as tests/tools/nvcc_swapped.test builds it; it checks D exactly
"$BUILD/tools/gemmgen/gemmgen" emit --schedule auto --m 16 --n 4096 --k 4096 -o .devbin/swapped.cu
nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -c .devbin/swapped.cu -o .devbin/swapped.o
c++ -std=c++17 -O2 -DGG_M=16 -DGG_N=4096 -DGG_K=4096 -DGG_LAUNCH="$(sed -n 's|^// kernel: ||p' .devbin/swapped.cu)_launch" \
  -I"$(dirname "$(command -v nvcc)")/../include" -c tests/tools/inputs/use_emitted.cpp -o .devbin/use_emitted.o
c++ .devbin/use_emitted.o .devbin/swapped.o -L"$(dirname "$(command -v nvcc)")/../lib64" -lcudart -o .devbin/use_emitted_swapped
rm -f .devbin/swapped.o .devbin/use_emitted.o
ls -la .devbin
