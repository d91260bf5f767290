"""Row 28, graded CONTRACT DIFFERENCE: F.max_pool2d / F.avg_pool2d with a window larger
than the input (1x1 input, kernel 2, stride 2, no padding, ceil_mode off) give a 1x1 output
holding the clipped window's value.

By floor division the output size is floor((H - k + 2p) / s) + 1 = floor(-1/2) + 1 = 0, and
PyTorch's max_pool2d refuses ("Output size is too small", torch 2.13); Paddle's output-size
formula uses C's integer division, which truncates -1/2 to 0, a long-standing convention.
STILL SHOWS while Paddle keeps it; FIXED if it refuses or gives an empty output.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

x = paddle.to_tensor(np.array([[[[7.0]]]]))
got = {name: f(x, kernel_size=2, stride=2) for name, f in
       (("max_pool2d", F.max_pool2d), ("avg_pool2d", F.avg_pool2d))}
shapes = {k: list(v.shape) for k, v in got.items()}
if any(v.size for v in got.values()):
    print(f"STILL SHOWS: a 1x1 input with kernel 2, stride 2 gives {shapes} "
          f"({[float(v.numpy().ravel()[0]) for v in got.values()]}): Paddle truncates the "
          f"output size toward 0 where PyTorch refuses")
    sys.exit(1)
print(f"FIXED: a window larger than the input gives {shapes}")
