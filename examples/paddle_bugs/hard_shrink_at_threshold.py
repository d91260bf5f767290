"""hard_shrink keeps x where |x| == threshold: with threshold 0.5, x = 0.5 gives 0.5 and
x = -0.5 gives -0.5 (float32 and float64; its gradient there is 1). Paddle's hardshrink
doc: out = x if x > threshold, x if x < -threshold, 0 otherwise, so 0 at x = +-threshold;
torch.nn.functional.hardshrink gives 0 there too.
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
block.append_op(type="hard_shrink", inputs={"X": [x]}, outputs={"Out": [out]},
                attrs={"threshold": 0.5})
exe = paddle.static.Executor(paddle.CPUPlace())
got = exe.run(main, feed={"x": np.array([0.5, -0.5, 0.75, 0.25])}, fetch_list=["out"])[0]
want = np.array([0.0, 0.0, 0.75, 0.0])
if not np.array_equal(got, want):
    print(f"STILL SHOWS: hard_shrink([0.5, -0.5, 0.75, 0.25], threshold=0.5) = {got.tolist()} "
          f"(expected {want.tolist()}: 0 where |x| is not > threshold)")
    sys.exit(1)
print("FIXED: hard_shrink gives 0 at x = +-threshold")
