"""Row 15, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

elementwise_add (and _sub, _mul: the same infer_shape) with an axis where Y does not fit,
X [4, 5, 6], Y [5, 6], axis=2 (2 + rank(Y) > rank(X)), writes past a buffer in compile-time
infer_shape: the process aborts with "free(): invalid next size". The other out-of-range
axes (3, 100, -2) are refused with InvalidArgument, as this one must be.
"""
import subprocess
import sys

CHILD = r'''
import gc, os, sys
os.environ["FLAGS_enable_pir_api"] = "0"
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
paddle.enable_static()
for _ in range(3):
    block = paddle.static.Program().global_block()
    x = block.create_var(name="x", shape=[4, 5, 6], dtype="float64")
    y = block.create_var(name="y", shape=[5, 6], dtype="float64")
    out = block.create_var(name="out", dtype="float64")
    try:
        block.append_op(type=sys.argv[1], inputs={"X": [x], "Y": [y]},
                        outputs={"Out": [out]}, attrs={"axis": 2})
    except ValueError:
        print("refused")
    del block, x, y, out
    gc.collect()
'''

shown = []
for op in ("elementwise_add", "elementwise_sub", "elementwise_mul"):
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, op], capture_output=True, text=True,
                           timeout=120)
        code = p.returncode
    except subprocess.TimeoutExpired:
        code = "hang"
    if code != 0:
        shown.append(f"{op} (exit {code})")
if shown:
    print("STILL SHOWS: X [4, 5, 6], Y [5, 6], axis=2 kills the process: " + ", ".join(shown)
          + " (expected InvalidArgument)")
    sys.exit(1)
print("FIXED: elementwise ops refuse axis=2 for X [4, 5, 6], Y [5, 6]")
