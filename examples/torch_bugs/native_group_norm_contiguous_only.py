"""aten::native_group_norm refuses a non-contiguous input (TORCH_CHECK
"Expected X.is_contiguous(memory_format) to be true") that every other op of its family
takes; the public `torch.nn.functional.group_norm` makes the input contiguous first.

Grade: contract difference (the op's schema, `native_group_norm(Tensor input, ...)`, says
nothing about layout; torch.compile and custom callers reach the aten op directly, and
`native_layer_norm` / `native_batch_norm` take the same input in Fortran order). The public
API is not affected. Found by opkit's `layout` check on the torch backend (docs/torch.md):
the input fed in Fortran order.

Prints STILL SHOWS (the aten op refuses the transposed input the public API accepts) or
FIXED.
"""
import torch

x = torch.randn(3, 4, 2, dtype=torch.float64)           # N=2, C=4, HxW=3 after the permute
strided = x.permute(2, 1, 0)                             # shape (2, 4, 3), not contiguous
w, b = torch.ones(4, dtype=torch.float64), torch.zeros(4, dtype=torch.float64)
public = torch.nn.functional.group_norm(strided, 2, w, b, 1e-5)
try:
    out = torch.ops.aten.native_group_norm.default(strided, w, b, 2, 4, 3, 2, 1e-5)[0]
    refused = None
    same = torch.allclose(out, public)
except RuntimeError as exc:
    refused = str(exc).splitlines()[0]
    same = False
print(f"input strides {strided.stride()} (contiguous: {strided.is_contiguous()})")
print(f"torch.nn.functional.group_norm: runs, shape {tuple(public.shape)}")
print(f"aten::native_group_norm: {'refuses: ' + refused if refused else 'runs, same values: ' + str(same)}")
print("STILL SHOWS" if refused else "FIXED")
