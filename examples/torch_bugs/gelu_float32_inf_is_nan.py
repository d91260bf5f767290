"""aten::gelu (torch.nn.functional.gelu, approximate="none") on CPU gives NaN for +inf in
float32 and bfloat16 tensors of more than one element, where gelu(+inf) = +inf: the same
value in a one-element tensor, in float64 / float16, or with approximate="tanh" gives inf.
The vectorized erf kernel computes x * 0.5 * (1 + erf(x / sqrt(2))) with inf * ... hitting
inf - inf or 0 * inf on the way; the scalar path does not.

Grade: public API (a wrong value at an extremal input of a public function; the result
depends on the tensor's length). Found by `opkit test gelu --against torch`: opkit's gelu
and the OpTest's expected output say inf, torch NaN (explore's derived case with +inf).

Prints STILL SHOWS (float32 gelu of [inf, inf] is NaN while gelu of [inf] is inf) or
FIXED.
"""
import torch
import torch.nn.functional as F

one = F.gelu(torch.tensor([float("inf")]))[0].item()
two = F.gelu(torch.tensor([float("inf"), float("inf")]))[0].item()
f64 = F.gelu(torch.tensor([float("inf"), float("inf")], dtype=torch.float64))[0].item()
print(f"gelu(+inf): float32 length 1: {one}, float32 length 2: {two}, float64: {f64}")
print("STILL SHOWS" if two != two and one == float("inf") else "FIXED")
