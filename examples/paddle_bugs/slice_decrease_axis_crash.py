"""Row 1, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

slice with decrease_axis=[-1] corrupts the heap in compile-time infer_shape
(GetDecreasedDims) and aborts the process ("double free or corruption"); a large
decrease_axis ([100000]) segfaults. An out-of-range axis attr must be refused with
InvalidArgument, as slice's `axes` are.
"""
import subprocess
import sys

CHILD = r'''
import os, sys
os.environ["FLAGS_enable_pir_api"] = "0"
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
paddle.enable_static()
block = paddle.static.Program().global_block()
x = block.create_var(name="x", shape=[3, 4], dtype="float32")
out = block.create_var(name="out")
try:
    block.append_op(type="slice", inputs={"Input": [x]}, outputs={"Out": [out]},
                    attrs={"axes": [0], "starts": [0], "ends": [1],
                           "decrease_axis": [int(sys.argv[1])]})
except ValueError:
    print("refused")
'''

shown = []
for axis in ("-1", "100000"):
    try:
        p = subprocess.run([sys.executable, "-c", CHILD, axis], capture_output=True,
                           text=True, timeout=120)
    except subprocess.TimeoutExpired:
        shown.append(f"decrease_axis=[{axis}] hangs the process")
        continue
    if p.returncode != 0 and "refused" not in p.stdout:
        shown.append(f"decrease_axis=[{axis}] kills the process (exit {p.returncode})")
if shown:
    print("STILL SHOWS: " + "; ".join(shown) + " (expected an InvalidArgument error)")
    sys.exit(1)
print("FIXED: slice refuses an out-of-range decrease_axis")
