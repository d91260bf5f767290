"""Row 53, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.multiplex's backward kills the process (SIGFPE) on CPU for an empty batch: inputs
[x, x] with x of shape [0, 3] (stop_gradient=False), index of shape [0, 1].

Expected: x.grad of shape [0, 3] (an empty batch is a valid input; the forward runs and
gives [0, 3]; with x [2, 0] the backward runs too). Actual: SIGFPE in the backward (an
integer division by the row count). Run in a child interpreter so this script reports.
"""
import subprocess
import sys

CHILD = r'''
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
x = paddle.to_tensor(np.zeros((0, 3), "float64"), stop_gradient=False)
index = paddle.to_tensor(np.zeros((0, 1), "int32"))
paddle.multiplex([x, x], index).sum().backward()
print("ran", x.grad.shape)
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: paddle.multiplex([x, x], index).sum().backward() with x [0, 3] kills the "
          f"process (exit {code})")
    sys.exit(1)
print(f"FIXED: paddle.multiplex([x, x], index).sum().backward() with x [0, 3] no longer kills the process ({out})")
