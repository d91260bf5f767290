"""A torch op's declarations, read from its schema (`torch.ops.NS.OP.OVERLOAD._schema`).

Tensor arguments are input slots (`Tensor[]` duplicable, `Tensor?` dispensable); the other
arguments are attrs with their defaults; an alias annotation with `!` (`Tensor(a!)`) is a
declared write; the returns are the output slots, named as the schema names them (an
unnamed single return `out`, several `out0`, `out1`, ...). A return annotated with an
input's alias set (`Tensor(a)`) is a declared view of that input.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from opkit_torch import env

__all__ = ["REQUIRED", "Arg", "TorchSchema", "read", "output_names"]

#: an attr without a default
REQUIRED = object()


@dataclass(frozen=True)
class Arg:
    name: str
    type: str               # the schema's spelling ("Tensor", "List[Tensor]", "int", ...)
    kind: str               # "tensor" | "tensors" | "optional_tensor" | "attr"
    default: object = REQUIRED
    kwarg_only: bool = False
    writes: bool = False    # annotated `(a!)`
    alias: frozenset = frozenset()


@dataclass(frozen=True)
class TorchSchema:
    op_type: str
    text: str
    args: tuple = ()                       # (Arg, ...) in the schema's order
    outputs: tuple = ()                    # ((slot, type, is_list, alias set), ...)
    writes: tuple = ()                     # input slots annotated `!`
    views: dict = field(default_factory=dict)   # {output slot: input slot it aliases}

    @property
    def tensor_args(self) -> list[Arg]:
        return [a for a in self.args if a.kind != "attr"]

    @property
    def attr_args(self) -> list[Arg]:
        return [a for a in self.args if a.kind == "attr"]

    def arg(self, name: str) -> Arg | None:
        return self._by_name.get(name)

    @functools.cached_property
    def _by_name(self) -> dict:
        return {a.name: a for a in self.args}


def _kind(t) -> str:
    k = t.kind()
    if k == "TensorType":
        return "tensor"
    if k == "ListType" and t.getElementType().kind() in ("TensorType", "OptionalType") and \
            "Tensor" in str(t.getElementType()):
        return "tensors"
    if k == "OptionalType" and t.getElementType().kind() == "TensorType":
        return "optional_tensor"
    return "attr"


def output_names(returns) -> list[str]:
    """The output slot names of a schema's returns."""
    if len(returns) == 1:
        return [returns[0].name or "out"]
    return [r.name or f"out{i}" for i, r in enumerate(returns)]


@functools.lru_cache(maxsize=None)
def read(op_type: str) -> TorchSchema:
    """The op's TorchSchema (ValueError: no such op)."""
    s = env.resolve(op_type)._schema
    args = []
    for a in s.arguments:
        alias = a.alias_info
        default = a.default_value if a.has_default_value() else REQUIRED
        args.append(Arg(a.name, str(a.type), _kind(a.type), default, bool(a.kwarg_only),
                        bool(alias is not None and alias.is_write),
                        frozenset(alias.before_set) if alias is not None else frozenset()))
    outputs, views = [], {}
    for name, r in zip(output_names(s.returns), s.returns):
        is_list = r.type.kind() == "ListType"
        sets = frozenset(r.alias_info.before_set) if r.alias_info is not None else frozenset()
        outputs.append((name, str(r.type), is_list, sets))
        source = next((a.name for a in args if a.alias & sets), None)
        if source is not None:
            views[name] = source
    return TorchSchema(op_type, str(s), tuple(args), tuple(outputs),
                       tuple(a.name for a in args if a.writes), views)
