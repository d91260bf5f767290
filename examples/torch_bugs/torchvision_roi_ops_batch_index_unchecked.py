"""torchvision's RoI ops read outside the input for a box whose batch index is not in
[0, N - 1]: no check, no error; the values come from whatever memory follows the input
(or the process dies).

The documentation says the first column of a [K, 5] boxes tensor is "the index of the
corresponding element in the batch, i.e. a number in [0, N - 1]"; the CPU kernels use it
as `input + (roi_batch_ind * channels + c) * height * width` unchecked. An index past the
batch (N = 1, index 1 or 3) or an empty batch (N = 0) is an invalid input that the ops
should refuse; they return values read out of bounds instead, or crash. ONNX Runtime
fixed the same unchecked read in its RoiAlign as a heap out-of-bounds read
(microsoft/onnxruntime#27543).

Grade: crash on invalid input (memory-unsafe: an out-of-bounds read, no refusal), in the
public API (torchvision.ops.roi_align, roi_pool, ps_roi_align, ps_roi_pool). Found by
opkit's `empty` and `fuzz` checks on the torch backend (docs/torch.md, "torchvision"): the
input's batch made 0 with the boxes kept.

Each call runs in a child process. Prints STILL SHOWS (some op neither refuses nor stays
in bounds) or FIXED (every op refuses the index).
"""
import subprocess
import sys

CALLS = {
    "roi_align": "ops.roi_align(x, boxes, 2, 1.0, 2, False)",
    "roi_pool": "ops.roi_pool(x, boxes, 2, 1.0)",
    "ps_roi_align": "ops.ps_roi_align(x, boxes, 2, 1.0, 2)",
    "ps_roi_pool": "ops.ps_roi_pool(x, boxes, 2, 1.0)",
}
CHILD = """
import torch
from torchvision import ops
x = torch.ones({shape}, dtype=torch.float64)      # every in-bounds value is 1
boxes = torch.tensor([[{index}, 1.0, 1.0, 5.0, 5.0]], dtype=torch.float64)
try:
    out = {call}
    out = out[0] if isinstance(out, tuple) else out
    print("returns", out.flatten()[:2].tolist())
except Exception as exc:
    print("refuses:", str(exc).strip().splitlines()[-1][:80])
"""


def run(call, shape, index):
    p = subprocess.run([sys.executable, "-c", CHILD.format(call=call, shape=shape,
                                                           index=index)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode < 0:
        return f"killed by signal {-p.returncode}", False
    if p.returncode != 0:
        return f"exit {p.returncode}", False
    out = p.stdout.strip()
    return out, out.startswith("refuses")


shows = False
for shape, index in (((1, 4, 8, 8), 1), ((1, 4, 8, 8), 3), ((0, 4, 8, 8), 0)):
    for name, call in CALLS.items():
        text, refused = run(call, shape, index)
        shows |= not refused
        print(f"N={shape[0]}, batch index {index}: {name:13s} {text}")
print("STILL SHOWS" if shows else "FIXED")
