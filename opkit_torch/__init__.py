"""opkit's PyTorch plugin: the torch backend (`opkit test NS::OP --backend torch`).

`plugin` (the entry point `torch` of the group `opkit.backends`) runs torch operators (aten
ops, `torch.library` custom ops, torchvision's ops) behind opkit's op seam; docs/torch.md.
Importing this package does not import torch (an optional dependency, opkit-dl[torch]):
every method loads what it needs when called.
"""
from __future__ import annotations

__all__ = ["TorchBackend", "plugin"]


class TorchBackend:
    """PyTorch's operators, run in eager mode through torch's dispatcher."""

    name = "torch"
    compat = None

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
        from opkit_torch.op import TorchPreparedOp

        return TorchPreparedOp(op_type, inputs, attrs, outputs, place, enable_inplace)

    def has_op(self, op_type: str) -> bool:
        from opkit_torch import describe

        return describe.has_op(op_type)

    def has_grad(self, op_type: str) -> bool:
        from opkit_torch import describe

        return describe.has_grad(op_type)

    def kernel_places(self, op_type: str) -> dict:
        from opkit_torch import describe

        return describe.kernel_places(op_type) if describe.has_op(op_type) else {}

    def check_override(self, name: str):
        return None

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict):
        raise NotImplementedError("the torch backend has no compile-time shapes")


plugin = TorchBackend()
"""The torch backend: PyTorch operators behind opkit's op seam (docs/torch.md)."""
