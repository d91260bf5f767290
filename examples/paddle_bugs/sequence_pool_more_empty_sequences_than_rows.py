"""Row 20, graded CONTRACT DIFFERENCE: paddle.static.nn.sequence_pool refuses more
(empty) sequences than X has rows.

Through the public API (the legacy static graph, FLAGS_enable_pir_api=0, as the sequence
layers' own error message asks): X with 2 rows and LoD lengths [1, 0, 0, 1, 0] (five
sequences, three empty). An empty sequence is valid LoD and `pad_value` exists for it, so
[x0, pad, pad, x1, pad] would be the result; Paddle refuses with InvalidArgument "The first
dimension of Input(X) must be large than batch size" - a deliberate check as old as the op
(Fluid 1.x has the same enforce), and a clear error. STILL SHOWS while Paddle refuses it.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [-1, 1], "float64", lod_level=1)
    out = paddle.static.nn.sequence_pool(x, pool_type="sum", pad_value=9.0)
feed = paddle.base.create_lod_tensor(np.array([[1.0], [2.0]]), [[1, 0, 0, 1, 0]],
                                     paddle.CPUPlace())
try:
    got = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": feed},
                                                        fetch_list=[out])[0].ravel().tolist()
except Exception as e:    # noqa: BLE001 - the refusal is what this reports
    msg = next((s for s in str(e).splitlines() if "must be large than" in s), str(e)[:120])
    print(f"STILL SHOWS: sequence_pool with 5 sequences on 2 rows is refused: {msg.strip()} "
          f"(pad_value would give [1, 9, 9, 2, 9])")
    sys.exit(1)
print(f"FIXED: sequence_pool pads the empty sequences: {got}")
