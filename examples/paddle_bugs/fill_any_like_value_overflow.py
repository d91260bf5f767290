"""Row 38, graded BUG, PUBLIC API (docs/paddle.md, "Bugs found in Paddle 3.3.1").

paddle.full_like(int32 tensor, inf or NaN) fills -2147483648 silently.

Expected: InvalidArgument, as Paddle's own range check gives for 3e9 and for 1e100 ("The
filled value is out of range for target type"). Actual: every element -2147483648: the check
exempts inf and NaN, and converting them to an integer is undefined behaviour in C++.
(The legacy fill_any_like op stores a float attr, so a value of 1e100 there becomes inf too.)
"""
import sys

import paddle

base = paddle.ones([3], dtype="int32")
shown = []
for value in (float("inf"), float("-inf"), float("nan")):
    try:
        got = paddle.full_like(base, value).numpy().tolist()
    except ValueError:
        continue
    shown.append(f"full_like(int32, {value}) = {got}")
try:
    paddle.full_like(base, 3e9)
    refused = "3e9 is not refused either"
except ValueError:
    refused = "3e9 and 1e100 are refused with InvalidArgument"
if shown:
    print(f"STILL SHOWS: {'; '.join(shown)} (expected InvalidArgument; {refused})")
    sys.exit(1)
print("FIXED: paddle.full_like refuses inf and NaN for an int32 tensor")
