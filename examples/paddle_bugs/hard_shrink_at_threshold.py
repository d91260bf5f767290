"""Row 24, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.hardshrink(x, threshold) keeps x at x = +-threshold.

Expected: 0 at x = +-0.5 with threshold 0.5 (gradient 0 there): Paddle's own docstring says
x if x > threshold, x if x < -threshold, 0 otherwise; torch.nn.functional.hardshrink gives 0.
Actual: +-0.5 (gradient 1): the kernel tests >= / <=.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

xs = np.array([0.5, -0.5, 0.6, 0.4])
x = paddle.to_tensor(xs, stop_gradient=False)
out = F.hardshrink(x, threshold=0.5)
out.sum().backward()
got, grad = out.numpy(), x.grad.numpy()
want = np.where(np.abs(xs) > 0.5, xs, 0.0)              # the docstring's formula
if not np.array_equal(got, want):
    print(f"STILL SHOWS: F.hardshrink({xs.tolist()}, 0.5) = {got.tolist()}, gradient "
          f"{grad.tolist()} (expected {want.tolist()} from Paddle's docstring)")
    sys.exit(1)
print("FIXED: F.hardshrink is 0 at +-threshold")
