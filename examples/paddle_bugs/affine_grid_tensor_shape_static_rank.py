"""Row 58, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.affine_grid(theta, out_shape) with out_shape a Tensor, in a static
program (PIR, the default): theta [20, 2, 3] (a 2-D affine transform) gives a Value declared
[20, -1, -1, -1, 3] -- the rank and last dim of a 3-D grid -- while the kernel returns
[20, 5, 7, 2].

Expected: [20, -1, -1, 2] (theta's [N, 2, 3] says 2-D: the grid is [N, H, W, 2], as Paddle's
docstring and the kernel give; only H and W are unknown until out_shape's values are).
Actual: [20, -1, -1, -1, 3]; ops built on the output see a wrong rank.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    theta = paddle.static.data("theta", [20, 2, 3], "float32")
    out_shape = paddle.static.data("out_shape", [4], "int32")
    grid = F.affine_grid(theta, out_shape, align_corners=False)
    declared = list(grid.shape)
exe = paddle.static.Executor(paddle.CPUPlace())
got, = exe.run(main, feed={"theta": np.zeros((20, 2, 3), "float32"),
                           "out_shape": np.array([20, 1, 5, 7], "int32")}, fetch_list=[grid])
if len(declared) != got.ndim or declared[-1] != got.shape[-1]:
    print(f"STILL SHOWS: F.affine_grid(theta [20, 2, 3], out_shape tensor) is declared "
          f"{declared}, the kernel gives {list(got.shape)}")
    sys.exit(1)
print(f"FIXED: F.affine_grid with a tensor out_shape is declared {declared}, run "
      f"{list(got.shape)}")
