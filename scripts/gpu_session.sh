#!/usr/bin/env bash
# One batched GPU session on a lent machine: correctness of every tutorial step on edge and large
# shapes (each run its own process under a timeout), compute-sanitizer on the warp-specialized
# steps, then the tutorial benchmark against cuBLAS. Binaries come prebuilt (scripts/pack_devbin.sh);
# logs go to $OUT (or ./devout).
#   scripts/gpu_session.sh [BIN_DIR] [PARTS: check,sanitize,bench,tests,shapes,variants,profile,plan,sizes,masked,contiguous,varlen,pointer,race,fp8,fp8grouped,streamk,splitk,mid,cublas_kernels,f32]
# Environment: CHECK_SCHEDULES, SANITIZE_SCHEDULES (space-separated names), BENCH_SCHEDULES
# (comma-separated), TESTS_FILTER (a doctest -tc filter), TESTS_TIMEOUT, PROFILE, SHAPES_DTYPES
# (space-separated; shapes: `gemmgen bench --schedule auto` over benchmarks/shapes.txt).
# variants: every schedule file in BIN_DIR/sched timed against cuBLAS; profile: Nsight Compute
# sections of PROFILE (default v8 v9 v10) at 8192^3; plan: `run --schedule auto` (the planner's
# plan, swapped for a skinny M) checked and timed, the emitted swapped .cu run from a user's
# program, and compute-sanitizer on the swapped kernels. sizes: one kernel that reads M at run
# time launched at many M (run --at-m, the GPU tests, emitted .cu host entries), timed at each
# against cuBLAS, under compute-sanitizer. masked: masked grouped GEMM checked (GPU tests) and
# timed against cuBLAS's strided batch over M_max, half full and full, under compute-sanitizer.
# contiguous, varlen, pointer: those grouped sources' GPU tests, sanitizers and speed.
# f32: auto's f32 outputs checked against fp64 and cuBLAS's own error where K grows, cuBLAS splits
# or runs other kernels (the promotion's shapes), each run's error both ways.
# race: racecheck on our kernels alone (the emitted .cu programs of pack_devbin.sh, which run no
# cuBLAS: CUDA 13's racecheck fails with a kernel filter when cuBLAS runs beside), and `run
# --repeat 20` / `--bench` with a padded D (--ldd) on v8, v10 and auto.
set -uo pipefail
BIN=${1:-.devbin}
PARTS=${2:-check,sanitize,bench}
OUT=${OUT:-devout}
mkdir -p "$OUT"
export PATH="/usr/local/cuda/bin:$PATH"
has() { [[ ",$PARTS," == *",$1,"* ]]; }
# memcheck and synccheck on our kernels of one `gemmgen run` (LABEL names it in the log line).
sanitize_run() {
  local label=$1
  shift
  for tool in memcheck synccheck; do
    timeout 240 compute-sanitizer --tool $tool --kernel-name kns=gg_gemm --error-exitcode 9 "$BIN/gemmgen" run "$@" \
      >"${TMPDIR:-/tmp}/san.txt" 2>&1
    echo "sanitize $label $tool rc=$? $(tail -2 "${TMPDIR:-/tmp}/san.txt" | tr '\n' ' ')"
  done
}

# A schedule file timed as it is (named AS_IS) and with each DIRECTIVE appended, each checked and
# timed against cuBLAS in its own process: one "LABEL [name] JSON" line each.
#   time_variants LABEL BASE_FILE REPS AS_IS [DIRECTIVE...]
time_variants() {
  local label=$1 base=$2 reps=$3 as_is=$4 f="${TMPDIR:-/tmp}/variant.sched"
  shift 4
  for variant in "$as_is" "$@"; do
    { cat "$base" && [ "$variant" != "$as_is" ] && echo "$variant"; } >"$f"
    echo "$label [$variant] $(timeout 120 "$BIN/gemmgen" run --schedule-file "$f" --bench --reps $reps --json 2>&1 | tail -1)"
  done
}

nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv >"$OUT/device.txt" 2>&1
cat "$OUT/device.txt"

if has check; then
  for v in ${CHECK_SCHEDULES:-v7 v8 v9 v10 pingpong v4 v5 v6}; do
    for shape in "300 200 136" "1 8 8" "129 264 72" "64 8 1024" "1000 1000 1000" "2048 2048 512" "4096 4096 4096"; do
      set -- $shape
      for mode in "" "--exact" "--dtype f16"; do
        line=$(timeout 120 "$BIN/gemmgen" run --schedule $v --m $1 --n $2 --k $3 $mode --json 2>&1 | tail -1)
        echo "$v $1x$2x$3 ${mode:-random} rc=$? $line"
      done
    done
  done 2>&1 | tee "$OUT/check.log" | grep -v '"passed": true' || true
  echo "check: $(grep -c '"passed": true' "$OUT/check.log") passed of $(wc -l <"$OUT/check.log")"
fi

if has sanitize; then
  for v in ${SANITIZE_SCHEDULES:-v1 v2 v3 v4 v5 v6 v7 v8 v9 v10 pingpong}; do
    # one small and one edge shape each; v1 computes one tile and v2 one column of tiles
    case $v in
      v1) shapes=("128 128 64" "100 120 40") ;;
      v2) shapes=("128 128 256" "100 120 200") ;;
      *) shapes=("264 200 200" "520 264 72") ;;
    esac
    for shape in "${shapes[@]}"; do
      set -- $shape
      for tool in racecheck synccheck memcheck initcheck; do
        r=$(timeout 240 compute-sanitizer --tool $tool --error-exitcode 9 "$BIN/gemmgen" run --schedule $v --m $1 --n $2 --k $3 2>&1 | tail -4 | tr '\n' ' ')
        echo "sanitize $v $1x$2x$3 $tool rc=$? $r"
      done
    done
  done 2>&1 | tee "$OUT/sanitize.log"
fi

if has tests; then
  # cli_run_gpu_test runs the CLI: the carried binary, not the build tree's path baked in here
  GEMMGEN_EXE="$(cd "$BIN" && pwd)/gemmgen" GEMMGEN_STANDALONE_TMA_COPY="$(cd "$BIN" && pwd)/standalone_tma_copy" timeout ${TESTS_TIMEOUT:-400} "$BIN/test_gpu" ${TESTS_FILTER:+-tc="$TESTS_FILTER"} 2>&1 | tee "$OUT/test_gpu.log" | tail -15
fi

if has bench; then
  B=${BENCH_SCHEDULES:-v6,v7,v8,v9,v10,pingpong}
  timeout 300 "$BIN/bench_tutorials" --schedules $B --sizes 4096,6144,8192 --reps 30 2>&1 | tee "$OUT/bench_bf16.log"
  timeout 300 "$BIN/bench_tutorials" --schedules $B --sizes 4096,6144,8192 --dtype f16 --reps 30 2>&1 | tee "$OUT/bench_f16.log"
fi

if has shapes; then
  for dt in ${SHAPES_DTYPES:-bf16 f16}; do
    timeout 400 "$BIN/gemmgen" bench --shapes benchmarks/shapes.txt --schedule auto --dtype $dt --reps 30 \
      --json "$OUT/shapes_$dt.json" --plot "$OUT/shapes_$dt.svg" 2>&1 | tee "$OUT/shapes_$dt.log"
  done
fi

if has variants; then
  for f in "$BIN"/sched/*.sched; do
    r=$(timeout 120 "$BIN/gemmgen" run --schedule-file "$f" --bench --reps 30 --json 2>&1 | tail -1)
    echo "$(basename "$f") $r"
  done 2>&1 | tee "$OUT/variants.log"
fi

if has profile; then
  for v in ${PROFILE:-v8 v9 v10}; do
    # launch 0 is the watchdog build's check, launch 1 the timed build's first run
    timeout 200 ncu --clock-control none -k regex:gg_gemm --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --metrics sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active \
      "$BIN/gemmgen" run --schedule $v --bench --reps 1 >"$OUT/ncu_$v.txt" 2>&1
    grep -E "Duration|Tensor|gmma|Compute \(SM\)|Memory Throughput|Registers|Achieved Occupancy|Stall|Waves|Cluster" "$OUT/ncu_$v.txt" | head -30
  done
fi

if has plan; then
  for shape in "1 4096 4096" "16 4096 4096" "7 1000 264" "64 14336 4096" "333 4444 555" "4096 4096 4096"; do
    set -- $shape
    for mode in "" "--exact" "--dtype f16"; do
      line=$(timeout 120 "$BIN/gemmgen" run --schedule auto --m $1 --n $2 --k $3 $mode --bench --reps 30 --json 2>&1 | tail -1)
      echo "auto $1x$2x$3 ${mode:-random} $line"
    done
  done 2>&1 | tee "$OUT/plan.log"
  if [ -x "$BIN/use_emitted_swapped" ]; then "$BIN/use_emitted_swapped" 2>&1 | tee -a "$OUT/plan.log"; fi
  for shape in "16 4096 4096" "7 1000 264"; do
    set -- $shape
    for tool in racecheck synccheck memcheck initcheck; do
      # cuBLAS's split-K kernels (its reference for skinny shapes) report their own race and
      # uninitialized reads (nvjet_..._splitK_TNT, cublasLt::splitKreduce_kernel): our kernels alone
      # with --kernel-name, except for racecheck, whose filter makes CUDA 13's sanitizer fail
      # ("failed to handle a hardware exception") on the skipped cuBLAS kernel; its reports are
      # attributed by kernel name instead.
      filter="--kernel-name kns=gg_gemm"
      [ $tool = racecheck ] && filter=""
      log="${TMPDIR:-/tmp}/sanitize_auto_$1x$2x$3_$tool.txt"  # the summary line below is what comes back
      timeout 240 compute-sanitizer --tool $tool $filter --error-exitcode 9 "$BIN/gemmgen" run --schedule auto --m $1 --n $2 --k $3 >"$log" 2>&1
      rc=$?
      racing=$(grep -oE "access at [A-Za-z_][A-Za-z0-9_]*" "$log" | sort -u | sed 's/access at //' | tr '\n' ' ')
      echo "sanitize auto $1x$2x$3 $tool rc=$rc ${racing:+races in: $racing}$(tail -4 "$log" | tr '\n' ' ')"
    done
  done 2>&1 | tee "$OUT/plan_sanitize.log"
fi

if has sizes; then
  MS=${SIZES_M:-1,7,16,64,128,333,1000,4097}
  for spec in "v10 1000 4096 2048" "auto 1000 4096 2048" "auto 16 4096 4096" "auto 256 256 8192" "auto 512 7168 2048"; do
    set -- $spec
    timeout 300 "$BIN/gemmgen" run --schedule $1 --m $2 --n $3 --k $4 --at-m $MS --bench --reps 30 --json 2>&1 |
      sed "s|^|$1 $2x$3x$4 |"
  done 2>&1 | tee "$OUT/sizes.log" | cut -c1-400
  for p in use_emitted_swapped use_emitted_v10 use_emitted_splitk; do
    [ -x "$BIN/$p" ] && timeout 120 "$BIN/$p" 1 7 300 1000 4097 2>&1
  done 2>&1 | tee -a "$OUT/sizes.log"
  timeout 300 "$BIN/test_gpu" -tc="*one loaded kernel*,*shares one kernel*" 2>&1 | tail -4 | tee -a "$OUT/sizes.log"
  for spec in "v10 1000 2048 512" "auto 256 256 8192"; do
    set -- $spec
    sanitize_run "sizes $1 $2x$3x$4" --schedule $1 --m $2 --n $3 --k $4 --at-m 1,77,700
  done 2>&1 | tee -a "$OUT/sizes.log"
fi

if has masked; then
  timeout 300 "$BIN/test_gpu" -tc="masked*,gg::gemm_masked*" 2>&1 | tail -4 | tee "$OUT/masked.log"
  for nk in "4096 7168" "7168 2048"; do
    set -- $nk
    n=$1 k=$2
    for gm in "1 1024" "2 512" "4 256" "16 128"; do
      set -- $gm
      g=$1 mmax=$2
      for fill in half full; do
        rows=$([ $fill = half ] && echo $((mmax / 2)) || echo $mmax)
        list=$(printf "$rows%.0s," $(seq 1 $g)); list=${list%,}
        line=$(timeout 120 "$BIN/gemmgen" run --schedule auto --m $mmax --n $n --k $k --batch $g --group-m $list --bench --reps 30 --json 2>&1 | tail -1)
        echo "masked ${g}x${mmax} N=$n K=$k $fill $line"
        # planned for the rows a group is expected to hold (DeepGEMM's expected_m)
        if [ $fill = half ]; then
          line=$(timeout 120 "$BIN/gemmgen" run --schedule auto --m $mmax --expected-m $rows --n $n --k $k --batch $g --group-m $list --bench --reps 30 --json 2>&1 | tail -1)
          echo "masked ${g}x${mmax} N=$n K=$k half-expected $line"
        fi
      done
    done
  done 2>&1 | tee -a "$OUT/masked.log" | cut -c1-300
  sanitize_run masked --schedule auto --m 256 --n 512 --k 512 --batch 6 --group-m 0,1,127,128,129,256 2>&1 |
    tee -a "$OUT/masked.log"
fi

if has contiguous; then
  # a cold kernel cache: a later step's new M must not compile another kernel
  GEMMGEN_CACHE_DIR=$(mktemp -d) timeout 420 "$BIN/test_gpu" -tc="contiguous*,gg::gemm_contiguous*" >"$OUT/contiguous_tests.log" 2>&1
  grep -v ": ok$" "$OUT/contiguous_tests.log" | tail -30 | tee "$OUT/contiguous.log"
  # DeepSeek-V3 expert shapes: 4 x 8192 and 8 x 4096 rows, and 64 random groups summing to 16384,
  # against a loop of cuBLAS calls (one per group) in the same process
  for nk in "4096 7168" "7168 2048"; do
    set -- $nk
    n=$1 k=$2
    for spec in "4 32768 even" "8 32768 even" "64 16384 random:7" "64 16384 random:8"; do
      set -- $spec
      g=$1 m=$2 fill=$3
      groups=$([ $fill = even ] && echo "" || echo "--group-m $fill")
      line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --m $m --n $n --k $k --batch $g --source contiguous $groups --bench --reps 30 --json 2>&1 | tail -1)
      echo "contiguous ${g}x$m $fill N=$n K=$k $line"
    done
  done 2>&1 | tee -a "$OUT/contiguous.log" | cut -c1-400
  sanitize_run contiguous --schedule auto --m 700 --n 512 --k 512 --batch 6 --source contiguous \
    --group-m 0,1,127,128,129,300 2>&1 | tee -a "$OUT/contiguous.log"
  [ -f scripts/grouped_baselines.py ] && timeout 300 python3 scripts/grouped_baselines.py 2>&1 | tee -a "$OUT/contiguous.log"
fi

if has varlen; then
  GEMMGEN_CACHE_DIR=$(mktemp -d) timeout 420 "$BIN/test_gpu" -tc="variable-K*,gg::gemm_varlen_k*" >"$OUT/varlen_tests.log" 2>&1
  grep -v ": ok$" "$OUT/varlen_tests.log" | tail -30 | tee "$OUT/varlen.log"
  # MoE weight gradients: 16384 tokens over 8 even and 64 random experts, against a loop of cuBLAS
  # calls (one per group, on its rows of K) in the same process
  for mn in "4096 7168" "7168 2048"; do
    set -- $mn
    m=$1 n=$2
    for spec in "8 even" "64 random:7" "64 random:8"; do
      set -- $spec
      g=$1 fill=$2
      groups=$([ $fill = even ] && echo "" || echo "--group-k $fill")
      line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --m $m --n $n --k 16384 --a-major m --b-major n --batch $g --source varlen_k $groups --bench --reps 30 --json 2>&1 | tail -1)
      echo "varlen_k ${g} $fill M=$m N=$n K=16384 $line"
    done
  done 2>&1 | tee -a "$OUT/varlen.log" | cut -c1-400
  sanitize_run varlen_k --schedule auto --m 256 --n 384 --k 1000 --a-major m --b-major n --batch 6 --source varlen_k \
    --group-k 0,1,63,199,0,600 2>&1 | tee -a "$OUT/varlen.log"
fi

if has pointer; then
  # pointer-array groups: GPU tests from a cold cache, a ragged run under the sanitizers, and the
  # speed of 8 large and 64 small groups against a loop of cuBLAS calls (one per group)
  GEMMGEN_CACHE_DIR=$(mktemp -d) timeout 420 "$BIN/test_gpu" -tc="pointer-array*,gg::gemm_pointer_array*" >"$OUT/pointer_tests.log" 2>&1
  grep -v ": ok$" "$OUT/pointer_tests.log" | tail -30 | tee "$OUT/pointer.log"
  ragged="--m 700 --n 384 --k 264 --batch 7 --source pointer_array --group-m 700,0,130,1,129,333,65 --group-n 384,384,0,8,200,384,104 --group-k 264,264,64,1,0,8,263"
  sanitize_run pointer_array --schedule auto $ragged 2>&1 | tee -a "$OUT/pointer.log"
  for spec in "8 4096 4096 7168" "64 256 4096 7168" "8 4096 7168 2048"; do
    set -- $spec
    line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --m $2 --n $3 --k $4 --batch $1 --source pointer_array --bench --reps 20 --json 2>&1 | tail -1)
    echo "pointer_array ${1} x ${2}x${3}x${4} $line"
    line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --m $2 --n $3 --k $4 --batch $1 --bench --reps 20 --json 2>&1 | tail -1)
    echo "dense batch ${1} x ${2}x${3}x${4} $line"
  done 2>&1 | tee -a "$OUT/pointer.log" | cut -c1-400
  [ -f scripts/grouped_baselines.py ] && timeout 300 python3 scripts/grouped_baselines.py pointer 2>&1 | tee -a "$OUT/pointer.log"
fi

if has race; then
  for p in use_emitted_swapped use_emitted_v10 use_emitted_splitk use_emitted_v8 use_emitted_pingpong; do
    [ -x "$BIN/$p" ] || continue
    timeout 200 compute-sanitizer --tool racecheck --error-exitcode 9 "$BIN/$p" 1 300 >"${TMPDIR:-/tmp}/race.txt" 2>&1
    echo "racecheck $p rc=$? $(grep -c 'elements wrong' "${TMPDIR:-/tmp}/race.txt") runs $(tail -1 "${TMPDIR:-/tmp}/race.txt")"
  done 2>&1 | tee "$OUT/race.log"
  for s in v8 v10 auto; do
    for mode in "--repeat 20" "--bench --reps 20"; do
      r=$(timeout 120 "$BIN/gemmgen" run --schedule $s --m 2048 --n 2048 --k 512 --ldd 2080 $mode 2>&1 | grep -E "check:|repeat|TFLOP" | tr '\n' ' ')
      echo "padded-ldd $s $mode: $r"
    done
  done 2>&1 | tee -a "$OUT/race.log"
fi

if has fp8; then
  # FP8 with DeepGEMM's factors (A per 1x128, B per 128x128): edge shapes checked exactly and on
  # random data against fp64 and cuBLASLt's block-scaled FP8, the warp-specialized steps and auto
  # under the sanitizers, then DeepGEMM's dense shapes timed against cuBLASLt in the same process.
  for s in ${FP8_SCHEDULES:-auto v10 v8}; do
    for shape in "128 128 128" "1 112 128" "200 264 384" "129 264 640" "4096 4096 4096" "64 7168 2048"; do
      set -- $shape
      for mode in "" "--exact" "--out-dtype f32"; do
        line=$(timeout 120 "$BIN/gemmgen" run --schedule $s --dtype e4m3 --m $1 --n $2 --k $3 $mode --json 2>&1 | tail -1)
        echo "fp8 $s $1x$2x$3 ${mode:-random} $line"
      done
    done
  done 2>&1 | tee "$OUT/fp8_check.log" | grep -v '"passed": true' || true
  echo "fp8 check: $(grep -c '"passed": true' "$OUT/fp8_check.log") passed of $(wc -l <"$OUT/fp8_check.log")"
  sanitize_run fp8_v10 --schedule v10 --dtype e4m3 --m 200 --n 264 --k 640
  sanitize_run fp8_auto --schedule auto --dtype e4m3 --m 129 --n 7168 --k 2048
  for m in ${FP8_MS:-64 128 4096}; do
    for nk in "2112 7168" "24576 1536" "32768 512" "7168 16384" "4096 7168" "7168 2048"; do
      set -- $nk
      line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --dtype e4m3 --m $m --n $1 --k $2 --bench --json 2>&1 | tail -1)
      echo "fp8 bench ${m}x$1x$2 $line"
    done
  done 2>&1 | tee "$OUT/fp8_bench.log"
fi

if has fp8grouped; then
  # Grouped FP8 (DeepGEMM's m_grouped_fp8_gemm_nt_masked and ..._contiguous): the GPU tests, the
  # sanitizers on both sources, then the issue's shapes timed against a loop of cuBLASLt's
  # block-scaled calls (one per group) in the same process. FP8_CONTIGUOUS and FP8_MASKED:
  # "groups rows" pairs separated by ';' (empty: none).
  timeout 400 "$BIN/test_gpu" -tc="fp8 on the GPU: masked*,gg::gemm_fp8_masked*" >"$OUT/fp8_grouped_tests.log" 2>&1
  grep -E "ERROR|THREW|test cases" "$OUT/fp8_grouped_tests.log" | head -20
  sanitize_run fp8_masked --schedule auto --dtype e4m3 --source masked --batch 3 --m 200 --n 264 --k 640 --group-m 200,0,77
  sanitize_run fp8_contiguous --schedule auto --dtype e4m3 --source contiguous --batch 4 --m 400 --n 264 --k 384
  for nk in "4096 7168" "7168 2048"; do
    set -- $nk
    IFS=';' read -ra contiguous_groups <<<"${FP8_CONTIGUOUS-4 8192;8 4096}"
    for gm in "${contiguous_groups[@]}"; do
      set -- $1 $2 $gm
      [ $# -eq 4 ] || continue
      line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --dtype e4m3 --source contiguous --batch $3 --m $(($3 * $4)) --n $1 --k $2 --bench --json 2>&1 | tail -1)
      echo "fp8 contiguous ${3}x$4 ${1}x$2 $line"
    done
    IFS=';' read -ra masked_groups <<<"${FP8_MASKED-1 1024;2 512;4 256}"
    for gm in "${masked_groups[@]}"; do
      set -- $1 $2 $gm
      [ $# -eq 4 ] || continue
      line=$(timeout 200 "$BIN/gemmgen" run --schedule auto --dtype e4m3 --source masked --batch $3 --m $4 --n $1 --k $2 --bench --json 2>&1 | tail -1)
      echo "fp8 masked ${3}x$4 ${1}x$2 $line"
    done
  done 2>&1 | tee "$OUT/fp8_grouped_bench.log"
fi

if has streamk; then
  # Stream-K on the last wave against the plans it competes with: for each shape, auto's plan
  # without its cluster (stream-K is refused in one) and without split-K, with the last-wave split
  # (split_k 2 tail), and dealt stream-K with S = 2, 3, 4; auto's own plan beside. Each checked and
  # timed against cuBLAS in its process; then the sanitizers on one stream-K kernel.
  # STREAMK_SHAPES: "M N K" triples separated by ';'.
  tmp=${TMPDIR:-/tmp}/streamk
  mkdir -p "$tmp"
  IFS=';' read -ra streamk_shapes <<<"${STREAMK_SHAPES-2000 3000 7000;3000 5000 1032;512 4096 14336;4096 4096 4096;1408 1408 4096;6144 6144 2048;8192 8192 8192}"
  for shape in "${streamk_shapes[@]}"; do
    set -- $shape
    "$BIN/gemmgen" print --schedule auto --m $1 --n $2 --k $3 >"$tmp/auto.sched"
    grep -v '^cluster\|^multicast\|^split_k' "$tmp/auto.sched" >"$tmp/none.sched"
    time_variants "streamk $1x$2x$3" "$tmp/auto.sched" ${STREAMK_REPS:-30} auto
    time_variants "streamk $1x$2x$3" "$tmp/none.sched" ${STREAMK_REPS:-30} none "split_k 2 tail" "split_k 2 stream" \
      "split_k 3 stream" "split_k 4 stream"
  done 2>&1 | tee "$OUT/streamk.log"
  "$BIN/gemmgen" print --schedule v8 --m 2000 --n 3000 --k 1000 >"$tmp/v8.sched" && echo "split_k 3 stream" >>"$tmp/v8.sched"
  sanitize_run streamk_v8 --schedule-file "$tmp/v8.sched"
fi

if has splitk; then
  # auto's plan against the same plan with every tile split (split_k 2 and 4), for shapes where the
  # model's gate does not offer split-K: the FP8 decode shapes of few tiles and the bf16 decode
  # batches. SPLITK_SHAPES: "DTYPE M N K" separated by ';'.
  tmp=${TMPDIR:-/tmp}/splitk
  mkdir -p "$tmp"
  IFS=';' read -ra splitk_shapes <<<"${SPLITK_SHAPES-e4m3 64 7168 16384;e4m3 128 7168 16384;e4m3 64 24576 1536;bf16 128 8192 8192;bf16 256 8192 8192;bf16 1024 1024 4096}"
  for shape in "${splitk_shapes[@]}"; do
    set -- $shape
    "$BIN/gemmgen" print --schedule auto --dtype $1 --m $2 --n $3 --k $4 | grep -v '^split_k' >"$tmp/auto.sched"
    time_variants "splitk $1 $2x$3x$4" "$tmp/auto.sched" ${SPLITK_REPS:-30} none "split_k 2" "split_k 4"
  done 2>&1 | tee "$OUT/splitk.log"
fi

if has mid; then
  # auto over benchmarks/mid_shapes.txt (MID_SHAPES), each against cuBLAS in its own process; with
  # OLD_GEMMGEN (an earlier build, e.g. BIN_DIR/gemmgen_old), that build's auto too, alternating,
  # where the two plans differ. MID_ROUNDS rounds (default 2).
  mid_run() { echo "$1 $2 $3 $4 $5 $(timeout 120 "$2" run --schedule auto --m $3 --n $4 --k $5 --bench --reps ${MID_REPS:-30} --json 2>&1 | tail -1)"; }
  for round in $(seq 1 ${MID_ROUNDS:-2}); do
    grep -v '^#' "${MID_SHAPES:-benchmarks/mid_shapes.txt}" | while read -r m n k _; do
      [ -n "$k" ] || continue
      if [ -n "${OLD_GEMMGEN:-}" ] && [ "$("$OLD_GEMMGEN" print --schedule auto --m $m --n $n --k $k | md5sum)" != \
           "$("$BIN/gemmgen" print --schedule auto --m $m --n $n --k $k | md5sum)" ]; then
        mid_run "r$round old" "$OLD_GEMMGEN" $m $n $k
        mid_run "r$round new" "$BIN/gemmgen" $m $n $k
      elif [ "$round" = 1 ]; then
        mid_run "r$round same" "$BIN/gemmgen" $m $n $k
      fi
    done
  done 2>&1 | tee "$OUT/mid.log"
fi

if has cublas_kernels; then
  # The kernels cuBLAS runs on the mid-size shapes (name: tile, stages, cluster; grid; time under
  # Nsight Compute's locked clocks), from our bench processes' cuBLAS calls.
  ncu_bin=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  grep -v '^#' "${MID_SHAPES:-benchmarks/mid_shapes.txt}" | while read -r m n k _; do
    [ -n "$k" ] || continue
    echo "=== ${m}x${n}x${k}"
    timeout 120 "$ncu_bin" --target-processes all --kernel-name-base demangled \
      --kernel-name 'regex:^(?!gg_).*(gemm|xmma|sm90|cutlass)' --launch-skip 3 --launch-count 1 \
      --metrics gpu__time_duration.sum,launch__grid_size,launch__cluster_dim_x,launch__registers_per_thread \
      "$BIN/gemmgen" run --schedule auto --m $m --n $n --k $k --bench --reps 3 2>&1 |
      grep -E '^\s+[a-zA-Z_].*\(|gpu__time|launch__'
  done 2>&1 | tee "$OUT/cublas_kernels.log"
fi

if has f32; then
  # An f32 output's error grows with K in one fp32 chain (the tensor cores truncate); auto promotes
  # where K > 4096 or the output is small, and keeps one chain (as cuBLAS does) elsewhere.
  for shape in "1024 1024 1024" "1024 1024 16384" "4096 4096 16384" "1530 1500 2040" "64 4096 8192" "1 4096 4096" \
               "2048 2048 2048" "3001 5003 2040" "4097 4095 4096" "8191 8191 4096" "2816 2816 3000"; do
    set -- $shape
    for dtype in bf16 f16; do
      echo "f32 $dtype $1x$2x$3 $(timeout 120 "$BIN/gemmgen" run --schedule auto --m $1 --n $2 --k $3 --dtype $dtype \
        --out-dtype f32 --json 2>&1 | tail -1)"
    done
  done 2>&1 | tee "$OUT/f32.log"
fi
