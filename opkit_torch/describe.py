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
    """{"CPU": [float dtypes]} (and "GPU" where CUDA is available). A torch op's registration
    does not say which dtypes its kernel takes: an op whose tensor arguments are all plain
    `Tensor`s and whose other arguments all have defaults is probed with a small tensor of
    each float dtype, and a dtype its kernel says it lacks ("not implemented for 'Half'") is
    left out; any other op lists every float dtype (a missing one shows when it runs)."""
    torch = env.load()
    places = {"CPU": _probe(op_type, "cpu")}
    if torch.cuda.is_available():
        places["GPU"] = list(FLOAT_DTYPES)
    return places


def _probe(op_type: str, device: str) -> list:
    from opkit_torch import convert
    from opkit_torch.errors import no_kernel
    from opkit_torch.schema import REQUIRED as NONE

    from opkit_torch.declared import probe

    s = read(op_type)
    sample = probe(op_type)
    if sample is None and (any(a.kind != "tensor" for a in s.tensor_args) or s.writes or
                           any(a.default is NONE for a in s.attr_args)):
        return list(FLOAT_DTYPES)
    torch = env.load()
    kept = []
    for dtype in FLOAT_DTYPES:
        tdtype = convert.torch_dtype(dtype)
        if sample is None:
            args = [torch.rand(3, 3, device=device).to(tdtype) + 0.5 for _ in s.tensor_args]
        else:       # the op's own valid sample (opkit_torch.declared.PROBES)
            shapes, attrs = sample
            args = [_zeros(torch, shapes[a.name], device, tdtype)
                    if a.kind != "attr" else attrs[a.name] for a in s.args]
        try:
            env.resolve(op_type)(*args)
        except Exception as exc:  # noqa: BLE001 - only a missing kernel removes the dtype
            if no_kernel(exc):
                continue
        kept.append(dtype)
    return kept

def _zeros(torch, shape, device, dtype):
    """Zeros of `shape` in the probed float dtype, or of a declared dtype: a shape given
    as ("int32", (sizes...)) (an index input such as torchvision's channel_mapping)."""
    if len(shape) == 2 and isinstance(shape[0], str):
        return torch.zeros(shape[1], device=device, dtype=getattr(torch, shape[0]))
    return torch.zeros(shape, device=device, dtype=dtype)


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
    types = {a.name: _ATTR_TYPES.get(a.type, "scalar") for a in s.attr_args}
    return OpDescription(op_type, inputs, outputs, attrs, grad, floats, writes,
                         attr_types=types)


#: a schema argument's type -> opkit's attr type (harness.backend.declared); any other
#: (an Optional, a ScalarType, ...) is "scalar": the checks keep it as given
_ATTR_TYPES = {"int": "int", "SymInt": "int", "float": "float", "number": "float",
               "bool": "bool", "str": "string", "List[int]": "ints",
               "List[SymInt]": "ints", "List[float]": "floats", "List[bool]": "bools"}

