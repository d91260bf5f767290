#!/usr/bin/env bash
# Judges every aten op of opkit_torch/optests end to end, one `opkit test` each (the
# "Findings on aten ops" table of docs/torch.md): JSON reports into DIR (default
# ./torch-findings), an op already there is skipped (re-run it by deleting its file).
#     tests/torch_backend/judge_aten_ops.sh [DIR]
set -u
cd "$(dirname "$0")/../.."
out=${1:-torch-findings}
mkdir -p "$out"
export OMP_NUM_THREADS=1
for op in $(grep -rhoE '"aten::[A-Za-z0-9_.]+"' opkit_torch/optests/*.py | tr -d '"' | sort -u); do
  [ -s "$out/$op.json" ] && continue
  opkit test "$op" --backend torch --tests opkit_torch/optests --seed 2024 --format json \
    --jobs 2 > "$out/$op.json" 2> "$out/$op.err"
  echo "$op: exit $?"
done
