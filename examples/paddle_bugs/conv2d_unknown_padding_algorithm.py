"""Row 27, graded NOT A BUG (docs/paddle.md, "Bugs found in Paddle 3.3.1").

conv2d (and depthwise_conv2d, pool2d) accept any string as `padding_algorithm` and run it
as "EXPLICIT": a typo such as "SAEM" silently gives the explicitly
padded result instead of SAME padding. The proto documents the attr as one of "EXPLICIT",
"SAME", "VALID"; an unknown value must be refused (InvalidArgument), as
paddle.nn.functional.conv2d refuses an unknown `padding` string.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()


def conv(algorithm):
    main = paddle.static.Program()
    block = main.global_block()
    x = block.create_var(name="x", shape=[1, 1, 5, 5], dtype="float64")
    w = block.create_var(name="w", shape=[1, 1, 3, 3], dtype="float64")
    out = block.create_var(name="out", dtype="float64")
    block.append_op(type="conv2d", inputs={"Input": [x], "Filter": [w]},
                    outputs={"Output": [out]},
                    attrs={"strides": [1, 1], "paddings": [0, 0], "dilations": [1, 1],
                           "groups": 1, "padding_algorithm": algorithm})
    feed = {"x": np.arange(25.0).reshape(1, 1, 5, 5), "w": np.ones((1, 1, 3, 3))}
    return paddle.static.Executor(paddle.CPUPlace()).run(main, feed=feed,
                                                         fetch_list=["out"])[0]


try:
    got = conv("SAEM")
except Exception as exc:  # noqa: BLE001 - any refusal is the fix
    print("FIXED: conv2d refuses padding_algorithm='SAEM': "
          + str(exc).strip().splitlines()[0][:100])
    sys.exit(0)
explicit = conv("EXPLICIT")
print(f"STILL SHOWS: conv2d with padding_algorithm='SAEM' runs "
      f"({'as EXPLICIT' if np.array_equal(got, explicit) else 'as neither'}, output shape "
      f"{list(got.shape)}); expected a refusal: the attr is EXPLICIT, SAME or VALID")
sys.exit(1)
