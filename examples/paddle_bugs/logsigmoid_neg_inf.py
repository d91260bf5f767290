"""Row 5, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.log_sigmoid(-inf) is NaN.

Expected: -inf, the limit of -log(1 + exp(-x)) as x -> -inf (torch.nn.functional.logsigmoid
gives -inf). Actual: NaN (the stable form min(x, 0) - log(exp(-max) + exp(x - max))
evaluates inf - inf at x = -inf).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

got = F.log_sigmoid(paddle.to_tensor(np.array([-np.inf, 0.0, 1.0]))).numpy()
if not np.isneginf(got[0]):
    print(f"STILL SHOWS: F.log_sigmoid(-inf) = {got[0]} (expected -inf, the limit)")
    sys.exit(1)
print("FIXED: F.log_sigmoid(-inf) is -inf")
