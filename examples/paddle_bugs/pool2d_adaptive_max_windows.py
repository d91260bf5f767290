"""Row 25, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

pool2d (the legacy op) with `adaptive=True` and `pooling_type="max"` ignores the adaptive
windows: it slides a `ksize` window with stride 1 and keeps the first ksize[0] x ksize[1]
results. Adaptive pooling's bins (Paddle's pool2d doc, PyTorch's adaptive_max_pool2d) are
rows floor(i*H/oh) .. ceil((i+1)*H/oh) and the same for columns; Paddle's own
paddle.nn.functional.adaptive_max_pool2d and the same op with pooling_type="avg" use them.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
x = np.random.default_rng(0).permutation(35).astype("float64").reshape(1, 1, 7, 5)
main = paddle.static.Program()
block = main.global_block()
xv = block.create_var(name="x", shape=[1, 1, 7, 5], dtype="float64")
out = block.create_var(name="out", dtype="float64")
block.append_op(type="pool2d", inputs={"X": [xv]}, outputs={"Out": [out]},
                attrs={"pooling_type": "max", "ksize": [3, 2], "adaptive": True,
                       "strides": [1, 1], "paddings": [0, 0]})
got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": x},
                                                    fetch_list=["out"])[0][0, 0]
oh, ow, h, w = 3, 2, 7, 5
want = np.array([[x[0, 0, i * h // oh:-(-(i + 1) * h // oh),
                    j * w // ow:-(-(j + 1) * w // ow)].max() for j in range(ow)]
                 for i in range(oh)])
if not np.array_equal(got, want):
    print(f"STILL SHOWS: adaptive max pool2d of a 7x5 input to 3x2 gives {got.tolist()}, "
          f"expected the adaptive bins' max {want.tolist()}")
    sys.exit(1)
print("FIXED: pool2d adaptive max pooling uses the adaptive bins")
