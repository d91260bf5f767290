"""torchvision.ops.roi_align kills the process (SIGSEGV) on a feature map of height or
width 0, where roi_pool, ps_roi_align and ps_roi_pool return zeros for the same box.

A valid box (0 <= x1 < x2, 0 <= y1 < y2, batch index 0 of N = 1) on an input of shape
[1, C, 0, W] or [1, C, H, 0]: no sample point lies on the (empty) map, so the pooled values
are zeros, as the sibling ops give, or a refusal; the CPU kernel of roi_align instead reads
outside the input (its interpolation clamps a sample onto row `height - 1` = -1).

Grade: crash on invalid (degenerate) input, in the public API: a segmentation fault, not
an error. Found by opkit's `empty` check on the torch backend (docs/torch.md,
"torchvision"): the input's height made 0.

Each call runs in a child process (the crash would end this one). Prints STILL SHOWS
(roi_align crashes) or FIXED (it returns or raises).
"""
import subprocess
import sys

CALLS = {
    "roi_align": "ops.roi_align(x, boxes, 2, 1.0, 2, False)",
    "roi_align (aligned)": "ops.roi_align(x, boxes, 2, 1.0, -1, True)",
    "roi_pool": "ops.roi_pool(x, boxes, 2, 1.0)",
    "ps_roi_align": "ops.ps_roi_align(x, boxes, 2, 1.0, 2)",
    "ps_roi_pool": "ops.ps_roi_pool(x, boxes, 2, 1.0)",
}
CHILD = """
import torch
from torchvision import ops
x = torch.rand({shape}, dtype=torch.float64)
boxes = torch.tensor([[0, 1.0, 1.0, 5.0, 5.0]], dtype=torch.float64)
try:
    print("returns", tuple({call}.shape))
except Exception as exc:
    print("raises", type(exc).__name__)
"""


def run(call, shape):
    p = subprocess.run([sys.executable, "-c", CHILD.format(call=call, shape=shape)],
                       capture_output=True, text=True, timeout=300)
    if p.returncode < 0:
        return f"killed by signal {-p.returncode}", True
    if p.returncode != 0:
        return f"exit {p.returncode}: {(p.stderr.strip().splitlines() or [''])[-1]}", False
    return p.stdout.strip(), False


crashed = False
for shape in ((1, 4, 0, 8), (1, 4, 8, 0)):
    for name, call in CALLS.items():
        text, died = run(call, shape)
        crashed |= died and name.startswith("roi_align")
        print(f"input {shape}: {name:20s} {text}")
print("STILL SHOWS" if crashed else "FIXED")
