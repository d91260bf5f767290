"""Row 41, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.cross: the backward kills the process (SIGSEGV) on CPU when only one of the two
inputs needs a gradient.

x (stop_gradient=False) and y (a constant, paddle.to_tensor's default stop_gradient=True),
paddle.cross(x, y).sum().backward(). Expected: x.grad = cross(y, ones) - the gradient of
sum((x x y)) with respect to x, as computed when both inputs need gradients (which runs) and
as torch.linalg.cross gives. Actual: SIGSEGV, any shape and dtype tried ([4, 3], [1024, 3,
1] with axis -2 or 1, float32 and float64). Run in a child interpreter so this script
reports.
"""
import subprocess
import sys

CHILD = r'''
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
rng = np.random.default_rng(0)
xs, ys = rng.random((4, 3)), rng.random((4, 3))
x = paddle.to_tensor(xs, stop_gradient=False)
y = paddle.to_tensor(ys)                     # a constant: no gradient needed
paddle.cross(x, y, axis=1).sum().backward()
want = np.cross(ys, np.ones((4, 3)))
print("ran", np.allclose(x.grad.numpy(), want))
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: paddle.cross(x, y).sum().backward() with y constant kills the "
          f"process (exit {code}; expected x.grad = cross(y, ones))")
    sys.exit(1)
print(f"FIXED: paddle.cross's backward with one constant input runs "
      f"({out.splitlines()[-1] if out else out})")
