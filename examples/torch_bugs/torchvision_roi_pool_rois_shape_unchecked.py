"""torch.ops.torchvision.roi_pool takes a rois tensor of any width, where roi_align,
ps_roi_align and ps_roi_pool refuse anything but [K, 5]: its CPU forward kernel reads row
k at offset 5 * k whatever the width, so a [K, 6] tensor gives boxes made of the wrong
numbers (and a [K, 4] one reads past its end).

Grade: contract difference, at the op level: torchvision.ops.roi_pool (the public API)
checks the shape first ("The boxes tensor shape is not correct as Tensor[K, 5]"), as does
roi_pool's own backward kernel; torch.compile'd code and callers of the registered op
(`torch.ops.torchvision.roi_pool`) reach the unchecked forward. Found by opkit's
`honest_error` check on the torch backend (docs/torch.md, "torchvision"): rois tiled along
its last axis.

Prints STILL SHOWS (the op-level roi_pool accepts a [2, 6] rois tensor) or FIXED.
"""
import torch
import torchvision  # noqa: F401 - registers torch.ops.torchvision

x = torch.rand(1, 4, 8, 8, dtype=torch.float64)
rois = torch.tensor([[0, 1.0, 1.0, 5.0, 5.0, 7.0],
                     [0, 2.0, 2.0, 6.0, 6.0, 7.0]], dtype=torch.float64)   # [2, 6]
ops = torch.ops.torchvision
answers = {}
for name, call in (("roi_pool", lambda: ops.roi_pool(x, rois, 1.0, 2, 2)),
                   ("roi_align", lambda: ops.roi_align(x, rois, 1.0, 2, 2, 2, False)),
                   ("ps_roi_pool", lambda: ops.ps_roi_pool(x, rois, 1.0, 2, 2)),
                   ("ps_roi_align", lambda: ops.ps_roi_align(x, rois, 1.0, 2, 2, 2))):
    try:
        call()
        answers[name] = "accepts rois of shape [2, 6]"
    except RuntimeError as exc:
        answers[name] = "refuses: " + str(exc).strip().splitlines()[-1][:70]
    print(f"torch.ops.torchvision.{name:13s} {answers[name]}")
print("STILL SHOWS" if answers["roi_pool"].startswith("accepts") else "FIXED")
