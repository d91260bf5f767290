"""Row 43, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.cumsum / paddle.logcumsumexp with axis=None in a static program: the result's
compile-time shape is [-10] for an input of shape [-1, 10].

Expected: [-1] (the flattened size is unknown; Paddle's -1 means unknown, and at run time
the result has 10 * batch elements). Actual: [-10] - the infer-meta multiplies the unknown
-1 into the product, giving a negative size that is neither a size nor "unknown".
"""
import sys

import numpy as np
import paddle

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    d = paddle.static.data("d", [-1, 10], "float32")
    shapes = {"cumsum": paddle.cumsum(d), "logcumsumexp": paddle.logcumsumexp(d)}
run = paddle.static.Executor(paddle.CPUPlace()).run(
    main, feed={"d": np.ones((3, 10), "float32")}, fetch_list=list(shapes.values()))
bad = {k: list(v.shape) for k, v in shapes.items() if list(v.shape) != [-1]}
if bad:
    print(f"STILL SHOWS: compile-time shapes {bad} for input [-1, 10] with axis=None "
          f"(expected [-1]; run-time shapes {[r.shape for r in run]})")
    sys.exit(1)
print("FIXED: cumsum / logcumsumexp over a flattened [-1, 10] have compile-time shape [-1]")
