"""Row 13, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

fill_constant's compile-time infer_shape ignores its ShapeTensor input when that tensor's
size is unknown (-1) and gives the `shape` attr's shape instead; the run uses the tensor.
Paddle's doc: ShapeTensor, when given, takes priority over `shape`. The compile-time shape
must then be unknown (-1 dims), never the attr's [7] that the run contradicts ([3, 4]).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
shape = block.create_var(name="shape", shape=[-1], dtype="int64")
out = block.create_var(name="out", dtype="float32")
block.append_op(type="fill_constant", inputs={"ShapeTensor": [shape]}, outputs={"Out": [out]},
                attrs={"shape": [7], "value": 1.5, "dtype": 5})
compiled = list(out.shape)
exe = paddle.static.Executor(paddle.CPUPlace())
ran = list(exe.run(main, feed={"shape": np.array([3, 4], "int64")}, fetch_list=["out"])[0].shape)
if len(compiled) != len(ran) or any(c not in (-1, r) for c, r in zip(compiled, ran)):
    print(f"STILL SHOWS: fill_constant(ShapeTensor of unknown size, shape=[7]): compile-time "
          f"shape {compiled}, run-time shape {ran}")
    sys.exit(1)
print(f"FIXED: compile-time {compiled} agrees with run-time {ran}")
