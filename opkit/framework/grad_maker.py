"""Grad op makers: turn a forward op description into the descriptions of its grad ops."""
from __future__ import annotations

from opkit.framework.context import EMPTY_VAR_NAME

__all__ = ["GradOpMaker", "DefaultGradOpMaker", "GradOpDesc", "grad_var_name", "GRAD_SUFFIX"]

GRAD_SUFFIX = "@GRAD"


def grad_var_name(name: str) -> str:
    """'X' -> 'X@GRAD' (also used for slot names of grad ops)."""
    return name + GRAD_SUFFIX


class GradOpDesc:
    """A grad op being built: type, input/output names per slot, attrs."""

    def __init__(self, type: str, attrs: dict | None = None):
        self.type = type
        self.inputs: dict[str, list[str]] = {}
        self.outputs: dict[str, list[str]] = {}
        self.attrs = dict(attrs or {})

    def set_input(self, slot: str, names) -> "GradOpDesc":
        self.inputs[slot] = _as_list(names)
        return self

    def set_output(self, slot: str, names) -> "GradOpDesc":
        self.outputs[slot] = _as_list(names)
        return self

    def set_attr(self, name: str, value) -> "GradOpDesc":
        self.attrs[name] = value
        return self

    def __repr__(self):
        return f"GradOpDesc({self.type!r}, inputs={self.inputs}, outputs={self.outputs})"


def _as_list(names) -> list[str]:
    if names is None:
        return []
    if isinstance(names, str):
        return [names]
    return [n if isinstance(n, str) else n.name for n in names]


class GradOpMaker:
    """Subclass and override `apply()` returning a list of grad op descriptions.

    Inside `apply`: `self.input(slot)` / `self.output(slot)` are the forward op's variable
    names, `self.output_grad(slot)` the gradients flowing in, `self.input_grad(slot)` the
    gradients to produce (`@EMPTY@` for variables that need none), `self.attrs` the
    forward attrs, `self.new_grad_op(type)` a new op with the forward attrs copied.
    """

    def __init__(self, fwd_type: str, fwd_inputs: dict, fwd_outputs: dict, attrs: dict,
                 no_grad_set=frozenset()):
        self.fwd_type = fwd_type
        self.fwd_inputs = {k: list(v) for k, v in fwd_inputs.items()}
        self.fwd_outputs = {k: list(v) for k, v in fwd_outputs.items()}
        self.attrs = dict(attrs)
        self.no_grad_set = set(no_grad_set)

    def input(self, slot: str) -> list[str]:
        return list(self.fwd_inputs.get(slot, []))

    def output(self, slot: str) -> list[str]:
        return list(self.fwd_outputs.get(slot, []))

    def input_grad(self, slot: str) -> list[str]:
        return [EMPTY_VAR_NAME if (n in self.no_grad_set or n == EMPTY_VAR_NAME)
                else grad_var_name(n) for n in self.fwd_inputs.get(slot, [])]

    def output_grad(self, slot: str) -> list[str]:
        return [grad_var_name(n) for n in self.fwd_outputs.get(slot, [])]

    def attr(self, name: str):
        return self.attrs[name]

    def input_slots(self) -> list[str]:
        return list(self.fwd_inputs)

    def output_slots(self) -> list[str]:
        return list(self.fwd_outputs)

    def new_grad_op(self, type: str | None = None) -> GradOpDesc:
        return GradOpDesc(type or self.fwd_type + "_grad", self.attrs)

    def apply(self) -> list[GradOpDesc]:  # pragma: no cover - overridden
        raise NotImplementedError(f"{type(self).__name__}.apply() must return grad op descs")

    def __call__(self) -> list[GradOpDesc]:
        ops = self.apply()
        if isinstance(ops, GradOpDesc):
            ops = [ops]
        return list(ops or [])


class DefaultGradOpMaker(GradOpMaker):
    """`<type>_grad` with every forward input, output and output grad; outputs input grads."""

    def apply(self):
        op = self.new_grad_op()
        for slot in self.input_slots():
            op.set_input(slot, self.input(slot))
            op.set_output(grad_var_name(slot), self.input_grad(slot))
        for slot in self.output_slots():
            op.set_input(slot, self.output(slot))
            op.set_input(grad_var_name(slot), self.output_grad(slot))
        return [op]
