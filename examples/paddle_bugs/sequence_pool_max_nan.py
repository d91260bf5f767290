"""Row 22, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.static.nn.sequence_pool(pool_type="max") drops a NaN unless it is the sequence's
first element.

Through the public API (the legacy static graph, FLAGS_enable_pir_api=0, as the sequence
layers' own error message asks). A sequence [1, 2, 3] with NaN put at each position in turn.
Expected: NaN each time (numpy.max and torch.max propagate NaN). Actual: NaN only when it is
first (the kernel starts from the first element and keeps `if (x > max)`).
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
    out = paddle.static.nn.sequence_pool(x, pool_type="max")
exe = paddle.static.Executor(paddle.CPUPlace())
got = []
for pos in range(3):
    a = np.array([[1.0], [2.0], [3.0]])
    a[pos] = np.nan
    feed = paddle.base.create_lod_tensor(a, [[3]], paddle.CPUPlace())
    got.append(float(exe.run(main, feed={"x": feed}, fetch_list=[out])[0].ravel()[0]))
if not np.isnan(got).all():
    print(f"STILL SHOWS: max sequence_pool over [1, 2, 3] with NaN at position 0..2 gives "
          f"{got} (expected NaN each time, as numpy.max)")
    sys.exit(1)
print("FIXED: max sequence_pool propagates NaN wherever it sits")
