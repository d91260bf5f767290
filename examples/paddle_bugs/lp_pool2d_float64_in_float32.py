"""Row 39, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.lp_pool2d in float64 computes in float32.

Expected: float64 precision - numpy's float64 L2 norm of each window. Actual: every output
is exactly float32-representable and off by ~1e-8 relative; the gradient has float32
precision too. Paddle's own OpTest exempts lp_pool2d from its float64 gradient threshold
(NEED_FIX_FP64_CHECK_GRAD_THRESHOLD_OP_LIST in test/white_list/op_threshold_white_list.py).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

x = np.random.default_rng(0).uniform(0.1, 1.0, (1, 2, 4, 4))
got = F.lp_pool2d(paddle.to_tensor(x), norm_type=2, kernel_size=2, stride=2).numpy()
want = np.sqrt((x.reshape(1, 2, 2, 2, 2, 2) ** 2).sum(axis=(3, 5)))   # float64
rel = float(np.max(np.abs(got - want) / want))
in_f32 = bool(np.all(got.astype(np.float32).astype(np.float64) == got))
if got.dtype == np.float64 and (rel > 1e-12 or in_f32):
    print(f"STILL SHOWS: float64 F.lp_pool2d is {rel:.1e} off numpy's float64 L2 norm "
          f"(expected ~1e-16); every output float32-representable: {in_f32}")
    sys.exit(1)
print(f"FIXED: float64 F.lp_pool2d has float64 precision ({rel:.1e})")
