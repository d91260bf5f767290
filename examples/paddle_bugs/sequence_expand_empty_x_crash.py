"""Row 17, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.static.nn.sequence_expand kills the process (SIGFPE) when every sequence of X is
empty.

Through the public API (the legacy static graph, FLAGS_enable_pir_api=0, as the sequence
layers' own error message asks): X with 0 rows and LoD lengths [0, 0, 0], Y with lengths
[1, 2, 0]. Expected: an empty Out (each empty sequence repeated) or InvalidArgument - an
empty sequence is valid LoD, and no input may kill the process. Actual: SIGFPE (an integer
division by X's row count). Run in a child interpreter so this script reports.
"""
import subprocess
import sys

CHILD = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [-1, 1], "float64", lod_level=1)
    y = paddle.static.data("y", [-1, 1], "float64", lod_level=1)
    out = paddle.static.nn.sequence_expand(x, y)
place = paddle.CPUPlace()
feed = {"x": paddle.base.create_lod_tensor(np.zeros((0, 1)), [[0, 0, 0]], place),
        "y": paddle.base.create_lod_tensor(np.ones((3, 1)), [[1, 2, 0]], place)}
try:
    got = paddle.static.Executor(place).run(main, feed=feed, fetch_list=[out],
                                            return_numpy=False)[0]
    print("ran", np.array(got).shape)
except Exception as e:
    print("refused", type(e).__name__)
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: paddle.static.nn.sequence_expand with an all-empty X kills the "
          f"process (exit {code}; expected an empty Out or InvalidArgument)")
    sys.exit(1)
print(f"FIXED: sequence_expand with an all-empty X: {out.splitlines()[-1] if out else out}")
