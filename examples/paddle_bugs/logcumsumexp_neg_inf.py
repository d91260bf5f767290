"""Row 42, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.logcumsumexp gives the lowest finite value where the result is -inf.

x = [-inf, -inf, 0]. Expected: [-inf, -inf, 0]: log(exp(-inf)) = log(0) = -inf, by the
docstring's formula log(sum(exp(x_j))); torch.logcumsumexp gives -inf, and Paddle's own
logcumsumexp([-inf]) gives -inf. Actual: [-3.4e38, -3.4e38, 0] in float32 (-1.8e308 in
float64): the running value starts from the dtype's lowest finite number.
"""
import sys

import numpy as np
import paddle

shown = []
for dtype in ("float32", "float64"):
    got = paddle.logcumsumexp(paddle.to_tensor(np.array([-np.inf, -np.inf, 0.0], dtype))).numpy()
    if not np.isneginf(got[:2]).all():
        shown.append(f"{dtype} {got.tolist()}")
single = paddle.logcumsumexp(paddle.to_tensor([-np.inf])).numpy().tolist()
if shown:
    print(f"STILL SHOWS: paddle.logcumsumexp([-inf, -inf, 0]) = {'; '.join(shown)} (expected "
          f"[-inf, -inf, 0.0]; logcumsumexp([-inf]) gives {single})")
    sys.exit(1)
print("FIXED: paddle.logcumsumexp keeps -inf")
