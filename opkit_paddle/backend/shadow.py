"""An op type PaddlePaddle has and opkit does not, made known to opkit's registry from
Paddle's own proto, so that an author's OpTest for their Paddle op runs under
`opkit test OP --backend paddle` with the harness's proto-driven checks (output slots,
explore's attr domains, the gradient test requirement).

The shadow registers the op's slots and flags, its attrs with the defaults Paddle's attr
checker gives (`core.get_op_attrs_default_value`; extra and role attrs left out) and, when
Paddle has a grad op maker, opkit's default grad maker (only so that the harness knows the op
is differentiable: under the Paddle backend the grad ops come from Paddle). It registers no
kernel: opkit's own executor cannot run it.
"""
from __future__ import annotations

from opkit_paddle.backend import env as paddle_env
from opkit.framework import errors
from opkit.framework.operator import OperatorWithKernel
from opkit.framework.proto import ATTR_TYPE_IDS, OpMaker
from opkit.registry import has_op, register_kernel, register_operator

__all__ = ["register", "register_all", "ShadowOp", "is_shadow"]

_SKIP_ATTRS = {"op_role", "op_role_var", "op_namescope", "op_callstack", "op_device",
               "with_quant_attr"}


def _type_names() -> dict:
    return {v: k for k, v in ATTR_TYPE_IDS.items()}


def register(op_type: str) -> bool:
    """Register a shadow of Paddle's `op_type` unless opkit has it; True when it did."""

    if has_op(op_type) or paddle_env.missing() or not paddle_env.has_op(op_type):
        return False
    from paddle.base import core

    proto = paddle_env.proto(op_type)
    defaults = core.get_op_attrs_default_value(op_type.encode())
    names = _type_names()

    class Maker(OpMaker):
        def make(self):
            for v in proto.inputs:
                p = self.add_input(v.name, v.comment)
                p.duplicable, p.dispensable = v.duplicable, v.dispensable
                p.intermediate, p.extra = v.intermediate, v.extra
            for v in proto.outputs:
                p = self.add_output(v.name, v.comment)
                p.duplicable, p.dispensable = v.duplicable, v.dispensable
                p.intermediate, p.extra = v.intermediate, v.extra
            for a in proto.attrs:
                if a.name in _SKIP_ATTRS or a.extra or int(a.type) not in names:
                    continue
                attr = self.add_attr(a.name, names[int(a.type)], a.comment)
                if a.name in defaults:
                    try:
                        attr.set_default(defaults[a.name])
                    except Exception:  # noqa: BLE001 - a default opkit cannot type: none
                        pass
            self.add_comment(proto.comment or f"PaddlePaddle's op {op_type}")

    grad_maker = None
    if core.has_non_empty_grad_op_maker(op_type):
        from opkit.framework.grad_maker import DefaultGradOpMaker

        grad_maker = DefaultGradOpMaker
    shadow = type(f"Paddle_{op_type}", (ShadowOp,), {"__module__": __name__})
    register_operator(op_type, shadow, Maker, grad_maker=grad_maker)
    # Paddle's own float16 / bfloat16 CPU kernels too: Paddle's float16 OpTest classes of the
    # op then run on them (opkit has no op of its own to hold them to)
    _kernels(op_type, paddle_env.cpu_kernel_dtypes(op_type, low_precision=True))
    return True


def _kernels(op_type: str, dtypes: set) -> None:
    """CPU kernel entries for the dtypes Paddle has, so that the harness's planners see
    them; run by opkit's own executor they refuse (the Paddle backend runs Paddle's)."""

    if not dtypes:
        return

    def paddle_only(ctx):
        raise errors.Unimplemented("op '%s' is PaddlePaddle's: run it with --backend paddle",
                                   op_type)

    register_kernel(op_type, place="CPU", dtypes=tuple(sorted(dtypes)))(paddle_only)


def is_shadow(op_type: str) -> bool:
    """Whether opkit knows `op_type` only as a shadow of Paddle's op (no op of its own)."""
    if not has_op(op_type):
        return False
    from opkit.registry import op_info

    cls = getattr(op_info(op_type), "op_class", None)
    return isinstance(cls, type) and issubclass(cls, ShadowOp)


def register_all() -> int:
    """Shadows of every Paddle op opkit lacks (a fresh interpreter of a Paddle-backend run,
    which does not know which op it will be handed); the number registered."""

    if paddle_env.missing():
        return 0
    return sum(register(t) for t in sorted(paddle_env._protos()) if not t.endswith("_grad"))


def _shadow_base():
    class ShadowOp(OperatorWithKernel):
        """A Paddle op known to opkit's registry through its proto only (no kernel)."""

    return ShadowOp


ShadowOp = _shadow_base()
