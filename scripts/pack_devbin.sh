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
# the same around kernels that read M at run time, called at several M (gpu_session.sh sizes):
# v10 planned at M=1000, a swapped split-K plan whose workspace grows with M, and K odd (operands staged)
for spec in "v10 1000 2048 512 v10" "auto 256 256 8192 splitk" "v8 520 264 200 v8" "pingpong 264 520 200 pingpong" \
            "auto 333 4444 555 staged"; do
  set -- $spec
  "$BUILD/tools/gemmgen/gemmgen" emit --schedule $1 --m $2 --n $3 --k $4 -o .devbin/$5.cu
  nvcc -std=c++17 -O2 -gencode=arch=compute_90a,code=sm_90a -c .devbin/$5.cu -o .devbin/$5.o
  c++ -std=c++17 -O2 -DGG_M=$2 -DGG_N=$3 -DGG_K=$4 -DGG_LAUNCH="$(sed -n 's|^// kernel: ||p' .devbin/$5.cu)_launch" \
    -I"$(dirname "$(command -v nvcc)")/../include" -c tests/tools/inputs/use_emitted.cpp -o .devbin/use_emitted.o
  c++ .devbin/use_emitted.o .devbin/$5.o -L"$(dirname "$(command -v nvcc)")/../lib64" -lcudart -o .devbin/use_emitted_$5
  rm -f .devbin/$5.o .devbin/$5.cu .devbin/use_emitted.o
done
ls -la .devbin
