#!/usr/bin/env bash
# The main job: installs what is missing, builds, emits the furthest tutorial kernel that
# lowers (v10 down to v1), compiles it with nvcc for sm_90a, executes its lowered IR on the
# CPU simulator at a small shape, and, when a GPU is present, runs it against cuBLAS
# (error and TFLOP/s in one process).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh
export PATH="/usr/local/cuda/bin:$PATH"
gemmgen=build/tools/gemmgen/gemmgen
size=(--m 4096 --n 4096 --k 4096 --dtype bf16)
mkdir -p build/main
for v in 10 9 8 7 6 5 4 3 2 1; do
  if "$gemmgen" emit --schedule "v$v" "${size[@]}" -o "build/main/v$v.cu" 2>build/main/emit.log; then
    echo "== furthest tutorial step that lowers: v$v (build/main/v$v.cu)"
    break
  fi
  echo "   v$v: $(head -1 build/main/emit.log)"
done
"$gemmgen" explain --schedule "v$v" "${size[@]}" --final
echo "== nvcc -gencode=arch=compute_90a,code=sm_90a"
nvcc -gencode=arch=compute_90a,code=sm_90a -c "build/main/v$v.cu" -o "build/main/v$v.o" -Xptxas -v \
  >build/main/nvcc.log 2>&1 || { cat build/main/nvcc.log; exit 1; }
grep -E "registers|spill" build/main/nvcc.log
echo "== CPU simulator (the lowered IR, every hazard check, vs a host reference)"
"$gemmgen" simulate --schedule "v$v" --m 256 --n 256 --k 512 --sms 1
if nvidia-smi -L >/dev/null 2>&1; then
  echo "== run against cuBLAS"
  "$gemmgen" run --schedule "v$v" "${size[@]}" --check --bench
else
  echo "== no GPU here: skipped the run against cuBLAS (gemmgen run --schedule v$v ... --check --bench on a GPU)"
fi
