"""Row 47, graded CONTRACT DIFFERENCE (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.nn.functional.pad in "reflect" (also "replicate", "circular") mode on a 5-D input
whose padded depth is 0: Paddle returns a zero-filled padded tensor.

numpy.pad refuses ("can't extend empty axis ... using modes other than 'constant' or
'empty'") and torch.nn.functional.pad refuses (it needs non-zero dims besides the batch);
Paddle's own pad3d kernel refuses reflect padding not smaller than the dim on a non-empty
input ("Expected in_depth > pads[4]"), but a zero-size input returns before that check.
There is nothing to reflect, so no value is right: Paddle's zeros are a convention, no
wrong number; documented, not counted as a bug.
"""
import sys

import numpy as np
import paddle
import paddle.nn.functional as F

x = paddle.to_tensor(np.zeros((1, 1, 0, 3, 3), "float32"))
try:
    y = F.pad(x, [1, 1, 1, 1, 2, 2], mode="reflect", data_format="NCDHW")
except ValueError as exc:
    print(f"FIXED: reflect padding of an empty dim is refused: {str(exc).strip()[:120]}")
    sys.exit(0)
print(f"STILL SHOWS: F.pad(reflect) of a [1, 1, 0, 3, 3] input gives shape {list(y.shape)}, "
      f"values {np.unique(y.numpy()).tolist()} (numpy.pad and torch refuse)")
sys.exit(1)
