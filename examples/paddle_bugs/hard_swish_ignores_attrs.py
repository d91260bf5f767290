"""Row 7, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

hard_swish ignores its threshold, scale and offset attrs: the legacy op's proto declares
them (out = x * min(max(x + offset, 0), threshold) / scale), the kernel always uses 6, 6, 3.
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
block.append_op(type="hard_swish", inputs={"X": [x]}, outputs={"Out": [out]},
                attrs={"threshold": 2.0, "scale": 3.0, "offset": 1.0})
exe = paddle.static.Executor(paddle.CPUPlace())
xs = np.array([-4.0, -1.0, 1.0, 4.0])
got = exe.run(main, feed={"x": xs}, fetch_list=["out"])[0]
want = xs * np.clip(xs + 1.0, 0.0, 2.0) / 3.0
if not np.allclose(got, want):
    print(f"STILL SHOWS: hard_swish(threshold=2, scale=3, offset=1) gives {got.tolist()}, "
          f"the declared formula {want.tolist()}")
    sys.exit(1)
print("FIXED: hard_swish uses its threshold, scale and offset")
