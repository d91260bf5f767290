"""Row 56, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

The legacy `affine_channel` op kills the process (SIGFPE) on CPU for an input with a zero
batch or zero channels: X [0, 3, 2, 2] (or [2, 0, 2, 2]), Scale and Bias [3], NCHW.

Expected: an empty Out [0, 3, 2, 2] (Out = X * Scale + Bias per channel; an empty batch is
valid) or a clear error. Actual: SIGFPE (an integer division by a zero size). Only a
hand-built op desc reaches it: Fluid 1.x's fluid.layers.affine_channel wrote the op, Paddle
3.3.1 has no API for it. Run in a child interpreter so this script reports.
"""
import subprocess
import sys

CHILD = r'''
import numpy as np
import paddle
paddle.enable_static()
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
with paddle.pir_utils.OldIrGuard():
    main = paddle.static.Program()
    with paddle.static.program_guard(main):
        block = main.global_block()
        x = paddle.static.data("x", [0, 3, 2, 2], "float32")
        scale = paddle.static.data("scale", [3], "float32")
        bias = paddle.static.data("bias", [3], "float32")
        out = block.create_var(name="out", dtype="float32", shape=[0, 3, 2, 2])
        block.append_op(type="affine_channel", inputs={"X": x, "Scale": scale, "Bias": bias},
                        outputs={"Out": out}, attrs={"data_layout": "NCHW"})
    feed = {"x": np.ones((0, 3, 2, 2), "float32"), "scale": np.ones(3, "float32"),
            "bias": np.ones(3, "float32")}
    got, = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[out])
print("ran", got.shape)
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: affine_channel on X [0, 3, 2, 2] (a hand-built op desc) kills the "
          f"process (exit {code})")
    sys.exit(1)
print(f"FIXED: affine_channel on X [0, 3, 2, 2] (a hand-built op desc) no longer kills the process ({out})")
