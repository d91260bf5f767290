"""Row 55, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.linalg.slogdet in a static program declares its output with the input's shape: x
declared [4, 5, 5] gives a Value of shape [4, 5, 5]; the kernel returns [2, 4] (sign and
log|det| of each of the 4 matrices), in the default static graph (PIR) and the legacy one.

Expected: [2, 4] (Paddle's docstring: "the shape is (2, *)", and the dynamic graph's
result). Actual: [4, 5, 5] at compile time; ops built on the output see a wrong rank.
"""
import sys

import numpy as np
import paddle

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [4, 5, 5], "float32")
    out = paddle.linalg.slogdet(x)
    declared = list(out.shape)
exe = paddle.static.Executor(paddle.CPUPlace())
got, = exe.run(main, feed={"x": np.eye(5, dtype="float32")[None].repeat(4, 0)},
               fetch_list=[out])
if declared != list(got.shape):
    print(f"STILL SHOWS: paddle.linalg.slogdet(x [4, 5, 5]) is declared {declared}, the "
          f"kernel gives {list(got.shape)}")
    sys.exit(1)
print(f"FIXED: paddle.linalg.slogdet(x [4, 5, 5]) is declared {declared}, as run")
