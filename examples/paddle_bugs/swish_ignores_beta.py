"""swish ignores its `beta` attr: the legacy op's proto declares out = x * sigmoid(beta * x),
the kernel always uses beta = 1.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[4], dtype="float64")
out = block.create_var(name="out", dtype="float64")
block.append_op(type="swish", inputs={"X": [x]}, outputs={"Out": [out]}, attrs={"beta": 2.5})
exe = paddle.static.Executor(paddle.CPUPlace())
xs = np.array([-2.0, -0.5, 0.5, 2.0])
got = exe.run(main, feed={"x": xs}, fetch_list=["out"])[0]
want = xs / (1.0 + np.exp(-2.5 * xs))
if not np.allclose(got, want):
    print(f"STILL SHOWS: swish(beta=2.5) gives {np.round(got, 4).tolist()}, the declared "
          f"formula {np.round(want, 4).tolist()}")
    sys.exit(1)
print("FIXED: swish uses its beta")
