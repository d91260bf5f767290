"""A Paddle grad op (`tanh_grad`, `conv2d_grad`, ...) run on its own, as an op of its own.

Paddle registers grad ops without an op proto, so `block.append_op` cannot make one; the
grad op desc is appended to the program's block directly (its attrs set with the types
Paddle's grad maker gave them, opkit_paddle.backend.attrs) and Paddle's compile-time
checks and infer_shape run on it. Everything else is `PaddlePreparedOp`'s: the forward runs
the grad op's kernel; `backward` appends the grad ops of the grad op (Paddle's double-grad
makers, `core.get_grad_op_desc` on the grad op's desc: `tanh_grad` -> `tanh_grad_grad`).
The `double_grad` check reaches it through the seam (harness.backend.seam.make with a grad op's type).
"""
from __future__ import annotations

from types import SimpleNamespace

from opkit_paddle.backend import env as paddle_env
from opkit_paddle.backend.attrs import EMPTY, set_typed_attr
from opkit_paddle.backend.op import PaddlePreparedOp

__all__ = ["PaddleGradOp", "is_grad_op"]


def is_grad_op(op_type: str) -> bool:
    """A Paddle op type with kernels and no proto: a grad op (or a double-grad op)."""

    return paddle_env.proto(op_type) is None and paddle_env.listed(op_type)


class PaddleGradOp(PaddlePreparedOp):
    """A one-op Paddle program running a grad op's kernel (and its own grad ops)."""

    def __init__(self, op_type: str, inputs: dict, attrs: dict | None,
                 output_slots: dict | None = None, place=None, enable_inplace: bool = False):
        attrs = attrs or {}
        self._types = dict(getattr(attrs, "types", {}) or {})
        self._made = dict(getattr(attrs, "outputs", {}) or {})   # the grad maker's slots
        # a stand-in proto: no declared outputs (the grad op's outputs are the ones named),
        # every attr given is the op's own
        self._stub = SimpleNamespace(type=op_type, inputs=[], outputs=[],
                                     attrs=[SimpleNamespace(name=k, type=-1) for k in attrs])
        super().__init__(op_type, inputs, attrs, output_slots, place, enable_inplace)

    def _proto(self, op_type: str):
        return self._stub

    def _with_empty(self, outs: dict) -> dict:
        """{slot: names} of the outputs given, with Paddle's empty name (@EMPTY@: a gradient
        in the no_grad_set) back where the grad maker put it: an empty slot is kept and a
        duplicable slot keeps its positions (concat_grad's X@GRAD [x0, @EMPTY@, x2])."""
        got = {slot: [v.name for v in vs] for slot, vs in outs.items()}
        for slot, made in self._made.items():
            given = got.get(slot, [])
            real = [n for n in made if n != EMPTY]
            if len(given) != len(real):
                continue                  # named otherwise by the caller: as given
            it = iter(given)
            got[slot] = [EMPTY if n == EMPTY else next(it) for n in made]
        return got

    def _append(self, block, ins: dict, outs: dict, attrs: dict):
        desc = block.desc.append_op()
        desc.set_type(self.op_type)
        for slot, vs in ins.items():
            desc.set_input(slot, [v.name for v in vs])
        for slot, names in self._with_empty(outs).items():
            desc.set_output(slot, names)
        for name, value in attrs.items():
            set_typed_attr(desc, name, value, self._types.get(name))
        extra = self.core.get_op_extra_attrs(self.op_type) \
            if hasattr(self.core, "get_op_extra_attrs") else {}
        for name, value in extra.items():     # Paddle 3's "extra" attrs (use_mkldnn, ...)
            if name not in attrs:            # are not in the grad maker's desc: defaults
                desc._set_attr(name, value)
        desc.check_attrs()
        desc.infer_var_type(block.desc)
        desc.infer_shape(block.desc)
        block.program._sync_with_cpp()
        return block.ops[-1]
