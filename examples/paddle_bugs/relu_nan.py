"""relu(NaN) is 0 on Paddle's CPU kernel; numpy's maximum(x, 0) and torch.relu give NaN.

Paddle documents relu as max(0, x); a NaN input must stay NaN (IEEE max propagates NaN in
numpy.maximum, PyTorch, JAX), or a diverged activation is silently hidden.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[3], dtype="float64")
out = block.create_var(name="out", dtype="float64")
block.append_op(type="relu", inputs={"X": [x]}, outputs={"Out": [out]})
exe = paddle.static.Executor(paddle.CPUPlace())
got = exe.run(main, feed={"x": np.array([np.nan, -1.0, 2.0])}, fetch_list=["out"])[0]
if not np.isnan(got[0]):
    print(f"STILL SHOWS: relu(NaN) = {got[0]} (expected NaN, as numpy.maximum(NaN, 0))")
    sys.exit(1)
print("FIXED: relu(NaN) is NaN")
