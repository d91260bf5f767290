"""Row 21, graded CONTRACT DIFFERENCE: paddle.static.nn.sequence_pool's compile-time
output shape is X's ([8, 5]); at run time it has one row per sequence ([2, 5]).

Through the public API (the legacy static graph, FLAGS_enable_pir_api=0, as the sequence
layers' own error message asks). The number of sequences is known only at run time, so the
compile-time dim 0 should be unknown (-1). Fluid's long-standing convention copies X's
compile-time dims to Out; with the usual declaration of a LoD input, [-1, 5], Out is
[-1, 5] and right - only a LoD input declared with a fixed row count shows it. (Paddle's
COMPILE_RUN_OP_WHITE_LIST, which lists sequence_pool, concerns lod_level, not this dim.)
STILL SHOWS while compile time says [8, 5].
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()
main, startup = paddle.static.Program(), paddle.static.Program()
with paddle.static.program_guard(main, startup):
    x = paddle.static.data("x", [8, 5], "float64", lod_level=1)
    out = paddle.static.nn.sequence_pool(x, pool_type="sum")
feed = paddle.base.create_lod_tensor(np.ones((8, 5)), [[3, 5]], paddle.CPUPlace())
run = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": feed},
                                                    fetch_list=[out])[0].shape
if list(out.shape) != list(run) and out.shape[0] != -1:
    print(f"STILL SHOWS: sequence_pool's compile-time shape is {list(out.shape)}, run-time "
          f"{list(run)} (expected dim 0 unknown, -1)")
    sys.exit(1)
print(f"FIXED: sequence_pool's compile-time shape is {list(out.shape)}")
