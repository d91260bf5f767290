"""Row 59, graded CRASH ON INVALID INPUT (docs/paddle.md, "Bugs found in Paddle 3.3.1").

The legacy `dequantize_log` op kills the process (SIGSEGV) on CPU when its Dict input is
empty: X int8 [2, 3], Dict float32 [0].

Expected: a clear error (X's codes index Dict, which Paddle's own test fills with 128
values; an empty Dict has nothing to index). Actual: SIGSEGV (reads past the empty Dict).
Only a hand-built op desc reaches it (a legacy quantization op; no public API of Paddle 3.3.1
builds it). Run in a child interpreter so this script reports.
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
        x = paddle.static.data("x", [2, 3], "int8")
        table = paddle.static.data("table", [0], "float32")
        out = block.create_var(name="out", dtype="float32", shape=[2, 3])
        block.append_op(type="dequantize_log", inputs={"X": x, "Dict": table},
                        outputs={"Out": out}, attrs={})
    feed = {"x": np.zeros((2, 3), "int8"), "table": np.ones(0, "float32")}
    try:
        got, = paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed, fetch_list=[out])
        print("ran", got.shape)
    except Exception as exc:  # noqa: BLE001 - a clear error is the fixed behaviour
        print("refused:", str(exc).strip().splitlines()[-1][:120])
'''

try:
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True,
                       timeout=300)
    code, out = p.returncode, p.stdout.strip()
except subprocess.TimeoutExpired:
    code, out = "hang", ""
if code != 0:
    print(f"STILL SHOWS: dequantize_log with an empty Dict (a hand-built op desc) kills the "
          f"process (exit {code})")
    sys.exit(1)
print(f"FIXED: dequantize_log with an empty Dict (a hand-built op desc) no longer kills the "
      f"process ({out})")
