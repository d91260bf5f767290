"""Row 52, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.mode(x, axis=0) kills the process (SIGFPE) on CPU when that axis has size 0: x of
shape [0, 3].

Expected: a clear error (the mode of no values is undefined; torch.mode says "Expected
reduction dim 0 to have non-zero size"). Actual: SIGFPE (an integer division by the empty
axis's size). Other zero-size shapes run ([4, 0] over axis 0 gives [0]; [0, 3, 2] over axis
1 gives [0, 2]). Run in a child interpreter so this script reports.
"""
import subprocess
import sys

CHILD = r'''
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
x = paddle.to_tensor(np.zeros((0, 3), "float64"))
try:
    values, _ = paddle.mode(x, axis=0)
    print("ran", values.shape)
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
    print(f"STILL SHOWS: paddle.mode(x [0, 3], axis=0) kills the "
          f"process (exit {code})")
    sys.exit(1)
print(f"FIXED: paddle.mode(x [0, 3], axis=0) no longer kills the process ({out})")
