"""Row 40, graded NOT A BUG: float16 paddle.scale and inference-mode dropout round twice.

paddle.scale(x, 1.5, bias=0.3) on float16 rounds scale * x to float16 before adding the bias
(up to 1.6 float16 ulp from the exact value), and F.dropout(..., training=False,
mode="downscale_in_infer") rounds (1 - p) to float16 before the multiply. That is ordinary
float16 arithmetic: numpy's float16 x * 1.5 + 0.3 rounds twice the same way, and PyTorch's
x * 1.5 + 0.3 on half tensors gives the same 1.6 ulp (torch 2.13 CPU). Neither Paddle's docs
nor PyTorch's promise one rounding for a fused float16 op: opkit's half-ulp law is stricter
than anyone's contract. STILL SHOWS while Paddle's float16 results equal numpy's float16
two-step arithmetic; FIXED if Paddle rounds once (re-grade the row then).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

x = np.random.default_rng(0).uniform(-3, 3, (20, 10)).astype(np.float16)
exact = x.astype(np.float64) * 1.5 + np.float64(np.float32(0.3))
got = paddle.scale(paddle.to_tensor(x), 1.5, 0.3).numpy()
ulp = np.spacing(np.abs(got)).astype(np.float64)
worst = float(np.max(np.abs(got.astype(np.float64) - exact) / ulp))
two_step = (x * np.float16(1.5)) + np.float16(0.3)           # numpy's float16 arithmetic
drop = F.dropout(paddle.to_tensor(x), 0.35, training=False, mode="downscale_in_infer").numpy()
if worst > 0.5 and np.array_equal(got, two_step):
    print(f"STILL SHOWS: float16 paddle.scale(x, 1.5, 0.3) is up to {worst:.2f} ulp from the "
          f"exact value and equals numpy's float16 x*1.5+0.3 (two roundings): not a bug; "
          f"dropout(inference) equals x*float16(0.65): "
          f"{bool(np.array_equal(drop, x * np.float16(0.65)))}")
    sys.exit(1)
print(f"FIXED: float16 paddle.scale changed ({worst:.2f} ulp worst); re-grade row 40")
