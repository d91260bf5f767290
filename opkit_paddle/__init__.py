"""opkit's PaddlePaddle plugin: the Paddle backend and the Paddle-compatibility mode.

`plugin` (the entry point `paddle` of the group `opkit.backends`) implements the harness's
backend protocol (harness.spec.BACKEND_PROTOCOL) on PaddlePaddle's own CPU kernels
(opkit_paddle.backend), and its `compat` the Paddle-compatibility mode
(harness.spec.COMPAT_PROTOCOL; opkit_paddle.compat: Paddle's own OpTest files run unchanged).
docs/paddle.md describes both. Importing this package does not import paddle (an optional
dependency, opkit-dl[paddle]): every method loads what it needs when called.
"""
from __future__ import annotations

__all__ = ["PaddleBackend", "PaddleCompat", "plugin"]


class PaddleCompat:
    """The Paddle-compatibility mode (opkit_paddle.compat), as the harness reaches it."""

    def activate(self, backend: str = "opkit") -> None:
        from opkit_paddle import compat

        compat.activate(backend)

    def is_active(self) -> bool:
        from opkit_paddle import compat

        return compat.is_active()

    def is_harness_file(self, path) -> bool:
        from opkit_paddle import compat

        return compat.is_paddle_harness_file(path)

    def pytest_hooks(self):
        from opkit_paddle.compat import pytest_hooks

        return pytest_hooks


class PaddleBackend:
    """PaddlePaddle's own CPU kernels behind opkit's op seam (its static graph)."""

    compat = PaddleCompat()

    def unavailable(self) -> str | None:
        from opkit_paddle.backend import env

        return env.missing()

    def activate(self, op_types) -> None:
        """Each named op type Paddle has but opkit lacks (an author's own Paddle op) is made
        known to opkit's registry from Paddle's proto (opkit_paddle.backend.shadow)."""
        from opkit_paddle.backend import shadow

        for op in op_types:
            shadow.register(op)

    def prepare_child(self) -> None:
        from opkit_paddle.backend import shadow

        shadow.register_all()

    def make(self, op_type: str, inputs: dict, attrs: dict | None, outputs=None, place=None,
             enable_inplace: bool = False):
        from opkit_paddle.backend.grad_op import PaddleGradOp, is_grad_op
        from opkit_paddle.backend.op import PaddlePreparedOp

        cls = PaddleGradOp if is_grad_op(op_type) else PaddlePreparedOp   # a grad op alone
        return cls(op_type, inputs, attrs, outputs, place, enable_inplace=enable_inplace)

    def has_op(self, op_type: str) -> bool:
        from opkit_paddle.backend import env

        return env.has_op(op_type)

    def has_grad(self, op_type: str) -> bool:
        from opkit_paddle.backend import env

        env.load()
        from paddle.base import core

        return (env.has_op(op_type) or env.listed(op_type)) and \
            bool(core.has_non_empty_grad_op_maker(op_type))

    def kernel_places(self, op_type: str) -> dict:
        from opkit_paddle.backend import env

        if not env.has_op(op_type) and not env.listed(op_type):
            return {}          # (a grad op has kernels and no proto)
        # an op whose kernels Paddle's registry lists under another name (the legacy
        # `transpose` runs transpose2's phi kernel): both float dtypes are tried, a missing
        # one shows as the op failing
        from opkit_paddle.backend.shadow import is_shadow

        # float16 / bfloat16 where Paddle has them, for an op opkit lacks (opkit's own ops
        # keep to the dtypes opkit's op has: their verdicts compare the two)
        low = is_shadow(op_type)
        return {"CPU": sorted(env.cpu_kernel_dtypes(op_type, low_precision=low))
                or ["float32", "float64"]}

    def stored_attrs(self, op_type: str, attrs):
        """The attrs as Paddle's op desc stores them: a FLOAT / FLOATS attr (AttrType 1 / 4)
        in 32 bits."""
        from opkit_paddle.backend.attrs import as_stored

        return as_stored(op_type, attrs)

    def check_override(self, name: str):
        from opkit_paddle.backend.checks import override

        return override(name)

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict):
        from opkit_paddle.backend.op import compile_shapes

        return compile_shapes(case, specs, outs, unknown)


plugin = PaddleBackend()
