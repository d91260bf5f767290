"""Kernel hooks: the public seam through which checks observe one kernel call.

`OperatorWithKernel.run_impl(scope, place, hooks=h)` calls `h.before_kernel(op, ctx)` after
the kernel is chosen and before it runs, and `h.after_kernel(op, ctx)` after the outputs were
verified. A hook reads through public accessors only: `ctx.scope.find_var(name)`,
`LoDTensor.buffer` (the stored array, no copy), `ctx.override_input(var_name, array)` (what the
kernel will be handed for that variable), `ctx.kernel_entry` (the chosen kernel's function,
file and line).
"""
from __future__ import annotations

__all__ = ["KernelHooks", "CombinedHooks"]


class KernelHooks:
    """Base class: override either method; both do nothing by default."""

    def before_kernel(self, op, ctx) -> None:
        pass

    def after_kernel(self, op, ctx) -> None:
        pass


class CombinedHooks(KernelHooks):
    """Several hooks as one, called in order (after_kernel in reverse order)."""

    def __init__(self, *hooks: KernelHooks):
        self.hooks = [h for h in hooks if h is not None]

    def before_kernel(self, op, ctx) -> None:
        for h in self.hooks:
            h.before_kernel(op, ctx)

    def after_kernel(self, op, ctx) -> None:
        for h in reversed(self.hooks):
            h.after_kernel(op, ctx)
