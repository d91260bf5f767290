"""opkit's PyTorch plugin: the torch backend (`opkit test NS::OP --backend torch`).

`plugin` (the entry point `torch` of the group `opkit.backends`) implements the harness's
backend contract (harness.backend.contract.Backend) on torch operators: aten ops,
`torch.library` custom ops, torchvision's ops, run in eager mode through torch's
dispatcher; docs/torch.md. Importing this package does not import torch (an optional
dependency, opkit-dl[torch]): every method loads what it needs when called.
"""
from __future__ import annotations

from harness.backend.contract import Backend

__all__ = ["TorchBackend", "plugin"]

_NO_HOOKS = "torch's dispatcher calls no opkit hook around its kernels"


class TorchBackend(Backend):
    """PyTorch's operators, run in eager mode through torch's dispatcher."""

    name = "torch"
    compat = None
    lacks = {
        "kernel_hooks": _NO_HOOKS,
        "grad_ops": "torch has no separate grad ops: its autograd graph runs the backward",
        "compile_shapes": "torch ops have no compile-time infer_shape (the fake/meta kernel "
                          "is judged by the `describe` check instead)",
        "executor_modes": "torch eager has one executor",
        "lod": "torch tensors carry no LoD",
        "selected_rows": "the torch backend feeds dense tensors only",
        "declarations": "SBP signatures, no_need_buffer and inplace maps are opkit "
                        "declarations; a torch op declares its writes in its schema",
        "clean_process": "the clean process imports opkit op files; torch's kernels are not",
    }

    def unavailable(self) -> str | None:
        from opkit_torch import env

        return env.missing()

    def activate(self, op_types) -> None:
        from opkit_torch import env

        env.load()

    def prepare_child(self) -> None:
        from opkit_torch import env

        env.load()

    def make(self, op_type: str, inputs: dict, attrs: dict | None, outputs=None, place=None,
             enable_inplace: bool = False):
        if "::" not in op_type:                  # opkit's op name: its torch twin
            from opkit_torch import twins

            if twins.twin(op_type) is not None:
                return twins.make(op_type, inputs, attrs, outputs, place)
        return _prepared_op()(op_type, inputs, attrs, outputs, place, enable_inplace)

    def has_op(self, op_type: str) -> bool:
        from opkit_torch import describe

        return describe.has_op(op_type) or self._twin(op_type)

    def describe(self, op_type: str):
        from opkit_torch import describe

        if self._twin(op_type):      # opkit's op, run as its twin: opkit's declaration
            from opkit_fluid.backend import OpkitBackend

            return OpkitBackend().describe(op_type)
        return describe.description(op_type)

    def has_grad(self, op_type: str) -> bool:
        from opkit_torch import describe

        if self._twin(op_type):
            return True          # every twin has torch autograd (zeros for floor, round)
        return describe.has_op(op_type) and describe.has_grad(op_type)

    def proto(self, op_type: str):
        """The schema's OpProto with the domains opkit_torch.declared holds for the op
        (torchvision's documented box and size contracts)."""
        proto = super().proto(op_type)
        if proto is None or self._twin(op_type):
            return proto
        from opkit_torch import declared

        return declared.apply(op_type, proto)

    def kernel_places(self, op_type: str) -> dict:
        from opkit_torch import describe

        if self._twin(op_type):
            return {"CPU": ["float32", "float64"]}
        return describe.kernel_places(op_type) if describe.has_op(op_type) else {}

    @staticmethod
    def _twin(op_type: str) -> bool:
        """An opkit built-in op with a torch twin (opkit_torch.twins: `--against torch`)."""
        if "::" in op_type or env_missing():
            return False
        from opkit_torch import twins

        return twins.twin(op_type) is not None

    def grad_key(self, name: str) -> str:
        return name + "@GRAD"

    def refused(self, exc: BaseException) -> bool:
        from opkit_torch import errors

        return errors.refused(exc)

    def refusal_message(self, exc: BaseException) -> str | None:
        from opkit_torch import errors

        return errors.refusal_message(exc)

    def check_override(self, name: str):
        from opkit_torch.checks import override

        return override(name)


def _prepared_op():
    """opkit_torch.op.TorchPreparedOp (imported on first use: torch loads with it)."""
    global _PREPARED_OP
    if _PREPARED_OP is None:
        from opkit_torch.op import TorchPreparedOp

        _PREPARED_OP = TorchPreparedOp
    return _PREPARED_OP


_PREPARED_OP = None


def env_missing() -> str | None:
    from opkit_torch import env

    return env.missing()


plugin = TorchBackend()
"""The torch backend: PyTorch operators behind opkit's op seam (docs/torch.md)."""
