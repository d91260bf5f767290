"""pool2d with a window that does not fit in the input (1x1 input, ksize 2, stride 2, no
padding, ceil_mode off) gives a 1x1 output holding the clipped window's value, where the
output size is floor((H - k + 2p) / s) + 1 = floor(-1/2) + 1 = 0: Paddle's C integer
division truncates -1/2 to 0. PyTorch's max_pool2d refuses ("Output size is too small");
the result must be an empty output or a refusal, not a window that is not there.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
xv = block.create_var(name="x", shape=[1, 1, 1, 1], dtype="float64")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="pool2d", inputs={"X": [xv]}, outputs={"Out": [out]},
                    attrs={"pooling_type": "max", "ksize": [2, 2], "strides": [2, 2],
                           "paddings": [0, 0]})
    got = paddle.static.Executor(paddle.CPUPlace()).run(
        main, feed={"x": np.array([[[[5.0]]]])}, fetch_list=["out"])[0]
except Exception as exc:  # noqa: BLE001 - a refusal is the fix
    print("FIXED: pool2d refuses a window larger than the input: "
          + str(exc).strip().splitlines()[0][:100])
    sys.exit(0)
if got.size:
    print(f"STILL SHOWS: max pool2d of a 1x1 input with a 2x2 window (no padding) gives shape "
          f"{list(got.shape)}, value {got.ravel().tolist()} (expected an empty output or a "
          f"refusal: floor((1 - 2) / 2) + 1 = 0)")
    sys.exit(1)
print(f"FIXED: pool2d gives an empty output (shape {list(got.shape)})")
