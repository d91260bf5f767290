"""numpy <-> torch for the torch backend: arrays to tensors (copies, strides kept), tensors
to arrays (bfloat16 through ml_dtypes), attr values to what the schema's type takes."""
from __future__ import annotations

import numpy as np

from opkit_torch import env

__all__ = ["to_tensor", "to_numpy", "as_tensor", "attr_value", "device_of", "torch_dtype"]


def device_of(place) -> str:
    """torch's device name of an opkit place (None / CPU: "cpu", GPU: "cuda")."""
    kind = getattr(place, "kind", None) or (place if isinstance(place, str) else "CPU")
    return "cuda" if str(kind).upper() == "GPU" else "cpu"


def _bfloat16(dtype) -> bool:
    return dtype.kind == "V" and dtype.name == "bfloat16"     # ml_dtypes' bfloat16


def to_tensor(data, device: str = "cpu"):
    """A new tensor holding `data` (never sharing its memory). Positive strides are kept (a
    transposed or sliced array gives a non-contiguous tensor of the same strides); an array
    with zero or negative strides becomes contiguous."""
    torch = env.load()
    a = np.asarray(data)
    if a.dtype.kind in "fiub" and a.flags.c_contiguous and a.flags.writeable and a.size:
        t = torch.from_numpy(a)                   # the common case, first
        return t.clone() if device == "cpu" else t.to(device, copy=True)
    if _bfloat16(a.dtype):
        return to_tensor(a.view(np.int16), device).view(torch.bfloat16)
    strides = [s // a.itemsize for s in a.strides] if a.itemsize else []
    if a.flags.c_contiguous and a.flags.writeable and a.size:
        return torch.from_numpy(a).to(device, copy=True)
    if a.size == 0 or a.ndim == 0 or any(s <= 0 for s in strides) or \
            any(s % a.itemsize for s in a.strides):
        return torch.from_numpy(np.array(a, copy=True, order="C")).to(device)
    source = torch.from_numpy(a)                  # shares a's memory, a's strides
    out = torch.empty_strided(tuple(a.shape), tuple(strides), dtype=source.dtype,
                              device=device)
    out.copy_(source)
    return out


def as_tensor(data, like):
    """A tensor of `data` with the dtype and device of tensor `like`, sharing `data`'s memory
    where it can (for read-only uses: a cotangent)."""
    a = np.asarray(data)
    if a.dtype.kind in "fiub" and a.flags.c_contiguous and a.flags.writeable:
        t = env.load().from_numpy(a)              # the common case, first
        return t if t.dtype == like.dtype and like.is_cpu else \
            t.to(like.device, like.dtype)
    if _bfloat16(a.dtype) or not a.flags.c_contiguous or not a.flags.writeable:
        return to_tensor(a, like.device).to(like.dtype)
    return env.load().from_numpy(a).to(like.device, like.dtype)


def to_numpy(t) -> np.ndarray:
    """A numpy copy of tensor (or python scalar) `t`."""
    try:                     # the common case first: a CPU tensor of a dtype numpy holds
        return t.detach().numpy().copy()
    except (AttributeError, TypeError, RuntimeError):
        pass                 # a python scalar; bfloat16, another device, a conj/neg bit
    torch = env.load()
    if not isinstance(t, torch.Tensor):
        return np.asarray(t)
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        import ml_dtypes

        return t.contiguous().view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    if t.is_conj() or t.is_neg():
        t = t.resolve_conj().resolve_neg()
    return t.numpy().copy()


def torch_dtype(name):
    """torch's dtype of a numpy dtype name ("float32") or a torch dtype."""
    torch = env.load()
    if isinstance(name, torch.dtype):
        return name
    name = np.dtype(name).name if not isinstance(name, str) else name
    value = getattr(torch, name, None)
    if not isinstance(value, torch.dtype):
        raise ValueError(f"no torch dtype {name!r}")
    return value


def attr_value(arg, value):
    """`value` (a python or numpy value from an OpTest's attrs) as the schema argument
    `arg` takes it."""
    if isinstance(value, np.generic):
        value = value.item()
    elif isinstance(value, np.ndarray):
        value = value.tolist()
    elif isinstance(value, tuple):
        value = list(value)
    if value is None:
        return None
    t = arg.type
    if isinstance(value, str) and t in ("Optional[int]", "int"):   # ScalarType: "float32"
        return torch_dtype(value)
    if t.endswith("Device") or t == "Optional[Device]":
        return env.load().device(value)
    return value
