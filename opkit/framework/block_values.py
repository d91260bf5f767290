"""What running a block needs on both of its paths (the Executor's plain loop and a prepared
plan): the empty value a declared variable starts a run with, and the LoD-level check of an
op's outputs."""
from __future__ import annotations

from opkit.framework import errors
from opkit.framework.tensor import LoDTensor, LoDTensorArray, SelectedRows

__all__ = ["new_value", "check_lod_levels"]


def new_value(desc):
    """The value a variable declared by `desc` (a VarDesc) starts a run with."""
    if desc.type == "selected_rows":
        return SelectedRows()
    if desc.type == "lod_tensor_array":
        return LoDTensorArray()
    if desc.type in ("lod_tensor",):
        return LoDTensor()
    return None


def check_lod_levels(op, levels, scope) -> None:
    """A LoD output must have the LoD level its variable was declared with."""
    for name, declared in levels:
        var = scope.find_var(name)
        value = var._value if var is not None else None
        if isinstance(value, LoDTensor) and value.is_initialized() and \
                len(value.lod) != declared:
            raise errors.InvalidArgument(
                "output variable '%s' has lod_level %d at compile time but a LoD of level %d "
                "at run time (%s): infer_shape's share_lod/set_lod_level and the kernel's "
                "set_output(..., lod=...) disagree", name, declared, len(value.lod),
                value.lod).with_context(op.type, name)
