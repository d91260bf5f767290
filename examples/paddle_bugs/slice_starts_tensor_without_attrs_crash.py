"""Row 18, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

slice given its starts and ends only as tensors (StartsTensor, EndsTensor; the `starts` and
`ends` attrs left at their default []) segfaults in compile-time infer_shape unless
`infer_flags` is [-1, ...]; with the default infer_flags ([]) or [1, 1] the process dies
(SIGSEGV) inside `block.append_op`. Paddle's slice doc: StartsTensor/EndsTensor take
priority over the attrs, so the attrs may be left out; at worst an inconsistent infer_flags
must be refused (InvalidArgument), never crash. With infer_flags=[-1, -1] the same op gives
x[:, 2:3, 0:4, :] as it should.
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
s = block.create_var(name="s", shape=[2], dtype="int32")
e = block.create_var(name="e", shape=[2], dtype="int32")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="slice", inputs={"Input": [x], "StartsTensor": [s], "EndsTensor": [e]},
                    outputs={"Out": [out]}, attrs={"axes": [1, 2]})
    exe = paddle.static.Executor(paddle.CPUPlace())
    got = exe.run(main, feed={"x": np.ones((3, 4, 5, 6)), "s": np.array([2, 0], "int32"),
                              "e": np.array([3, -1], "int32")}, fetch_list=["out"])[0]
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
    print(f"STILL SHOWS: slice with StartsTensor/EndsTensor and no starts/ends attrs kills the "
          f"process at compile time (exit {code}); expected x[:, 2:3, 0:4, :] or an "
          f"InvalidArgument error")
    sys.exit(1)
print("FIXED: slice with only StartsTensor/EndsTensor runs (or refuses)"
      + (f" ({out.strip().splitlines()[-1]})" if out.strip() else ""))
