"""Row 23, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

mul's compile-time infer_shape refuses an unknown (-1) inner dimension: X [6, 12] times
Y [-1, 9] is refused with "X1's width must be equal with matrix Y1's height ... Y1's
height = -1", and so is X [6, -1] times Y [12, 9]; after flattening ([3, 4, -1, 5] with
x_num_col_dims=2) the unknown dim is multiplied in as if it were a size. An unknown dim at
compile time must be accepted and checked at run time (as rows 9 and 10 of the table;
matmul_v2 accepts it). A program built with paddle.static.data(shape=[None, 9]) is legal.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import paddle  # noqa: E402

paddle.enable_static()
block = paddle.static.Program().global_block()
x = block.create_var(name="x", shape=[6, 12], dtype="float64")
y = block.create_var(name="y", shape=[-1, 9], dtype="float64")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="mul", inputs={"X": [x], "Y": [y]}, outputs={"Out": [out]},
                    attrs={"x_num_col_dims": 1, "y_num_col_dims": 1})
except ValueError as exc:
    line = next((ln for ln in str(exc).splitlines() if "InvalidArgument" in ln), str(exc))
    print("STILL SHOWS: mul refuses Y shape [-1, 9] at compile time: " + line.strip()[:160])
    sys.exit(1)
print(f"FIXED: mul accepts an unknown inner dim (Out {list(out.shape)})")
