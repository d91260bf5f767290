"""Row 16, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

slice with negative axes slices nothing: axes=[-4, -3, -2] on x [3, 4, 5, 6] with
starts [1, 0, 2], ends [3, 3, 4] returns x unchanged ([3, 4, 5, 6]) where axes [0, 1, 2]
give [2, 3, 2, 6]. paddle.slice documents a negative axis as rank + axis.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
xs = np.arange(3 * 4 * 5 * 6, dtype="float64").reshape(3, 4, 5, 6)
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[3, 4, 5, 6], dtype="float64")
out = block.create_var(name="out", dtype="float64")
block.append_op(type="slice", inputs={"Input": [x]}, outputs={"Out": [out]},
                attrs={"axes": [-4, -3, -2], "starts": [1, 0, 2], "ends": [3, 3, 4]})
exe = paddle.static.Executor(paddle.CPUPlace())
got = exe.run(main, feed={"x": xs}, fetch_list=["out"])[0]
want = xs[1:3, 0:3, 2:4, :]
if got.shape != want.shape or not np.array_equal(got, want):
    print(f"STILL SHOWS: slice(axes=[-4, -3, -2]) gives shape {list(got.shape)}, expected "
          f"{list(want.shape)} (x[1:3, 0:3, 2:4])")
    sys.exit(1)
print("FIXED: slice takes negative axes")
