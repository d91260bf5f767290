"""Row 26, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

pool2d accepts any string as `pooling_type` and returns garbage: with
pooling_type="maxx" (a typo) every output element is inf. The proto documents the attr as
"max" or "avg"; an unknown value must be refused (InvalidArgument), not run as neither.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
xv = block.create_var(name="x", shape=[1, 1, 4, 4], dtype="float64")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="pool2d", inputs={"X": [xv]}, outputs={"Out": [out]},
                    attrs={"pooling_type": "maxx", "ksize": [2, 2], "strides": [2, 2],
                           "paddings": [0, 0]})
    got = paddle.static.Executor(paddle.CPUPlace()).run(
        main, feed={"x": np.arange(16.0).reshape(1, 1, 4, 4)}, fetch_list=["out"])[0]
except Exception as exc:  # noqa: BLE001 - any refusal is the fix
    print("FIXED: pool2d refuses pooling_type='maxx': " + str(exc).strip().splitlines()[0][:100])
    sys.exit(0)
print(f"STILL SHOWS: pool2d with pooling_type='maxx' runs and gives {got[0, 0].tolist()} "
      f"(expected a refusal: the attr is 'max' or 'avg')")
sys.exit(1)
