"""Row 35, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

Second-order gradients that Paddle's grad makers promise and its CPU kernels cannot run:
each grad op below registers a double-grad maker (core.has_non_empty_grad_op_maker is True),
so the legacy static graph builds the second-order program, which then fails on CPU:

- acos: `acos_double_grad` is registered on no place ("The kernel `acos_double_grad` is not
  registered"); d2/dx2 acos(x) = -x / (1 - x^2)^1.5 is well defined on (-1, 1);
- depthwise_conv2d: `depthwise_conv2d_double_grad` is registered for the GPU only; conv2d's
  CPU double-grad kernel computes the same function (groups = channels);
- pool2d with pooling_type="max": "Pool op grad grad only supports avgpool"; max pooling's
  gradient is linear in dOut (ddOut = ddX gathered at each window's argmax), as PyTorch's
  max_pool2d double backward gives.

Expected: the second-order gradient computed (or no double-grad maker, so that the graph is
not built); actual: NotFound when the graph is built (acos, depthwise_conv2d), InvalidArgument
when it runs (max pooling).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
os.environ.setdefault("GLOG_minloglevel", "2")

import numpy as np  # noqa: E402
import paddle  # noqa: E402
import paddle.nn.functional as F  # noqa: E402

paddle.enable_static()


def second_order(build, x_shape):
    """Build and run d/d(dy) of sum(dx(x, dy)): the error's first line, or None."""
    try:
        main, startup = paddle.static.Program(), paddle.static.Program()
        with paddle.static.program_guard(main, startup):
            x = paddle.static.data("x", x_shape, "float64")
            x.stop_gradient = False
            y = build(x)
            dy = paddle.static.data("dy", y.shape, "float64")
            dy.stop_gradient = False
            (dx,) = paddle.static.gradients([y], [x], target_gradients=[dy])
            (ddy,) = paddle.static.gradients([dx], [dy])
        rng = np.random.default_rng(0)
        feed = {"x": rng.uniform(-0.5, 0.5, x_shape), "dy": rng.random(y.shape)}
        exe = paddle.static.Executor(paddle.CPUPlace())
        exe.run(startup)
        exe.run(main, feed=feed, fetch_list=[ddy])
        return None
    except Exception as exc:  # noqa: BLE001 - the finding
        text = str(exc)
        for key in ("is not registered", "only supports avgpool"):
            if key in text:
                return next(s for s in text.splitlines() if key in s).strip()[:160]
        return f"{type(exc).__name__}: {text.splitlines()[0][:160] if text else ''}"


def acos(x):
    """the legacy `acos` op (paddle.acos dispatches to the new IR in static mode)"""
    out = x.block.create_var(name="acos_out", shape=x.shape, dtype="float64")
    x.block.append_op(type="acos", inputs={"X": [x]}, outputs={"Out": [out]})
    return out


def depthwise(x):
    w = paddle.static.create_parameter([3, 1, 3, 3], "float64")
    return F.conv2d(x, w, padding=1, groups=3)


found = {
    "acos": second_order(acos, [2, 3]),
    "depthwise_conv2d": second_order(depthwise, [1, 3, 5, 5]),
    "max_pool2d": second_order(lambda x: F.max_pool2d(x, 2), [1, 2, 4, 4]),
}
shows = {k: v for k, v in found.items() if v}
if shows:
    print("STILL SHOWS: second-order gradients fail on CPU: "
          + "; ".join(f"{k}: {v}" for k, v in shows.items()))
    sys.exit(1)
print("FIXED: acos, depthwise_conv2d and max_pool2d second-order gradients run on CPU")
