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
from opkit_fluid.backend import OpkitBackend

__all__ = ["PaddleBackend", "PaddleCompat", "plugin", "compat_mode"]

_HOOKS = "Paddle's executor calls no Python hook around its kernels"
_OPKIT = OpkitBackend()      # its rule judges Paddle's errors (re-raised as opkit's); its ops


class PaddleCompat:
    """The Paddle-compatibility mode (opkit_paddle.compat), as the harness reaches it: the
    entry point `paddle` of the group `opkit.compat` (`--opkit-paddle`, OPKIT_PADDLE=1)."""

    title = "Paddle-compatibility mode"

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
    compat = PaddleCompat()       # the same object as the entry point opkit.compat:paddle

    @staticmethod
    def optest_surface(base: type) -> type:
        """harness.OpTest with Paddle's spelling (opkit_paddle.optest_surface)."""
        from opkit_paddle.optest_surface import optest_surface

        return optest_surface(base)
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
        """The checks derive Paddle's cases from opkit's declarations where opkit has the op
        (this backend runs opkit's op vocabulary), and from Paddle's own description of an
        op opkit lacks (PaddleDeclarations)."""
        return _DECLARATIONS

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
        # float16 / bfloat16 where Paddle has them, for an op opkit lacks (opkit's own ops
        # keep to the dtypes opkit's op has: their verdicts compare the two)
        low = not _OPKIT.has_op(op_type)
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

        from opkit.framework.proto import ATTR_TYPE_IDS

        defaults = core.get_op_attrs_default_value(op_type.encode())
        role = {"op_role", "op_role_var", "op_namescope", "op_callstack", "op_device",
                "with_quant_attr"}
        attrs = {a.name: defaults.get(a.name, REQUIRED) for a in proto.attrs
                 if a.name not in role and not a.extra}
        types = {v: k for k, v in ATTR_TYPE_IDS.items()}
        slots = [tuple(Slot(v.name, bool(v.duplicable), bool(v.dispensable),
                            bool(v.intermediate)) for v in vs if not v.extra)
                 for vs in (proto.inputs, proto.outputs)]
        return OpDescription(op_type, slots[0], slots[1], attrs, self.has_grad(op_type),
                             None, shared_outputs(op_type),
                             {a.name: types[int(a.type)] for a in proto.attrs
                              if a.name in attrs and int(a.type) in types})

    def refused(self, exc: BaseException) -> bool:
        """Paddle's errors are re-raised as opkit's (opkit_paddle.backend.errors): opkit's
        rule decides."""
        return _OPKIT.refused(exc)

    def refusal_message(self, exc: BaseException) -> str | None:
        return _OPKIT.refusal_message(exc)

    def check_override(self, name: str):
        from opkit_paddle.backend.checks import override

        return override(name)

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict):
        from opkit_paddle.backend.op import compile_shapes

        return compile_shapes(case, specs, outs, unknown)


class PaddleDeclarations(Backend):
    """What the checks read of an op under the Paddle backend (Backend.declared_by): opkit's
    own declarations of an op opkit has, Paddle's description (its proto, attr defaults,
    grad op maker and CPU kernels, float16 / bfloat16 included) of one opkit lacks."""

    name = "paddle"
    lacks = PaddleBackend.lacks

    def _of(self, op_type: str) -> Backend:
        return _OPKIT if _OPKIT.has_op(op_type) else plugin

    def make(self, op_type, inputs, attrs, outputs=None, place=None, enable_inplace=False):
        return plugin.make(op_type, inputs, attrs, outputs, place, enable_inplace)

    def has_op(self, op_type: str) -> bool:
        return _OPKIT.has_op(op_type) or plugin.has_op(op_type)

    def describe(self, op_type: str) -> OpDescription:
        return self._of(op_type).describe(op_type)

    def proto(self, op_type: str):
        return self._of(op_type).proto(op_type)

    def has_grad(self, op_type: str) -> bool:
        return self._of(op_type).has_grad(op_type)

    def kernel_functions(self, op_type: str) -> list:
        return _OPKIT.kernel_functions(op_type)

    def compile_shapes(self, case, specs: dict, outs: dict, unknown: dict) -> dict:
        return self._of(case.op_type).compile_shapes(case, specs, outs, unknown)

    def kernel_places(self, op_type: str) -> dict:
        if _OPKIT.has_op(op_type):
            return _OPKIT.kernel_places(op_type)
        from opkit_paddle.backend import env

        found = sorted(env.cpu_kernel_dtypes(op_type, low_precision=True)) \
            if plugin.has_op(op_type) else []
        return {"CPU": found} if found else {}


plugin = PaddleBackend()
_DECLARATIONS = PaddleDeclarations()
compat_mode = PaddleBackend.compat
