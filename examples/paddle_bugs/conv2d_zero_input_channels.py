"""Row 48, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.conv2d with 0 input channels (x [2, 0, 5, 5], weight [3, 0, 3, 3]):
the output is [2, 0, 3, 3], at compile time (the static program's shape) and at run time.

A sum over 0 input channels is 0, so [2, 3, 3, 3] zeros would be the arithmetic answer
(Paddle's own conv2d_transpose with 0 input channels gives zeros of the full shape), but
torch.nn.functional.conv2d (2.13) gives the same [2, 0, 3, 3]: shared with PyTorch, and the
compile-time shape agrees with the kernel. Not counted as a bug.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

y = F.conv2d(paddle.to_tensor(np.zeros((2, 0, 5, 5), "float32")),
             paddle.to_tensor(np.ones((3, 0, 3, 3), "float32")))
if list(y.shape) == [2, 0, 3, 3]:
    print("STILL SHOWS: conv2d with 0 input channels gives shape [2, 0, 3, 3] (as torch "
          "2.13 does; the arithmetic answer would be zeros of [2, 3, 3, 3])")
    sys.exit(1)
print(f"FIXED: conv2d with 0 input channels gives shape {list(y.shape)}")
