"""aten::native_batch_norm writes running_mean / running_var in training mode, and its
schema does not declare the write.

Grade: contract difference (the schema's alias annotations are the op's declaration of what
it writes; functionalization, torch.compile and opcheck's schema test read them).

    aten::native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean,
                            Tensor? running_var, bool training, float momentum, float eps)
        -> (Tensor, Tensor, Tensor)

`running_mean` is `Tensor?`, not `Tensor(a!)?`, yet a training-mode call updates it in
place. PyTorch added `_native_batch_norm_legit` (whose schema says `Tensor(a!) running_mean`)
for its compiler stack; the old op keeps the undeclared write. Found by opkit's `mutation`
check on the torch backend (docs/torch.md).

Prints STILL SHOWS (the write happens and the schema does not declare it) or FIXED.
"""
import torch

op = torch.ops.aten.native_batch_norm.default
declared = [a.name for a in op._schema.arguments
            if a.alias_info is not None and a.alias_info.is_write]
x = torch.randn(4, 3, dtype=torch.float64)
running_mean, running_var = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
before = running_mean.clone()
op(x, None, None, running_mean, running_var, True, 0.1, 1e-5)
written = not torch.equal(before, running_mean)
print(f"schema: {op._schema}")
print(f"declared writes: {declared}; running_mean written by the call: {written}")
print("STILL SHOWS" if written and "running_mean" not in declared else "FIXED")
