"""sequence_pool refuses a valid LoD with more (empty) sequences than rows: X with 2 rows and
LoD [[0, 1, 0, 0, 1, 0]] (six sequences, four of them empty) is refused with "The first
dimension of Input(X) must be large than batch size", and so is an all-empty batch (0 rows,
LoD [[0, 0, 0]]); yet [[0, 1, 0, 0, 5, 0]] (6 rows) is pooled. Empty sequences are valid LoD,
and sequence_pool's `pad_value` attr exists for them ("the value to pad for empty
sequences"); how many rows the non-empty ones hold has no bearing on the result: expected
pad_value for each empty sequence, the pooled row for the others.
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
x = block.create_var(name="x", shape=[-1, 2], dtype="float64", lod_level=1)
out = block.create_var(name="out", dtype="float64")
index = block.create_var(name="index", dtype="int32")
block.append_op(type="sequence_pool", inputs={"X": [x]},
                outputs={"Out": [out], "MaxIndex": [index]},
                attrs={"pooltype": "SUM", "pad_value": 0.5, "is_test": True})
xt = core.LoDTensor()
xt.set(np.array([[1.0, 2.0], [3.0, 4.0]]), core.CPUPlace())
xt.set_recursive_sequence_lengths([[0, 1, 0, 0, 1, 0]])
exe = paddle.static.Executor(paddle.CPUPlace())
try:
    got = np.array(exe.run(main, feed={"x": xt}, fetch_list=["out"], return_numpy=False)[0])
except Exception as exc:  # noqa: BLE001
    line = next((ln for ln in str(exc).splitlines() if "batch size" in ln), str(exc))
    print("STILL SHOWS: sequence_pool refuses 2 rows in 6 sequences (4 empty): "
          + line.strip()[:150])
    sys.exit(1)
want = np.array([[0.5, 0.5], [1, 2], [0.5, 0.5], [0.5, 0.5], [3, 4], [0.5, 0.5]])
if not np.array_equal(got, want):
    print(f"STILL SHOWS: sequence_pool pools 2 rows in 6 sequences to {got.tolist()} "
          f"(expected {want.tolist()})")
    sys.exit(1)
print("FIXED: sequence_pool pools a batch with more empty sequences than rows")
