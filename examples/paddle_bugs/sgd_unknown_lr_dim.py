"""Row 10b, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

sgd's compile-time infer_shape refuses a LearningRate whose dim is unknown (-1): "Learning
rate should have 1 element. But received LearningRate dims [-1]". An unknown dim at compile
time must be accepted and checked at run time (as rows 9 and 10).
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import paddle  # noqa: E402

paddle.enable_static()
block = paddle.static.Program().global_block()
param = block.create_var(name="p", shape=[-1, 4], dtype="float64")
grad = block.create_var(name="g", shape=[-1, 4], dtype="float64")
lr = block.create_var(name="lr", shape=[-1], dtype="float64")
out = block.create_var(name="p_out", dtype="float64")
try:
    block.append_op(type="sgd", inputs={"Param": [param], "Grad": [grad], "LearningRate": [lr]},
                    outputs={"ParamOut": [out]})
except ValueError as exc:
    lines = [ln.strip() for ln in str(exc).splitlines() if "(InvalidArgument)" in ln]
    print("STILL SHOWS: sgd refuses LearningRate shape [-1] at compile time: "
          + (lines[0] if lines else str(exc).strip())[:120])
    sys.exit(1)
print(f"FIXED: sgd accepts an unknown LearningRate dim (ParamOut {list(out.shape)})")
