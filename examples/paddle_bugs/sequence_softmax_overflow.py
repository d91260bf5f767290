"""Row 19, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.static.nn.sequence_softmax overflows: it computes exp(x) / sum(exp(x)) without
subtracting the sequence's max.

Through the public API (the legacy static graph, where Paddle's sequence layers live:
FLAGS_enable_pir_api=0, as their own error message asks). Expected: softmax is
shift-invariant, softmax(x) = softmax(x - max(x)): [1000, 999] (float64) gives
[0.731, 0.269] (a float64 computation of the shifted form; Paddle's own paddle.nn.functional
.softmax gives it). Actual: [nan, nan].
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [-1, 1], "float64", lod_level=1)
    out = paddle.static.nn.sequence_softmax(x)
exe = paddle.static.Executor(paddle.CPUPlace())
xs = np.array([[1000.0], [999.0]])
feed = paddle.base.create_lod_tensor(xs, [[2]], paddle.CPUPlace())
got = np.array(exe.run(main, feed={"x": feed}, fetch_list=[out],
                       return_numpy=False)[0]).ravel()
e = np.exp(xs.ravel() - xs.max())
want = e / e.sum()
paddle.disable_static()
softmax = paddle.nn.functional.softmax(paddle.to_tensor(xs.ravel())).numpy()
if not np.allclose(got, want):
    print(f"STILL SHOWS: sequence_softmax([1000, 999]) = {got.tolist()} (expected "
          f"{np.round(want, 4).tolist()}; Paddle's F.softmax gives "
          f"{np.round(softmax, 4).tolist()})")
    sys.exit(1)
print("FIXED: sequence_softmax subtracts the max")
