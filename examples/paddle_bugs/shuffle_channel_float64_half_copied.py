"""Row 51, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

The legacy `shuffle_channel` op's float64 CPU kernel copies only half of each channel's
data: x = arange(32) as float64 [2, 4, 2, 2], group 2, gives [0, 1, 0, 0, 8, 9, 0, 0, ...]
where the float32 kernel gives the channel shuffle [0, 1, 2, 3, 8, 9, 10, 11, ...]; the
other half is whatever the output buffer held (opkit's sweep saw 8.9e276 and NaN there).

Graded by docs/paddle.md's standard like row 25: only a hand-built op desc reaches it (Fluid
1.x's fluid.layers.shuffle_channel wrote the op; Paddle 3.3.1's public
paddle.nn.functional.channel_shuffle builds another op, `channel_shuffle`), and nothing
crashes. The kernel is wrong all the same: a float64 program saved by Fluid 1.x would get
these values. Expected: x.reshape(2, 2, 2, 2, 2).transpose(0, 2, 1, 3, 4) (the op's own
docs; its float32 kernel gives it).
"""
import sys

import numpy as np
import paddle

paddle.enable_static()


def run(dtype):
    with paddle.pir_utils.OldIrGuard():
        main = paddle.static.Program()
        with paddle.static.program_guard(main):
            x = paddle.static.data("x", [2, 4, 2, 2], dtype)
            out = main.global_block().create_var(name="out", dtype=dtype, shape=[2, 4, 2, 2])
            main.global_block().append_op(type="shuffle_channel", inputs={"X": x},
                                          outputs={"Out": out}, attrs={"group": 2})
        xv = np.arange(32, dtype=dtype).reshape(2, 4, 2, 2)
        got, = paddle.static.Executor(paddle.CPUPlace()).run(main, feed={"x": xv},
                                                             fetch_list=[out])
    return got, xv.reshape(2, 2, 2, 2, 2).transpose(0, 2, 1, 3, 4).reshape(2, 4, 2, 2)


got32, want32 = run("float32")
got64, want64 = run("float64")
if np.array_equal(got32, want32) and not np.array_equal(got64, want64):
    print(f"STILL SHOWS: shuffle_channel float64 gives {got64.ravel()[:8].tolist()} where "
          f"float32 gives {got32.ravel()[:8].tolist()}")
    sys.exit(1)
print("FIXED: shuffle_channel's float64 kernel gives the float32 kernel's channel shuffle")
