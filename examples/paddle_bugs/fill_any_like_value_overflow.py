"""fill_any_like into an int32 output refuses a value out of int32's range (3e9: Paddle's
own check, "The filled value is out of range for target type"), yet fills -2147483648
silently for value=1e100 (the legacy op's `value` attr is a float32 attr, so 1e100 is
stored as inf) and for inf or NaN: the range check exempts inf/NaN, and casting them to an
integer is undefined in C++ (here INT32_MIN). paddle.full_like(int32 tensor, inf) does the
same. Fluid 1.8's own test TestFillAnyLikeOpOverflow (value 1e100, int32) expects an error.
"""
import os
import sys

os.environ["FLAGS_enable_pir_api"] = "0"
import numpy as np  # noqa: E402
import paddle  # noqa: E402

paddle.enable_static()


def fill(value):
    main = paddle.static.Program()
    block = main.global_block()
    x = block.create_var(name="x", shape=[2], dtype="int32")
    out = block.create_var(name="out", dtype="int32")
    block.append_op(type="fill_any_like", inputs={"X": [x]}, outputs={"Out": [out]},
                    attrs={"value": value})
    exe = paddle.static.Executor(paddle.CPUPlace())
    try:
        got = exe.run(main, feed={"x": np.zeros([2], "int32")}, fetch_list=["out"])[0]
    except Exception as e:  # noqa: BLE001 - a refusal is the expected answer
        return f"refused ({type(e).__name__})"
    return got.tolist()


results = {v: fill(v) for v in (3e9, 1e100, float("inf"), float("nan"))}
if not str(results[3e9]).startswith("refused"):
    print(f"STILL SHOWS (and 3e9 is no longer refused either): {results}")
    sys.exit(1)
silent = {v: r for v, r in results.items() if not str(r).startswith("refused")}
if silent:
    print(f"STILL SHOWS: fill_any_like into int32 refuses value=3e9 but fills "
          f"{', '.join(f'value={v!r} -> {r}' for v, r in silent.items())} silently "
          f"(expected InvalidArgument: not representable in int32)")
    sys.exit(1)
print("FIXED: fill_any_like refuses 1e100, inf and NaN into int32 as it refuses 3e9")
