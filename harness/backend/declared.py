"""An op's declaration in the form the case-deriving checks read (opkit's `OpProto`),
built from a backend's `OpDescription` (harness.backend.contract.Backend.proto's default).

The checks that vary attrs, fill in defaults or ask for an op's required outputs read
slots and attrs (with types and defaults) as `OpProto`s; a backend that does not declare
its ops in opkit's registry (torch's, the numpy toy) gets one built here from what it
`describe`s: its slots as `VarProto`s, its attrs as `AttrProto`s with the types of
`OpDescription.attr_types` (else the type of the default; "scalar", which nothing varies,
where neither tells)."""
from __future__ import annotations

from harness.backend.contract import REQUIRED, OpDescription

__all__ = ["proto_from", "attr_type_of"]

_SCALAR = {bool: "bool", int: "int", float: "float", str: "string"}
_LIST = {bool: "bools", int: "ints", float: "floats", str: "strings"}


def attr_type_of(default) -> str:
    """opkit's attr type of a default value ("scalar": none fits)."""
    if isinstance(default, (list, tuple)):
        kinds = {type(v) for v in default}
        return _LIST.get(kinds.pop(), "scalar") if len(kinds) == 1 else "scalar"
    return _SCALAR.get(type(default), "scalar")


def proto_from(desc: OpDescription):
    """The `OpProto` of an `OpDescription` (no domains, no checkers: nothing declared)."""
    from opkit.framework.proto import NO_DEFAULT, AttrProto, OpProto, VarProto

    def var(slot):
        return VarProto(slot.name, duplicable=slot.duplicable, dispensable=slot.dispensable,
                        intermediate=slot.intermediate)

    attrs = [AttrProto(name, desc.attr_types.get(name) or attr_type_of(default),
                       default=NO_DEFAULT if default is REQUIRED else default,
                       op_type=desc.op_type)
             for name, default in desc.attrs.items()]
    return OpProto(desc.op_type, [var(s) for s in desc.inputs],
                   [var(s) for s in desc.outputs], attrs)
