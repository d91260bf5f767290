"""A Paddle op desc's attrs with their attr types, and setting them back with those types.

A grad op Paddle's grad maker made (`core.get_grad_op_desc`) carries typed attrs (a FLOAT
`alpha`, a LONG seed); pybind's plain `_set_attr` would guess the type from the Python value
(a float becomes FLOAT, an int INT), so a grad op rebuilt on its own
(opkit_paddle.backend.grad_op) sets each attr with its own type again.
"""
from __future__ import annotations

__all__ = ["TypedAttrs", "typed_attrs", "set_typed_attr", "as_stored"]

FLOAT, FLOATS = 1, 4      # Paddle's AttrType numbers of 32-bit float attrs

EMPTY = "@EMPTY@"
# attrs Paddle's framework adds to every op (roles, call stacks): not the op's own
ROLE_ATTRS = {"op_role", "op_role_var", "op_namescope", "op_callstack", "op_device",
              "with_quant_attr"}


class TypedAttrs(dict):
    """{attr name: value} of a Paddle op desc; `types` = {attr name: AttrType number};
    `outputs`: {slot: names} of the desc's output slots as the grad maker made them, Paddle's
    empty name (@EMPTY@: a gradient in the no_grad_set) and empty slots included; a grad op
    rebuilt on its own keeps those names in place (a duplicable slot positionally), as
    `append_backward`'s program does: Paddle's double-grad makers read them."""

    def __init__(self, values=(), types=None, outputs=None):
        super().__init__(values)
        self.types = dict(types or {})
        self.outputs = dict(outputs or {})


def typed_attrs(desc) -> TypedAttrs:
    """The op desc's own attrs (no role attrs, no block or variable attrs) with their types."""
    values, types = {}, {}
    for name in desc.attr_names():
        if name in ROLE_ATTRS:
            continue
        try:
            kind = int(desc.attr_type(name))
            value = desc.attr(name)
        except Exception:  # noqa: BLE001 - block / var attrs have no plain value
            continue
        if kind in _SKIPPED:
            continue
        values[name] = value
        types[name] = kind
    outputs = {slot: list(desc.output(slot)) for slot in desc.output_names()}
    return TypedAttrs(values, types, outputs)


# AttrType numbers (paddle/fluid/framework/framework.proto)
_SETTERS = {0: "_set_int32_attr", 1: "_set_float32_attr", 2: "_set_str_attr",
            3: "_set_int32s_attr", 4: "_set_float32s_attr", 5: "_set_strs_attr",
            6: "_set_bool_attr", 7: "_set_bools_attr", 9: "_set_int64_attr",
            11: "_set_int64s_attr", 12: "_set_float64s_attr", 15: "_set_float64_attr"}
_SKIPPED = {8, 10, 13, 14, 16, 17}     # BLOCK, BLOCKS, VAR, VARS, SCALAR, SCALARS


def set_typed_attr(desc, name: str, value, kind: int | None) -> None:
    """`desc`'s attr `name` set to `value` with AttrType `kind` (None: pybind's guess)."""
    setter = getattr(desc, _SETTERS.get(kind, ""), None) if kind is not None else None
    if setter is None:
        desc._set_attr(name, value)
    else:
        setter(name, value)


def as_stored(op_type: str, attrs):
    """`attrs` as Paddle's op desc of `op_type` stores them: the value of a FLOAT attr
    rounded to float32, each of a FLOATS attr too (a 64-bit value the case wrote reaches the
    kernel rounded, so an oracle must compute with the rounded value). Other attrs, and
    every attr of an op Paddle has no proto for, as given."""
    import numpy as np

    from opkit_paddle.backend import env

    proto = env.proto(op_type) if attrs else None
    if proto is None:
        return attrs
    types = {a.name: int(a.type) for a in proto.attrs}
    out = dict(attrs)
    for name, value in attrs.items():
        kind = types.get(name)
        if kind == FLOAT and isinstance(value, (float, np.floating)):
            out[name] = float(np.float32(value))
        elif kind == FLOATS and isinstance(value, (list, tuple)) and \
                all(isinstance(v, (float, int, np.floating, np.integer)) for v in value):
            out[name] = type(value)(float(np.float32(v)) for v in value)
    return out
