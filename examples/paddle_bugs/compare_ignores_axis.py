"""Row 8, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

less_than (and the other compare ops) ignore their `axis` attr: the legacy proto declares
Fluid's broadcast of Y along X's dims from `axis`, the kernel uses trailing (numpy)
broadcasting only, so X [6, 7] < Y [6] with axis=0 is refused instead of comparing row-wise.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[6, 7], dtype="float64")
y = block.create_var(name="y", shape=[6], dtype="float64")
out = block.create_var(name="out", dtype="bool")
xs, ys = np.arange(42.0).reshape(6, 7), np.arange(6.0) * 7 + 3
try:
    block.append_op(type="less_than", inputs={"X": [x], "Y": [y]}, outputs={"Out": [out]},
                    attrs={"axis": 0})
    exe = paddle.static.Executor(paddle.CPUPlace())
    got = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=["out"])[0]
    ok = np.array_equal(got, xs < ys[:, None])
    detail = "a wrong result"
except ValueError as exc:
    ok, detail = False, "refused: " + str(exc).strip().splitlines()[0][:100]
if not ok:
    print(f"STILL SHOWS: less_than(X[6,7], Y[6], axis=0) {detail}; expected X < Y[:, None]")
    sys.exit(1)
print("FIXED: less_than broadcasts Y from axis 0")
