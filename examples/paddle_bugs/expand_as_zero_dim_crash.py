"""Row 50, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.expand_as(x, y) with x [0, 12] and y [6, 12] (a size-0 dim expanded to 6) returns a
[6, 12] tensor made of nothing, and its backward kills the process (SIGFPE) on CPU.

Expected: a clear error (a size-0 dim cannot be expanded to 6: Paddle refuses any other
size that is neither 1 nor the target's; torch's expand_as says "The expanded size of the
tensor (6) must match the existing size (0)"). Actual: SIGFPE (an integer division by the
zero size, in ExpandAsGradNode). Expanding a size-1 dim to 0, or 0 to 0, runs, backward
too. Run in a child interpreter so this
script reports.
"""
import subprocess
import sys

CHILD = r'''
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
x = paddle.to_tensor(np.zeros((0, 12), "float32"), stop_gradient=False)
y = paddle.to_tensor(np.zeros((6, 12), "float32"))
try:
    paddle.expand_as(x, y).sum().backward()
    print("ran", x.grad.shape)
except Exception as exc:  # noqa: BLE001 - a clear error is the fixed behaviour
    print("refused:", str(exc).strip().splitlines()[-1][:120])
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: paddle.expand_as(x [0, 12], y [6, 12]).sum().backward() kills the "
          f"process (exit {code}; expected a clear error)")
    sys.exit(1)
print(f"FIXED: paddle.expand_as(x [0, 12], y [6, 12]) no longer kills the process ({out})")
