"""Row 29, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.static.nn.batch_norm with a frozen bias (bias_attr trainable=False): building the
backward fails.

Through the public API (the legacy static graph, FLAGS_enable_pir_api=0; paddle.static.nn
.batch_norm's parameters are legacy variables). Expected: the gradients of the trainable
parameters and X - d loss / d Scale does not depend on Bias's gradient, and freezing any
subset of parameters is allowed. Actual: NotFound "Output(Scale@GRAD) and Output(Bias@GRAD)
must be null or not be null at same time" (batch_norm_grad's compile-time check).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [2, 3, 4, 4], "float32")
    x.stop_gradient = False
    y = paddle.static.nn.batch_norm(x, param_attr=paddle.ParamAttr(name="scale"),
                                    bias_attr=paddle.ParamAttr(name="bias", trainable=False))
    loss = paddle.mean(y * x)
    try:
        grads = paddle.static.append_backward(loss)
        error = None
    except Exception as e:    # noqa: BLE001 - the error is what this reports
        error = f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"
if error is None:
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    try:
        exe.run(main, feed={"x": np.random.default_rng(0).random((2, 3, 4, 4), "float32")},
                fetch_list=[g for _, g in grads])
    except Exception as e:    # noqa: BLE001
        error = f"{type(e).__name__}: {str(e).splitlines()[0][:150]}"
if error:
    print(f"STILL SHOWS: the backward of batch_norm with a frozen bias fails: {error} "
          f"(expected the scale's and X's gradients)")
    sys.exit(1)
print("FIXED: batch_norm's backward runs with a frozen bias")
