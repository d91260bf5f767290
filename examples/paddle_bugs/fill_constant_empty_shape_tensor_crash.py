"""Row 12, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

fill_constant fed zero-size tensors for its ShapeTensorList entries and ValueTensor (each
should hold one value) segfaults; an empty shape tensor must be refused (InvalidArgument), as
a ShapeTensorList entry of the wrong size is.
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
d0 = block.create_var(name="d0", shape=[0], dtype="int64")
d1 = block.create_var(name="d1", shape=[0], dtype="int64")
v = block.create_var(name="v", shape=[0], dtype="float32")
out = block.create_var(name="out", dtype="float32")
block.append_op(type="fill_constant", inputs={"ShapeTensorList": [d0, d1], "ValueTensor": [v]},
                outputs={"Out": [out]}, attrs={"shape": [1, 1], "value": 1.0, "dtype": 5})
exe = paddle.static.Executor(paddle.CPUPlace())
empty_i, empty_f = np.zeros(0, "int64"), np.zeros(0, "float32")
try:
    exe.run(main, feed={"d0": empty_i, "d1": empty_i, "v": empty_f}, fetch_list=["out"])
    print("ran")
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
    print(f"STILL SHOWS: fill_constant with empty ShapeTensorList/ValueTensor kills the "
          f"process (exit {code}); expected an InvalidArgument error")
    sys.exit(1)
print("FIXED: fill_constant refuses (or handles) empty shape/value tensors"
      + (f" ({out.strip()})" if out.strip() else ""))
