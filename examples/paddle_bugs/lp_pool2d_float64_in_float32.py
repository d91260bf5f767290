"""lp_pool2d's float64 CPU kernel computes in float32: with norm_type 2 its float64 output
is exactly representable in float32 (relative error ~3e-8 against numpy's float64 L2 norm,
where float64 gives ~1e-16), and so is its gradient's precision. A numeric gradient on the
float64 kernel is float32 noise at small steps (Paddle's own OpTest exempts the op:
lp_pool2d is in NEED_FIX_FP64_CHECK_GRAD_THRESHOLD_OP_LIST of test/white_list/
op_threshold_white_list.py, 3.0.0-beta2 tree).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
x_np = np.random.default_rng(0).random([2, 3, 5, 5])
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[2, 3, 5, 5], dtype="float64")
out = block.create_var(name="out", dtype="float64")
block.append_op(type="lp_pool2d", inputs={"x": [x]}, outputs={"out": [out]},
                attrs={"kernel_size": [3, 3], "strides": [1, 1], "paddings": [0, 0],
                       "pooling_type": "lp", "global_pooling": True, "ceil_mode": False,
                       "data_format": "NCHW", "padding_algorithm": "EXPLICIT",
                       "norm_type": 2.0})
exe = paddle.static.Executor(paddle.CPUPlace())
got = exe.run(main, feed={"x": x_np}, fetch_list=["out"])[0]
want = np.sqrt((x_np ** 2).sum(axis=(2, 3), keepdims=True))
rel = float(np.abs(got - want).max() / np.abs(want).max())
if got.dtype == np.float64 and rel > 1e-12:
    as_f32 = np.array_equal(got, got.astype(np.float32).astype(np.float64))
    print(f"STILL SHOWS: float64 lp_pool2d (norm_type 2, global) has relative error {rel:.1e} "
          f"against numpy's float64 L2 norm (expected < 1e-12); output exactly float32-"
          f"representable: {as_f32}")
    sys.exit(1)
print(f"FIXED: float64 lp_pool2d agrees with numpy to {rel:.1e}")
