"""Row 4, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.relu(NaN) is 0; relu6(NaN) in the same Paddle is NaN.

Expected: NaN. Paddle documents relu as max(0, x); numpy.maximum(x, 0) and torch.relu give
NaN (torch 2.13 checked beside Paddle 3.3.1), and Paddle's own relu6 keeps NaN. Actual:
0 - a diverged activation is silently hidden.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

xs = np.array([np.nan, -1.0, 2.0])
got = F.relu(paddle.to_tensor(xs)).numpy()
relu6 = F.relu6(paddle.to_tensor(xs)).numpy()
want = np.maximum(xs, 0.0)
if not np.isnan(got[0]):
    print(f"STILL SHOWS: F.relu(NaN) = {got[0]} (expected NaN: numpy.maximum gives "
          f"{want[0]}, and Paddle's F.relu6(NaN) gives {relu6[0]})")
    sys.exit(1)
print("FIXED: F.relu(NaN) is NaN")
