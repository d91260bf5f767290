"""clip with min == max is a constant function, so its gradient is 0 everywhere; Paddle
3.3.1's clip_grad passes the gradient through where min <= x <= max, so at x == min == max
it gives 1 (legacy `clip` op and paddle.clip alike). Paddle's own test_clip_op.py
TestCase5 (min = max = 0.5, inputs near 0.5 set to 0.5; 2.6.2 and 3.0.0-beta2 trees)
expects 0 from the numeric gradient.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

feed = np.array([0.2, 0.5, 0.9], dtype="float64")
want = np.zeros(3)

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    block = main.global_block()
    x = block.create_var(name="x", shape=[3], dtype="float64")
    x.stop_gradient = False
    out = block.create_var(name="out", dtype="float64")
    block.append_op(type="clip", inputs={"X": [x]}, outputs={"Out": [out]},
                    attrs={"min": 0.5, "max": 0.5})
    loss = block.create_var(name="loss", dtype="float64")
    block.append_op(type="reduce_sum", inputs={"X": [out]}, outputs={"Out": [loss]},
                    attrs={"reduce_all": True})
    paddle.base.backward.append_backward(loss)
exe = paddle.static.Executor(paddle.CPUPlace())
legacy = exe.run(main, feed={"x": feed}, fetch_list=["x@GRAD"])[0]

paddle.disable_static()
t = paddle.to_tensor(feed, stop_gradient=False)
paddle.clip(t, min=0.5, max=0.5).sum().backward()
dygraph = t.grad.numpy()

if not (np.array_equal(legacy, want) and np.array_equal(dygraph, want)):
    print(f"STILL SHOWS: d/dx sum(clip(x, 0.5, 0.5)) at x = {feed.tolist()}: legacy op "
          f"{legacy.tolist()}, paddle.clip {dygraph.tolist()} (expected {want.tolist()}: "
          f"clip(x, 0.5, 0.5) is constant)")
    sys.exit(1)
print("FIXED: clip's gradient is 0 where min == max")
