"""What the torch backend declares about an op before any run: its schema as slots and
attrs (opkit_torch.schema), whether it has a gradient, its kernels (places x dtypes)."""
from __future__ import annotations

import functools

from opkit_torch import env
from opkit_torch.schema import REQUIRED as NO_DEFAULT
from opkit_torch.schema import read

__all__ = ["has_op", "has_grad", "kernel_places", "description", "FLOAT_DTYPES"]

FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")

_AUTOGRAD_KEYS = ("Autograd", "AutogradCPU", "CompositeImplicitAutograd")


def has_op(op_type: str) -> bool:
    if not env.is_torch_name(op_type) or env.missing():
        return False
    try:
        env.resolve(op_type)
    except ValueError:
        return False
    return True


@functools.lru_cache(maxsize=None)
def has_grad(op_type: str) -> bool:
    """The op has an autograd registration (a kernel for an Autograd key, or a composite
    one autograd traces through) and a float tensor can reach it. Whether a given input
    gets a gradient shows in a run (None / zeros)."""
    torch = env.load()
    name = env.resolve(op_type).name()
    if not read(op_type).tensor_args:
        return False
    if _custom_op_without_backward(name):
        return False
    return any(torch._C._dispatch_has_kernel_for_dispatch_key(name, key)
               for key in _AUTOGRAD_KEYS)


def _custom_op_without_backward(qualname: str) -> bool:
    """A `torch.library.custom_op` op with no `register_autograd`: its Autograd kernel only
    raises "no autograd formula was registered"."""
    try:
        from torch._library.custom_ops import _maybe_get_opdef
    except ImportError:           # another torch: the registration decides
        return False
    opdef = _maybe_get_opdef(qualname)
    return opdef is not None and getattr(opdef, "_backward_fn", True) is None


@functools.lru_cache(maxsize=None)
def kernel_places(op_type: str) -> dict:
    """{"CPU": [float dtypes]} (and "GPU" where CUDA is available): the op's registration
    says nothing per dtype, so every float dtype is listed; one the kernel lacks shows as
    the op refusing ("not implemented for 'Half'"), which the dtype checks report as such."""
    torch = env.load()
    places = {"CPU": list(FLOAT_DTYPES)}
    if torch.cuda.is_available():
        places["GPU"] = list(FLOAT_DTYPES)
    return places


def description(op_type: str):
    """The op's harness.backend.contract.OpDescription from its schema: Tensor arguments
    are input slots (`Tensor[]` duplicable, `Tensor?` dispensable), the others attrs with
    their defaults, `(a!)` arguments the declared writes, the returns the output slots."""
    from harness.backend.contract import REQUIRED, OpDescription, Slot

    s = read(op_type)
    inputs = tuple(Slot(a.name, a.kind == "tensors", a.kind == "optional_tensor")
                   for a in s.tensor_args)
    outputs = tuple(Slot(name, is_list) for name, _t, is_list, _a in s.outputs)
    attrs = {a.name: (REQUIRED if a.default is NO_DEFAULT else a.default)
             for a in s.attr_args}
    grad = has_grad(op_type)
    floats = tuple(a.name for a in s.tensor_args) if grad else ()
    writes = {}
    for name, _t, _l, _alias in s.outputs:       # a returned alias of a written input
        source = s.views.get(name)
        if source in s.writes:
            writes[name] = source
    for w in s.writes:                           # a written input no output returns
        if w not in writes.values():
            writes[w] = w
    return OpDescription(op_type, inputs, outputs, attrs, grad, floats, writes)

