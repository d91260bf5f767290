"""opkit's PaddlePaddle plugin: the Paddle backend and the Paddle-compatibility mode.

`plugin` (the entry point `paddle` of the group `opkit.backends`) implements the harness's
backend contract (harness.backend.contract.Backend) on PaddlePaddle's own CPU kernels
(opkit_paddle.backend), and its `compat` the Paddle-compatibility mode
(harness.spec.COMPAT_PROTOCOL; opkit_paddle.compat: Paddle's own OpTest files run unchanged).
docs/paddle.md describes both. Importing this package does not import paddle (an optional
dependency, opkit-dl[paddle]): every method loads what it needs when called.
"""
from __future__ import annotations

from harness.backend.contract import REQUIRED, Backend, OpDescription, Slot
from harness.backend.native import OpkitBackend

__all__ = ["PaddleBackend", "PaddleCompat", "plugin"]

_HOOKS = "Paddle's executor calls no Python hook around its kernels"
_OPKIT_ERRORS = OpkitBackend()      # Paddle's errors are re-raised as opkit's: its rule


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


class PaddleBackend(Backend):
    """PaddlePaddle's own CPU kernels behind opkit's op seam (its static graph)."""

    name = "paddle"
    compat = PaddleCompat()
    lacks = {
        "kernel_hooks": _HOOKS,
        "executor_modes": "Paddle's inplace pass and opkit's prepared plans are not "
                          "reachable through a one-op program",
        "selected_rows": "the Paddle backend feeds dense tensors only (no SelectedRows)",
        "strided_inputs": "Paddle's feed copies every input into a contiguous tensor",
        "declarations": "SBP signatures and opkit's inplace maps are opkit declarations; "
                        "Paddle's ops declare none",
        "clean_process": "the clean process imports opkit op files; Paddle's kernels are not",
    }

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

    def declared_by(self):
        """The checks derive Paddle's cases from opkit's declarations: this backend runs
        opkit's op vocabulary (opkit's own ops, and the shadows of Paddle's ops opkit
        lacks, in opkit's registry), as it did before the checks asked a backend."""
        from harness.backends import plugin

        return plugin("opkit")

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

    def describe(self, op_type: str) -> OpDescription:
        """The op's slots, attrs (with the defaults Paddle's attr checker gives; extra and
        role attrs left out) and gradient, from Paddle's proto."""
        from opkit_paddle.backend import env

        proto = env.proto(op_type) if env.has_op(op_type) else None
        if proto is None:
            return OpDescription(op_type)
        from paddle.base import core

        from opkit_paddle.backend.op import shared_outputs

        defaults = core.get_op_attrs_default_value(op_type.encode())
        role = {"op_role", "op_role_var", "op_namescope", "op_callstack", "op_device",
                "with_quant_attr"}
        attrs = {a.name: defaults.get(a.name, REQUIRED) for a in proto.attrs
                 if a.name not in role and not a.extra}
        slots = [tuple(Slot(v.name, bool(v.duplicable), bool(v.dispensable),
                            bool(v.intermediate)) for v in vs if not v.extra)
                 for vs in (proto.inputs, proto.outputs)]
        return OpDescription(op_type, slots[0], slots[1], attrs, self.has_grad(op_type),
                             None, shared_outputs(op_type))

    def refused(self, exc: BaseException) -> bool:
        """Paddle's errors are re-raised as opkit's (opkit_paddle.backend.errors): opkit's
        rule decides."""
        return _OPKIT_ERRORS.refused(exc)

    def refusal_message(self, exc: BaseException) -> str | None:
        return _OPKIT_ERRORS.refusal_message(exc)

    def check_override(self, name: str):
        from opkit_paddle.backend.checks import override

        return override(name)

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict):
        from opkit_paddle.backend.op import compile_shapes

        return compile_shapes(case, specs, outs, unknown)


plugin = PaddleBackend()
