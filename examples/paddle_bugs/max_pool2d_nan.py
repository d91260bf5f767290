"""Row 6, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.max_pool2d drops a NaN unless it is the window's last element.

One 2x2 window [1, 2, 3, 4] with NaN put at each position in turn. Expected: NaN each time
(numpy.max and torch.nn.functional.max_pool2d propagate NaN). Actual: 4, 4, 4, NaN - the
result depends on where the NaN sits (the kernel's `if (x > max) max = x` never takes NaN).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

got = []
for pos in range(4):
    a = np.array([1.0, 2.0, 3.0, 4.0])
    a[pos] = np.nan
    got.append(float(F.max_pool2d(paddle.to_tensor(a.reshape(1, 1, 2, 2)), 2, 2).numpy()
                     .ravel()[0]))
if not np.isnan(got).all():
    print(f"STILL SHOWS: F.max_pool2d over [1, 2, 3, 4] with NaN at position 0..3 gives "
          f"{got} (expected NaN each time, as numpy.max)")
    sys.exit(1)
print("FIXED: F.max_pool2d propagates NaN wherever it sits")
