#!/usr/bin/env bash
# Judges torchvision's ops end to end, one `opkit test` per op and seed (the "torchvision"
# tables of docs/torch.md): JSON reports into DIR (default ./torchvision-findings); an
# op/seed already there is skipped (re-run it by deleting its file). Needs a python whose
# torch imports torchvision (docs/torch.md, "A torchvision-capable venv here"):
#     OPKIT=/work/tvenv/bin/opkit tests/torch_backend/judge_torchvision_ops.sh [DIR]
set -u
cd "$(dirname "$0")/../.."
out=${1:-torchvision-findings}
opkit=${OPKIT:-opkit}
mkdir -p "$out"
export OMP_NUM_THREADS=1
for seed in 1 2; do
  for op in roi_align roi_pool ps_roi_align ps_roi_pool nms deform_conv2d _roi_align_backward \
      _ps_roi_pool_backward; do
    f="$out/${op}_$seed.json"
    [ -s "$f" ] && continue
    "$opkit" test "torchvision::$op" --backend torch --tests opkit_torch/vision_optests \
      --seed "$seed" --format json --jobs 2 > "$f" 2> "$out/${op}_$seed.err"
    echo "$op seed $seed: exit $?"
  done
done
