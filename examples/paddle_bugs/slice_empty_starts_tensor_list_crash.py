"""Row 30, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

slice fed zero-size tensors for its StartsTensorList entries (each should hold one value)
segfaults at run time; an entry of the wrong size must be refused (InvalidArgument), as in
row 12 (fill_constant's ShapeTensorList). With one-element entries the same program gives
x[1:3, 0:3, 2:4, :].
"""
import subprocess
import sys

CHILD = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()   # die of the signal, not hang in Paddle's handler
paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[3, 4, 5, 6], dtype="float64")
starts = [block.create_var(name=f"s{i}", shape=[0], dtype="int32") for i in range(3)]
out = block.create_var(name="out", dtype="float64")
block.append_op(type="slice", inputs={"Input": [x], "StartsTensorList": starts},
                outputs={"Out": [out]},
                attrs={"axes": [0, 1, 2], "starts": [-1, 0, -1], "ends": [3, 3, 4],
                       "infer_flags": [-1, 1, -1], "decrease_axis": []})
feed = {"x": np.ones((3, 4, 5, 6))}
feed.update({f"s{i}": np.zeros(0, "int32") for i in range(3)})
try:
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=["out"])[0]
    print("ran", list(got.shape))
except Exception:
    print("refused")
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=120)
    code = p.returncode
    out = p.stdout
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0 and "refused" not in out:
    print(f"STILL SHOWS: slice with zero-size StartsTensorList entries kills the process "
          f"(exit {code}); expected an InvalidArgument error")
    sys.exit(1)
print("FIXED: slice refuses (or handles) zero-size StartsTensorList entries"
      + (f" ({out.strip().splitlines()[-1]})" if out.strip() else ""))
