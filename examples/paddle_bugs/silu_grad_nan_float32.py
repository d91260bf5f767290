"""Row 3, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.silu: the float32 gradient is NaN at x = -100.

Expected: d/dx x*sigmoid(x) = sigmoid(x) * (1 + x * (1 - sigmoid(x))), about -3.7e-42 at
x = -100 (a float64 computation; 0 or a subnormal in float32) - finite. Paddle's own float64
kernel gives a finite value. Actual: NaN (the float32 grad functor evaluates
x * exp(-x) / (1 + exp(-x)) = inf / inf once exp(-x) overflows float32).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

xs = np.array([-100.0, -30.0, 0.5])
x = paddle.to_tensor(xs.astype("float32"), stop_gradient=False)
F.silu(x).sum().backward()
got = x.grad.numpy()
s = 1.0 / (1.0 + np.exp(-xs))
want = s * (1.0 + xs * (1.0 - s))                      # float64
if not np.isfinite(got).all():
    print(f"STILL SHOWS: F.silu's float32 gradient at x = {xs.tolist()} is {got.tolist()} "
          f"(expected {want.tolist()} from the float64 formula: finite)")
    sys.exit(1)
print("FIXED: F.silu's float32 gradient is finite at x = -100")
