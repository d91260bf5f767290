"""logsigmoid(-inf) is NaN on Paddle's CPU kernel; the limit (and torch.nn.functional.
logsigmoid, scipy's log_expit) is -inf.

logsigmoid(x) = -log(1 + exp(-x)) -> -inf as x -> -inf; Paddle's stable form
min(x, 0) - log(exp(-max) + exp(x - max)) evaluates inf - inf at x = -inf.
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
block.append_op(type="logsigmoid", inputs={"X": [x]}, outputs={"Out": [out]})
exe = paddle.static.Executor(paddle.CPUPlace())
got = exe.run(main, feed={"x": np.array([-np.inf, 0.0, 1.0])}, fetch_list=["out"])[0]
if not (np.isneginf(got[0])):
    print(f"STILL SHOWS: logsigmoid(-inf) = {got[0]} (expected -inf)")
    sys.exit(1)
print("FIXED: logsigmoid(-inf) is -inf")
