"""Row 46, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.static.accuracy on a float64 input: the program declares the accuracy float64, the
kernel writes float32, so an op the program adds on it fails at run time.

Expected: the accuracy declared float32 (paddle.static.accuracy's docstring: "A Tensor with
type float32"; the kernel writes float32), so that `acc + paddle.full([], 1.0, acc.dtype)`
runs. Actual: `acc.dtype` is float64 (compile time), the fetched value is float32 (run
time), and elementwise_add on it fails with "Expected dtype() ==
phi::CppTypeToDataType<T>::Type()" in the default static graph (PIR) and in the legacy one.
"""
import sys

import numpy as np
import paddle

paddle.enable_static()
FEED = {"x": np.random.default_rng(0).random((4, 3)), "label": np.array([[0], [1], [2], [0]])}


def run(add_one: bool):
    """(declared dtype, fetched value or the error) of a program computing the accuracy."""
    main, startup = paddle.static.Program(), paddle.static.Program()
    with paddle.static.program_guard(main, startup):
        x = paddle.static.data("x", [4, 3], "float64")
        label = paddle.static.data("label", [4, 1], "int64")
        acc = paddle.static.accuracy(x, label, k=1)
        out = acc + paddle.full([], 1.0, acc.dtype) if add_one else acc
    exe = paddle.static.Executor(paddle.CPUPlace())
    exe.run(startup)
    try:
        return str(acc.dtype), exe.run(main, feed=FEED, fetch_list=[out])[0]
    except Exception as exc:  # noqa: BLE001 - Paddle raises its own error types
        return str(acc.dtype), f"{type(exc).__name__}"


described, fetched = run(False)
_, added = run(True)
added = "runs" if isinstance(added, np.ndarray) else f"fails at run time: {added}"
if "float64" in described and getattr(fetched, "dtype", None) == np.float32:
    print(f"STILL SHOWS: paddle.static.accuracy(float64 x) is declared {described}, the "
          f"kernel gives {fetched.dtype}; acc + full([], 1.0, acc.dtype) {added}")
    sys.exit(1)
print(f"FIXED: declared {described}, fetched {getattr(fetched, 'dtype', fetched)}; "
      f"acc + 1.0 {added}")
