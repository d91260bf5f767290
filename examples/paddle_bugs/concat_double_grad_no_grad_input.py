"""concat: second-order gradients when one of its inputs needs no gradient fail.

Through Paddle's public API (legacy static graph, paddle.static.gradients twice, x1 with
stop_gradient=True) the second call raises a raw `KeyError: '@EMPTY@'` in
paddle/base/backward.py. Beneath it, Paddle's grad maker (core.get_grad_op_desc on the
concat_grad op the first call made, whose X@GRAD slot is [x0@GRAD, @EMPTY@, x2@GRAD]) makes a
`concat` op reading `@EMPTY@@GRAD`, a gradient of no variable, which no op writes and whose
compile-time infer_shape crashes (SIGSEGV). Expected: concat_grad is linear in Out@GRAD, so
d(sum(w0*dx0 + w2*dx2))/d(dOut) = concat([w0, 0, w2]) is computed (as it is when every input
needs a gradient).
"""
import subprocess
import sys

PUBLIC = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import paddle
paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    xs = [paddle.static.data(f"x{i}", [2, 3], "float64") for i in range(3)]
    xs[0].stop_gradient = xs[2].stop_gradient = False
    xs[1].stop_gradient = True
    out = paddle.concat(xs, axis=0)
    dout = paddle.static.data("dout", [6, 3], "float64")
    dout.stop_gradient = False
    dx0, dx2 = paddle.static.gradients([out], [xs[0], xs[2]], target_gradients=[dout])
    try:
        paddle.static.gradients([dx0, dx2], [dout])
        print("built")
    except KeyError as exc:
        print(f"KeyError {exc}")
'''

MAKER = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import paddle
from paddle.base import core
core.disable_signal_handler()       # die of the signal, not hang in Paddle's handler
paddle.enable_static()
block = paddle.static.Program().global_block()
xs = [block.create_var(name=f"x{i}", shape=[2, 3], dtype="float64") for i in range(3)]
out = block.create_var(name="out", dtype="float64")
op = block.append_op(type="concat", inputs={"X": xs}, outputs={"Out": [out]},
                     attrs={"axis": 0})
(grad,), _ = core.get_grad_op_desc(op.desc, {"x1@GRAD"}, [])
print(grad.type(), grad.output("X@GRAD"), flush=True)
(double,), _ = core.get_grad_op_desc(grad, set(), [])
print("made" if "@EMPTY@@GRAD" not in double.input_arg_names() else
      f"reads {double.input('X')}")
'''


def run(code):
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=120)
        return p.returncode, p.stdout.strip().splitlines()[-1:] or [""]
    except subprocess.TimeoutExpired:
        return "hang", [""]


code1, (last1,) = run(PUBLIC)
code2, (last2,) = run(MAKER)
shows = []
if code1 != 0 or last1 != "built":
    shows.append(f"paddle.static.gradients raised {last1 or f'(exit {code1})'}")
if code2 != 0 or last2 != "made":
    shows.append(f"the double-grad maker of concat_grad {last2 or f'(exit {code2})'}")
if shows:
    print("STILL SHOWS: second order of concat with a stop_gradient input: "
          + "; ".join(shows))
    sys.exit(1)
print("FIXED: second-order gradients of concat with a stop_gradient input are built")
