"""Row 10, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

lookup_table's compile-time infer_shape refuses Ids whose last dim is unknown (-1): "The
last dimensions of the 'Ids' tensor must be 1. But received -1". An unknown dim at compile
time must be accepted and checked at run time.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import paddle  # noqa: E402

paddle.enable_static()
block = paddle.static.Program().global_block()
w = block.create_var(name="w", shape=[17, 8], dtype="float64")
ids = block.create_var(name="ids", shape=[5, -1], dtype="int64")
out = block.create_var(name="out", dtype="float64")
try:
    block.append_op(type="lookup_table", inputs={"W": [w], "Ids": [ids]},
                    outputs={"Out": [out]})
except ValueError as exc:
    print("STILL SHOWS: lookup_table refuses Ids shape [5, -1] at compile time: "
          + str(exc).strip().splitlines()[0][:120])
    sys.exit(1)
print(f"FIXED: lookup_table accepts an unknown Ids dim (Out {list(out.shape)})")
