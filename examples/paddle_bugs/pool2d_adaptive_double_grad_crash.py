"""Row 33, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

pool2d with adaptive=True: running its second-order gradient (pool2d_double_grad, made by
pool2d_grad's double-grad maker) kills the process with SIGSEGV on CPU. Non-adaptive average
pooling's second order runs and is right (it is linear: ddOut = pool(ddX)).

Built with Paddle's own public API: F.adaptive_avg_pool2d in the legacy static graph and
paddle.static.gradients twice. Expected: ddOut = adaptive_avg_pool2d(ddX); actual: SIGSEGV.
"""
import subprocess
import sys

CHILD = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np
import paddle
import paddle.nn.functional as F
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [2, 3, 7, 5], "float64")
    x.stop_gradient = False
    y = F.adaptive_avg_pool2d(x, [3, 2])
    dy = paddle.static.data("dy", [2, 3, 3, 2], "float64")
    dy.stop_gradient = False
    (dx,) = paddle.static.gradients([y], [x], target_gradients=[dy])
    ddx = paddle.static.data("ddx", [2, 3, 7, 5], "float64")
    (ddy,) = paddle.static.gradients([dx], [dy], target_gradients=[ddx])
exe = paddle.static.Executor(paddle.CPUPlace())
rng = np.random.default_rng(0)
feed = {"x": rng.random((2, 3, 7, 5)), "dy": rng.random((2, 3, 3, 2)),
        "ddx": rng.random((2, 3, 7, 5))}
got, want = exe.run(main, feed=feed, fetch_list=[ddy, y])[0], None
print("ran", got.shape)
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=120)
    code, out = p.returncode, p.stdout
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: the second-order gradient of adaptive_avg_pool2d kills the process "
          f"(exit {code}); expected ddOut = adaptive_avg_pool2d(ddX)")
    sys.exit(1)
print(f"FIXED: adaptive pool2d's second-order gradient runs ({out.strip()})")
