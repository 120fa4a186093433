#!/usr/bin/env bash
# A small lit: runs every `RUN:` line of a .test file with %s (the file), %gemmgen,
# %FileCheck and %t (a scratch path) substituted. A `REQUIRES: nvcc` line skips (exit 77)
# when nvcc is missing.
set -euo pipefail
test_file=$1 gemmgen=$2 filecheck=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
if grep -q 'REQUIRES: nvcc' "$test_file" && ! command -v nvcc >/dev/null; then
  echo "skipped: nvcc not found"; exit 77
fi
status=0
while IFS= read -r line; do
  cmd=${line#*RUN: }
  cmd=${cmd//%gemmgen/$gemmgen}
  cmd=${cmd//%FileCheck/$filecheck}
  cmd=${cmd//%s/$test_file}
  cmd=${cmd//%t/$scratch/t}
  echo "RUN: $cmd"
  if ! bash -o pipefail -c "$cmd"; then status=1; fi
done < <(grep 'RUN: ' "$test_file")
exit $status
