"""Row 2, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

conv2d accepts negative paddings that leave no output: compile-time infer_shape gives the
output NEGATIVE dims ([2, 4, -3, -4] for a 5x6 input, 3x3 filter, paddings [-3, -4]) instead
of refusing; running it makes MKL reject its GEMM arguments and the grad kernel die of SIGFPE.
Paddle's conv output-size rule ((H + 2p - d(k-1) - 1) / s + 1 > 0) must be enforced, as
torch.nn.functional.conv2d does ("negative padding is not supported" / output size too small).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import paddle  # noqa: E402

paddle.enable_static()
block = paddle.static.Program().global_block()
x = block.create_var(name="x", shape=[2, 3, 5, 6], dtype="float64")
w = block.create_var(name="w", shape=[4, 3, 3, 3], dtype="float64")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="conv2d", inputs={"Input": [x], "Filter": [w]},
                    outputs={"Output": [out]}, attrs={"paddings": [-3, -4]})
except ValueError:
    print("FIXED: conv2d refuses paddings that leave no output")
    sys.exit(0)
if any(d < 0 for d in out.shape if d != -1):
    print(f"STILL SHOWS: conv2d with paddings [-3, -4] infers output shape {list(out.shape)} "
          "(negative dims) instead of refusing")
    sys.exit(1)
print(f"FIXED: conv2d infers {list(out.shape)}")
