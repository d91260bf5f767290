"""Row 44, graded CONTRACT DIFFERENCE (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.lerp does not differentiate its `weight` (graded a contract difference).

x, y, weight all with stop_gradient=False; paddle.lerp(x, y, weight).sum().backward().
PyTorch's lerp gives weight the gradient sum(y - x) (since PyTorch 1.4; before, it raised
"the derivative for 'weight' is not implemented"). Paddle: weight.grad is None after
backward(), and paddle.grad(out, weight) says weight "does not appear in the backward graph":
lerp_grad has no weight output. Paddle's docstring promises no weight gradient, but none is
refused either: backward() leaves it None silently.
"""
import sys

import paddle

x = paddle.to_tensor([1.0, 2.0], stop_gradient=False)
y = paddle.to_tensor([3.0, 5.0], stop_gradient=False)
w = paddle.to_tensor([0.5], stop_gradient=False)
paddle.lerp(x, y, w).sum().backward()
want = float((y - x).sum())
if w.grad is None:
    print(f"STILL SHOWS: paddle.lerp's weight gets no gradient (None; PyTorch gives "
          f"sum(y - x) = {want})")
    sys.exit(1)
print(f"FIXED: paddle.lerp's weight gradient is {w.grad.numpy().tolist()} (sum(y - x) = {want})")
