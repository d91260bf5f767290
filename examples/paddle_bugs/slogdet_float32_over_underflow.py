"""Row 54, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.linalg.slogdet in float32 overflows and underflows like det itself: for
diag(1e-30 x 5) it gives sign 0, log|det| -inf; for diag(1e30, 1e30, 1, 1, 1) log|det| inf.

Expected: sign 1, log|det| = 5 log(1e-30) = -345.39, and 2 log(1e30) = 138.16 (numpy's
and torch's linalg.slogdet in float32 give these; slogdet exists to give log|det| where
det is out of the dtype's range: Paddle's docstring, "the natural logarithm of the absolute
value of ... determinant"). Actual: the determinant is formed first and its log taken, so
any |det| beyond float32's range (1e-45 .. 3.4e38) comes out as -inf / inf with sign 0 / 1.
"""
import sys

import numpy as np
import paddle

wrong = []
for diag, want in (([1e-30] * 5, -345.3878), ([1e30, 1e30, 1, 1, 1], 138.1551)):
    got = paddle.linalg.slogdet(paddle.to_tensor(np.diag(np.array(diag, "float32"))))
    sign, logabs = (float(v) for v in got.numpy().ravel())
    if not (sign == 1.0 and abs(logabs - want) < 1e-3 * abs(want)):
        wrong.append(f"diag({diag[0]:g}, ...): sign {sign}, log|det| {logabs} (expected 1, "
                     f"{want})")
if wrong:
    print("STILL SHOWS: paddle.linalg.slogdet float32: " + "; ".join(wrong))
    sys.exit(1)
print("FIXED: paddle.linalg.slogdet float32 gives log|det| beyond float32's range")
