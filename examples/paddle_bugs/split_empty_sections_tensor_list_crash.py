"""Row 32, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

split fed zero-size tensors for its SectionsTensorList entries (each should hold one
value) segfaults; an entry of the wrong size must be refused (InvalidArgument), as in rows
12 and 30 (fill_constant's ShapeTensorList, slice's StartsTensorList). With one-element
entries [2, -1, 1] the same program splits x [4, 7, 3] into [4, 2, 3], [4, 4, 3], [4, 1, 3].
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
x = block.create_var(name="x", shape=[4, 7, 3], dtype="float32")
sections = [block.create_var(name=f"s{i}", shape=[0], dtype="int32") for i in range(3)]
outs = [block.create_var(name=f"out{i}", dtype="float32") for i in range(3)]
block.append_op(type="split", inputs={"X": [x], "SectionsTensorList": sections},
                outputs={"Out": outs}, attrs={"axis": 1, "sections": [1, 1, 5]})
feed = {"x": np.ones((4, 7, 3), "float32")}
feed.update({f"s{i}": np.zeros(0, "int32") for i in range(3)})
try:
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed,
                                                        fetch_list=["out0", "out1", "out2"])
    print("ran", [list(g.shape) for g in got])
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
    print(f"STILL SHOWS: split with zero-size SectionsTensorList entries kills the process "
          f"(exit {code}); expected an InvalidArgument error")
    sys.exit(1)
print("FIXED: split refuses (or handles) zero-size SectionsTensorList entries"
      + (f" ({out.strip().splitlines()[-1]})" if out.strip() else ""))
