"""aten::logit (torch.logit) on CPU float16 / bfloat16 tensors gives about four elements in
ten other than the float32 result rounded once, up to 512 float16 ulps off near x = 0.5
(where logit(x) = log(x / (1 - x)) is near 0): the kernel computes x / (1 - x) in the
storage dtype, where the other float16 activations (sigmoid, tanh, ...) compute in float32
and round once.

Grade: contract difference (precision: nothing documents a float16 / bfloat16 logit less
accurate than one rounding of its float32 value). Found by opkit's
`precision` check on the torch backend (`opkit test aten::logit --backend torch`: 11 of 20
float16 elements more than half an ulp from the float64 result, worst 14.9 ulp).

Prints STILL SHOWS (some float16 element differs from the float32 logit rounded once) or
FIXED.
"""
import torch

torch.manual_seed(0)
x = (torch.rand(10000, dtype=torch.float64) * 0.98 + 0.01).to(torch.float16)
got = torch.logit(x)
once = torch.logit(x.float()).to(torch.float16)
off = int((got != once).sum())
print(f"float16 logit, 10000 elements in (0.01, 0.99): {off} are not the float32 result "
      f"rounded once")
print("STILL SHOWS" if off else "FIXED")
