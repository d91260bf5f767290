"""pool2d with pooling_type='max' drops NaN: a window holding NaN gives the max of the other
values; torch.nn.functional.max_pool2d (and numpy's max) give NaN.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[1, 1, 2, 2], dtype="float64")
out = block.create_var(name="out", dtype="float64")
block.append_op(type="pool2d", inputs={"X": [x]}, outputs={"Out": [out]},
                attrs={"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2],
                       "paddings": [0, 0]})
exe = paddle.static.Executor(paddle.CPUPlace())
xs = np.array([[[[np.nan, 1.0], [2.0, 3.0]]]])
got = exe.run(main, feed={"x": xs}, fetch_list=["out"])[0].ravel()
if not np.isnan(got[0]):
    print(f"STILL SHOWS: max pool over [NaN, 1, 2, 3] = {got[0]} (expected NaN)")
    sys.exit(1)
print("FIXED: max pool propagates NaN")
