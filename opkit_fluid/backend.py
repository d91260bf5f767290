"""opkit's own framework as one backend among others (harness.backend.contract): its
kernels, its registry's declarations, its errors' refusal rule. The default backend
("opkit"); opkit is imported when a method is first called."""
from __future__ import annotations

from harness.backend.contract import REQUIRED, Backend, OpDescription, OpRefused, Slot

__all__ = ["OpkitBackend"]


def _slot(vp) -> Slot:
    return Slot(vp.name, bool(vp.duplicable), bool(vp.dispensable),
                bool(getattr(vp, "intermediate", False)))


class OpkitBackend(Backend):
    """opkit's kernels, run by opkit's executor (opkit_fluid.prepared.PreparedOp)."""

    name = "opkit"
    lacks: dict = {}          # it has every capability of the contract

    def activate(self, op_types) -> None:
        """Selected by a front door: its prepared op's module is imported now, once, so the
        workers forked afterwards import nothing."""
        import opkit_fluid.prepared  # noqa: F401

    def make(self, op_type, inputs, attrs, outputs=None, place=None, enable_inplace=False):
        from opkit_fluid.prepared import PreparedOp

        return PreparedOp(op_type, inputs, attrs, outputs, place, enable_inplace)

    def has_op(self, op_type: str) -> bool:
        from opkit.registry import has_op

        return has_op(op_type)

    def has_grad(self, op_type: str) -> bool:
        from opkit.registry import op_info

        return op_info(op_type).grad_maker is not None

    def kernel_places(self, op_type: str) -> dict:
        from opkit.registry import op_info

        return op_info(op_type).kernel_places()

    def kernel_functions(self, op_type: str) -> list:
        from opkit.registry import has_op, kernels_of, op_info

        return list((op_info(op_type).kernels if has_op(op_type) else
                     kernels_of(op_type)).values())

    def selector(self) -> str:
        return ""            # the default backend

    def proto(self, op_type: str):
        """The OpProto opkit's registry holds for the op (None: unknown, or none)."""
        from opkit.registry import has_op, op_info

        return op_info(op_type).proto if has_op(op_type) else None

    def describe(self, op_type: str) -> OpDescription:
        from opkit.registry import op_info

        info = op_info(op_type)
        proto = info.proto
        from opkit.framework.operator import OperatorWithKernel

        unsafe = getattr(info.op_class, "not_thread_safe", None)
        writes = {out: src for src, out in (info.inplace or {}).items()}   # inplace pairs
        rest = dict(not_thread_safe=unsafe, source=(info.source or "").rsplit(":", 1)[0],
                    kernel_less=not (isinstance(info.op_class, type) and
                                     issubclass(info.op_class, OperatorWithKernel)))
        if proto is None:
            return OpDescription(op_type, has_grad=info.grad_maker is not None,
                                 writes=writes, **rest)
        attrs = {a.name: (a.default if a.has_default else REQUIRED) for a in proto.attrs}
        return OpDescription(op_type, tuple(_slot(v) for v in proto.inputs),
                             tuple(_slot(v) for v in proto.outputs), attrs,
                             info.grad_maker is not None, self._grad_inputs(info, attrs),
                             writes, attr_types={a.name: a.type for a in proto.attrs},
                             **rest)

    @staticmethod
    def _grad_inputs(info, attrs: dict):
        """The input slots the grad maker writes a gradient of (None: it needs attrs
        without defaults, or fails on placeholder names)."""
        if info.grad_maker is None:
            return ()
        if any(v is REQUIRED for v in attrs.values()):
            return None
        from opkit.framework.grad_maker import GRAD_SUFFIX

        proto = info.proto
        ins = {v.name: [v.name] for v in proto.inputs}
        outs = {v.name: [v.name] for v in proto.outputs}
        try:
            descs = list(info.grad_maker(info.type, ins, outs, dict(attrs), frozenset())())
        except Exception:  # noqa: BLE001 - a maker that needs real attrs or names
            return None
        written = {n for d in descs for names in d.outputs.values() for n in names}
        return tuple(v.name for v in proto.inputs if v.name + GRAD_SUFFIX in written)

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict) -> dict:
        from opkit_fluid.prepared import program_shapes

        return program_shapes(case, specs, outs, unknown)

    def refused(self, exc: BaseException) -> bool:
        """A typed opkit error from attr checks, infer_shape or a kernel's own validation.
        Not `External` (a raw numpy/Python error the framework wrapped) and not
        `KernelContractError` (a kernel giving other shapes than infer_shape promised is a
        bug). Decided by the exception's type only."""
        from opkit.framework import errors

        if isinstance(exc, OpRefused):
            return True
        return isinstance(exc, errors.EnforceNotMet) and \
            not isinstance(exc, (errors.External, errors.KernelContractError))

    def refusal_message(self, exc: BaseException) -> str | None:
        if isinstance(exc, OpRefused):
            return super().refusal_message(exc)
        if self.refused(exc) and (getattr(exc, "raw_message", "") or "").strip():
            return str(exc)
        return None
