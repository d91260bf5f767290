"""Row 49, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.dist(x, y) (p = 2, float32) is inf where the distance is finite: it sums |x - y|^p
before taking the p-th root, and the sum overflows float32.

Expected: 2e20 for x = [1e20], y = [-1e20] (the distance |x - y|, finite in float32 whose
largest value is 3.4e38; Paddle's own float64 kernel and torch.dist give it). Actual: inf.
The same class of bug is Paddle's tracker's PR #74448 (dist / normalize in float16);
float32 shows it from |x - y| of about 1.8e19 on.
"""
import sys

import numpy as np
import paddle

x = paddle.to_tensor(np.array([1e20], "float32"))
y = paddle.to_tensor(np.array([-1e20], "float32"))
got = float(paddle.dist(x, y, p=2).numpy())
if not np.isfinite(got):
    print(f"STILL SHOWS: paddle.dist([1e20], [-1e20]) in float32 is {got} (expected 2e20)")
    sys.exit(1)
print(f"FIXED: paddle.dist([1e20], [-1e20]) in float32 is {got:g}")
