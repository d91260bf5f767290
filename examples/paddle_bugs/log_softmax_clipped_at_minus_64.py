"""Row 45, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.log_softmax on CPU never goes below -64: log_softmax([100, 0]) is
[0, -64], float32 and float64 alike.

Expected: [0, -100] (Paddle's docstring: log_softmax(x)_i = log(exp(x_i) / sum_j exp(x_j));
in float64 log(1 + e^-100) is 3.7e-44, so the second value is -100 to every digit;
torch.log_softmax gives -100). Actual: -64. The CPU softmax functor clips x - max(x) at
-64 (`ValueClip`, kThreshold = -64, in Paddle since 2018) before taking exp; for softmax
that moves a probability under 1.6e-28 only, but log_softmax takes the log of the clipped
value, so every log-probability under -64 comes out as -64 (an NLL loss built on it
saturates at 64).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

wrong = []
for dtype in ("float32", "float64"):
    got = F.log_softmax(paddle.to_tensor(np.array([100.0, 0.0], dtype))).numpy()
    if abs(float(got[1]) - (-100.0)) > 1e-3:
        wrong.append(f"{dtype}: log_softmax([100, 0]) = {got.tolist()}")
if wrong:
    print("STILL SHOWS: " + "; ".join(wrong) + " (expected [0, -100])")
    sys.exit(1)
print("FIXED: F.log_softmax([100, 0]) is [0, -100] in float32 and float64")
