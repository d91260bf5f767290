"""Row 14, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

split with a negative axis: paddle.split documents axis < 0 as rank + axis, but the
legacy `split` op refuses axis=-1 at compile time for some inputs ("Invalid DDim index ...
received index is -1") and, for others, splits along the wrong axis (wrong values, no error).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
xs = np.arange(4 * 5 * 6, dtype="float64").reshape(4, 5, 6)
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[4, 5, 6], dtype="float64")
outs = [block.create_var(name=f"out{i}", dtype="float64") for i in range(3)]
problem = None
try:
    block.append_op(type="split", inputs={"X": [x]}, outputs={"Out": outs},
                    attrs={"axis": -1, "num": 3})
    exe = paddle.static.Executor(paddle.CPUPlace())
    got = exe.run(main, feed={"x": xs}, fetch_list=[o.name for o in outs])
    want = np.split(xs, 3, axis=-1)
    if any(g.shape != w.shape or not np.array_equal(g, w) for g, w in zip(got, want)):
        problem = (f"gives shapes {[list(g.shape) for g in got]} / other values than "
                   f"np.split(x, 3, axis=-1) (shapes {[list(w.shape) for w in want]})")
except ValueError as exc:
    lines = [ln.strip() for ln in str(exc).splitlines() if "Error" in ln or "(Invalid" in ln]
    problem = "is refused: " + (lines[-1] if lines else str(exc).strip())[:110]
if problem:
    print(f"STILL SHOWS: split(x[4, 5, 6], num=3, axis=-1) {problem}")
    sys.exit(1)
print("FIXED: split takes axis=-1 as the last axis")
