#!/usr/bin/env bash
# A small lit: runs every `RUN:` line of a .test file with %s (the file), %S (its folder),
# %gemmgen, %FileCheck, %nvcc, %not and %t (a scratch path) substituted. A `REQUIRES: nvcc`
# line skips (exit 77) when nvcc is missing.
#
#   run_test.sh TEST GEMMGEN FILECHECK [NVCC]
# NVCC defaults to the nvcc on PATH, then $CUDACXX, then /usr/local/cuda/bin/nvcc.
#
# `%not CMD` succeeds when CMD fails; `%not --code N CMD` when it exits with N exactly.
# Its output passes through, so `%not --code 2 %gemmgen ... 2>&1 | %FileCheck %s` checks
# both the exit code and the message.
set -euo pipefail
test_file=$1 gemmgen=$2 filecheck=$3 nvcc=${4:-}
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
  nvcc=$(command -v nvcc || true)
  for candidate in "${CUDACXX:-}" /usr/local/cuda/bin/nvcc; do
    if [ -z "$nvcc" ] && [ -n "$candidate" ] && [ -x "$candidate" ]; then nvcc=$candidate; fi
  done
fi
if grep -q 'REQUIRES: nvcc' "$test_file" && [ -z "$nvcc" ]; then
  echo "skipped: nvcc not found"; exit 77
fi
not_helper=$scratch/not
cat >"$not_helper" <<'EOF'
#!/usr/bin/env bash
want=""
if [ "${1:-}" = "--code" ]; then want=$2; shift 2; fi
rc=0
"$@" || rc=$?
if [ "$rc" -eq 0 ]; then echo "not: '$*' succeeded" >&2; exit 1; fi
if [ -n "$want" ] && [ "$rc" -ne "$want" ]; then echo "not: '$*' exited $rc, expected $want" >&2; exit 1; fi
exit 0
EOF
chmod +x "$not_helper"
test_dir=$(cd "$(dirname "$test_file")" && pwd)
test_file=$test_dir/$(basename "$test_file")
status=0
while IFS= read -r line; do
  cmd=${line#*RUN: }
  cmd=${cmd//%gemmgen/$gemmgen}
  cmd=${cmd//%FileCheck/$filecheck}
  cmd=${cmd//%nvcc/$nvcc}
  cmd=${cmd//%not/$not_helper}
  cmd=${cmd//%s/$test_file}
  cmd=${cmd//%S/$test_dir}
  cmd=${cmd//%t/$scratch/t}
  echo "RUN: $cmd"
  if ! bash -o pipefail -c "$cmd"; then status=1; fi
done < <(grep 'RUN: ' "$test_file")
exit $status
