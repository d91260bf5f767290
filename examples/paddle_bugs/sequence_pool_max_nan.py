"""sequence_pool with pooltype MAX drops NaN: the max of the sequence [1, NaN, 3] is 3. numpy's
max and torch.max propagate NaN; a NaN in a sequence must give NaN, or a diverged activation is silently hidden (as row 6, max pool2d).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402
from paddle.base import core  # noqa: E402

paddle.enable_static()
main = paddle.static.Program()
block = main.global_block()
x = block.create_var(name="x", shape=[-1, 1], dtype="float64", lod_level=1)
out = block.create_var(name="out", dtype="float64")
index = block.create_var(name="index", dtype="int32")
block.append_op(type="sequence_pool", inputs={"X": [x]},
                outputs={"Out": [out], "MaxIndex": [index]},
                attrs={"pooltype": "MAX", "is_test": False})
xt = core.LoDTensor()
xt.set(np.array([[1.0], [np.nan], [3.0], [2.0]]), core.CPUPlace())
xt.set_recursive_sequence_lengths([[3, 1]])
exe = paddle.static.Executor(paddle.CPUPlace())
got = np.array(exe.run(main, feed={"x": xt}, fetch_list=["out"], return_numpy=False)[0])
if not np.isnan(got[0, 0]):
    print(f"STILL SHOWS: MAX pooling of the sequence [1, NaN, 3] = {got[0, 0]} (expected NaN, "
          f"as numpy.max)")
    sys.exit(1)
print("FIXED: sequence_pool MAX propagates NaN")
