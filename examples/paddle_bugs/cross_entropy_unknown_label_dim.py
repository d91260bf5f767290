"""Row 9, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

cross_entropy's compile-time infer_shape refuses a Label whose last dim is unknown (-1):
"the last dimension of Input(Label) should be 1. But received -1". An unknown dim at compile
time must be accepted and checked at run time (a program built with paddle.static.data and
shape [None, None] is legal; the run-time check still catches a wrong size).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import paddle  # noqa: E402

paddle.enable_static()
block = paddle.static.Program().global_block()
x = block.create_var(name="x", shape=[4, 10], dtype="float64")
label = block.create_var(name="label", shape=[4, -1], dtype="int64")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="cross_entropy", inputs={"X": [x], "Label": [label]},
                    outputs={"Y": [out]}, attrs={"soft_label": False})
except ValueError as exc:
    print("STILL SHOWS: cross_entropy refuses Label shape [4, -1] at compile time: "
          + str(exc).strip().splitlines()[0][:120])
    sys.exit(1)
print(f"FIXED: cross_entropy accepts an unknown Label dim (Y {list(out.shape)})")
