"""Row 34, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.concat: the second-order gradient fails when one of its inputs needs no gradient.

x0, x2 with stop_gradient=False, x1 a constant; out = paddle.concat([x0, x1, x2]); the
gradients dx0, dx2 of out under a cotangent dout (create_graph), then d(sum(dx0) + sum(dx2))
/ d(dout). Expected: concat's gradient is a split, linear in dout, so the result is 1 on the
rows of x0 and x2 and 0 on x1's rows (as when every input needs a gradient; PyTorch's
torch.cat gives it). Actual, through the public API in both modes:
- dynamic graph (paddle.grad, create_graph=True): SystemError "(Fatal) Unable to fill empty
  grad inputs due to empty GradSlotMeta";
- legacy static graph (FLAGS_enable_pir_api=0, paddle.static.gradients twice): a raw
  KeyError '@EMPTY@' in paddle/base/backward.py.
Each runs in a child interpreter so this script reports.
"""
import subprocess
import sys

DYGRAPH = r'''
import numpy as np
import paddle
paddle.base.core.disable_signal_handler()
rng = np.random.default_rng(0)
xs = [paddle.to_tensor(rng.random((2, 3)), stop_gradient=(i == 1)) for i in range(3)]
out = paddle.concat(xs, axis=0)
dout = paddle.to_tensor(rng.random((6, 3)), stop_gradient=False)
try:
    dx0, dx2 = paddle.grad(out, [xs[0], xs[2]], grad_outputs=[dout], create_graph=True)
    (ddout,) = paddle.grad(dx0.sum() + dx2.sum(), dout)
    want = np.concatenate([np.ones((2, 3)), np.zeros((2, 3)), np.ones((2, 3))])
    print("ok" if np.allclose(ddout.numpy(), want) else f"wrong {ddout.numpy().tolist()}")
except Exception as e:
    print(f"{type(e).__name__} {str(e).splitlines()[0][:120]}")
'''

STATIC = r'''
import os
os.environ["FLAGS_enable_pir_api"] = "0"
import paddle
paddle.base.core.disable_signal_handler()
paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    xs = [paddle.static.data(f"x{i}", [2, 3], "float64") for i in range(3)]
    xs[0].stop_gradient = xs[2].stop_gradient = False
    out = paddle.concat(xs, axis=0)
    dout = paddle.static.data("dout", [6, 3], "float64")
    dout.stop_gradient = False
    dx0, dx2 = paddle.static.gradients([out], [xs[0], xs[2]], target_gradients=[dout])
    try:
        paddle.static.gradients([dx0, dx2], [dout])
        print("ok")
    except Exception as e:
        print(f"{type(e).__name__} {str(e).splitlines()[0][:120]}")
'''


def run(code):
    try:
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           timeout=300)
        return p.returncode, (p.stdout.strip().splitlines() or [""])[-1]
    except subprocess.TimeoutExpired:
        return "hang", ""


shows = []
for mode, code in (("paddle.grad (dynamic graph)", DYGRAPH),
                   ("paddle.static.gradients (legacy static graph)", STATIC)):
    rc, last = run(code)
    if rc != 0 or last != "ok":
        shows.append(f"{mode}: {last or f'exit {rc}'}")
if shows:
    print("STILL SHOWS: the second-order gradient of paddle.concat with a constant input "
          "fails: " + "; ".join(shows))
    sys.exit(1)
print("FIXED: the second-order gradient of paddle.concat with a constant input is computed")
