"""Row 31, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

slice's gradient kills the process (SIGSEGV) for a negative axis with decrease_axis:
x [3, 4, 5, 6], axes=[-1], starts=[-1], ends=[1000000], decrease_axis=[3] (x[..., -1], the
same slice as axes=[3], whose gradient runs). Paddle's slice doc takes a negative axis as
rank + axis; whatever slice_grad makes of it, no input may kill the process (row 16 is the
forward's side of negative axes).
"""
import subprocess
import sys

CHILD = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np
import paddle
from paddle.base import core
core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[3, 4, 5, 6], dtype="float64")
out = block.create_var(name="out", dtype="float64")
op = block.append_op(type="slice", inputs={"Input": [x]}, outputs={"Out": [out]},
                     attrs={"axes": [AXIS], "starts": [-1], "ends": [1000000],
                            "decrease_axis": [3], "infer_flags": [1]})
block.create_var(name="out@GRAD", shape=list(out.shape), dtype="float64")
(grad,), _ = core.get_grad_op_desc(op.desc, set(), [])
desc = block.desc.append_op()
desc.copy_from(grad)
block.desc.var(b"x@GRAD").set_dtype(core.VarDesc.VarType.FP64)
desc.infer_shape(block.desc)
main._sync_with_cpp()
feed = {"x": np.ones((3, 4, 5, 6)), "out@GRAD": np.ones([3, 4, 5])}
try:
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed,
                                                        fetch_list=["x@GRAD"])[0]
    print("ran", float(got[..., -1].sum()), float(got.sum()))
except Exception:
    print("refused")
'''


def run(axis):
    try:
        p = subprocess.run([sys.executable, "-c", CHILD.replace("AXIS", str(axis))],
                           capture_output=True, text=True, timeout=120)
        return p.returncode, p.stdout.strip()
    except subprocess.TimeoutExpired:
        return "hang", ""


code, out = run(-1)
if code != 0 and "refused" not in out:
    twin = run(3)
    print(f"STILL SHOWS: slice_grad with axes=[-1] and decrease_axis=[3] kills the process "
          f"(exit {code}); with axes=[3]: exit {twin[0]} ({twin[1][-40:]})")
    sys.exit(1)
print("FIXED: slice_grad with a negative axis and decrease_axis runs (or refuses)"
      + (f" ({out.splitlines()[-1]})" if out else ""))
