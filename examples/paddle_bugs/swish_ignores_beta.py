"""Row 7b, graded NOT A BUG: Paddle 3.3.1's `swish` declares no `beta`.

The row said swish ignores its declared `beta` attr. It does not declare one: the legacy
op proto of Paddle 3.3.1 lists only the framework's own attrs (op_role, op_callstack, ...),
and paddle.nn.functional.swish is documented as x / (1 + exp(-x)) with no beta. (Fluid 1.x's
swish had a `beta`; the earlier row read the Fluid 1.8 declaration.) This prints STILL SHOWS
while the proto still declares no `beta` and F.swish is the documented x * sigmoid(x);
FIXED would mean Paddle changed swish's contract (re-grade the row then).
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F
from paddle.base import framework

attrs = [a.name for a in framework.OpProtoHolder.instance().get_op_proto("swish").attrs]
xs = np.array([-2.0, -0.5, 0.5, 2.0])
got = F.swish(paddle.to_tensor(xs)).numpy()
documented = xs / (1.0 + np.exp(-xs))
if "beta" not in attrs and np.allclose(got, documented):
    print(f"STILL SHOWS: swish declares no beta (attrs {attrs}) and F.swish = x*sigmoid(x) "
          f"as documented: not a bug")
    sys.exit(1)
print(f"FIXED: swish's contract changed (attrs {attrs}); re-grade row 7b")
