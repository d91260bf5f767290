"""Row 57, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

The legacy `cross_entropy2` op kills the process (SIGFPE) on CPU for an input with zero
classes: X [3, 0], Label [3, 1] (int64, 0).

Expected: a clear error (a label cannot index zero classes). Actual: SIGFPE (an integer division by the class count). Only a
hand-built op desc reaches it: no API of Paddle 3.3.1 builds cross_entropy2
(paddle.nn.functional.cross_entropy builds softmax_with_cross_entropy / cross_entropy_with_softmax).
Run in a child interpreter so this script reports.
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
        x = paddle.static.data("x", [3, 0], "float32")
        label = paddle.static.data("label", [3, 1], "int64")
        y, xshape, match = (block.create_var(name=n, dtype="float32") for n in ("y", "xs", "m"))
        block.append_op(type="cross_entropy2", inputs={"X": x, "Label": label},
                        outputs={"Y": y, "XShape": xshape, "MatchX": match},
                        attrs={"ignore_index": -100})
    feed = {"x": np.ones((3, 0), "float32"), "label": np.zeros((3, 1), "int64")}
    got, = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[y])
print("ran", got.shape)
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: cross_entropy2 on X [3, 0] (a hand-built op desc) kills the "
          f"process (exit {code})")
    sys.exit(1)
print(f"FIXED: cross_entropy2 on X [3, 0] (a hand-built op desc) no longer kills the process ({out})")
