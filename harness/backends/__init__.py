"""Which implementation runs the op under test: THE dispatch point of the backends.

A backend is an implementation of the op seam (the public methods of
`harness.runner.PreparedOp`): "opkit" (opkit's own framework and kernels, the default) or
"paddle" (PaddlePaddle's own CPU kernels through its static graph,
harness.backends.paddle_op). The run's options pick it (`Options.backend`: `opkit test
--backend paddle`, or OPKIT_BACKEND).

- `make_other(backend, ...)`: the backend's prepared op (harness.op.make, the one maker, calls it);
- `has_grad(op_type)` / `kernel_places(op_type)`: what the selected backend has;
- `check_override(name)`: for a check that cannot apply to the selected backend, the reason
  (the check skips with it), or a replacement Check object (the backend's own way to make
  the same finding), else None;
- `unavailable(backend)`: why a backend cannot run here (None: it can).
"""
from __future__ import annotations

import os

from harness import options
from opkit.registry import op_info

__all__ = ["BACKENDS", "DEFAULT_BACKEND", "selected", "activate", "prepare_child", "make_other", "has_grad", "kernel_places",
           "check_override", "unavailable", "compile_shapes"]

BACKENDS = ("opkit", "paddle")
DEFAULT_BACKEND = "opkit"


def selected() -> str:
    return getattr(options.current(), "backend", DEFAULT_BACKEND) or DEFAULT_BACKEND


def activate(backend: str, op_types=()) -> None:
    """A front door selected `backend`: fresh interpreters the checks start (determinism
    across hash seeds, state) get it through their environment, and each named op type the
    backend has but opkit lacks (an author's own Paddle op) is made known to opkit's registry
    from the backend's proto (harness.backends.paddle_shadow)."""

    os.environ["OPKIT_BACKEND"] = backend     # read back by harness.options in the children
    if backend == "paddle":
        from harness.backends import paddle_shadow

        for op in op_types or ():
            paddle_shadow.register(op)


def prepare_child() -> None:
    """In a fresh interpreter a check started (harness.fresh.child): the ops the selected
    backend has and opkit lacks made known again (the parent registered only the named ones;
    the child does not know which it will be handed)."""
    if selected() == "paddle":
        from harness.backends import paddle_shadow

        paddle_shadow.register_all()


def unavailable(backend: str) -> str | None:
    if backend == "paddle":
        from harness.backends import paddle_env

        return paddle_env.missing()
    if backend not in BACKENDS:
        return f"unknown backend {backend!r}: choose from {', '.join(BACKENDS)}"
    return None


def make_other(backend: str, op_type: str, inputs: dict, attrs: dict | None, outputs=None,
               place=None, enable_inplace: bool = False):
    """The implementation of a backend other than opkit's (harness.op.make calls this)."""
    if backend == "paddle":
        from harness.backends.paddle_grad_op import PaddleGradOp, is_grad_op
        from harness.backends.paddle_op import PaddlePreparedOp

        cls = PaddleGradOp if is_grad_op(op_type) else PaddlePreparedOp   # a grad op alone
        return cls(op_type, inputs, attrs, outputs, place, enable_inplace=enable_inplace)
    raise ValueError(f"unknown backend {backend!r}: choose from {', '.join(BACKENDS)}")


def has_grad(op_type: str, backend: str | None = None) -> bool:
    if (backend or selected()) == "paddle":
        from harness.backends import paddle_env

        paddle_env.load()
        from paddle.base import core

        return (paddle_env.has_op(op_type) or paddle_env.listed(op_type)) and \
            bool(core.has_non_empty_grad_op_maker(op_type))

    return op_info(op_type).grad_maker is not None


def kernel_places(op_type: str, backend: str | None = None) -> dict:
    """{place: [float dtypes with a kernel]} of the selected backend ({} : none)."""
    if (backend or selected()) == "paddle":
        from harness.backends import paddle_env

        if not paddle_env.has_op(op_type) and not paddle_env.listed(op_type):
            return {}          # (a grad op has kernels and no proto)
        # an op whose kernels Paddle's registry lists under another name (the legacy
        # `transpose` runs transpose2's phi kernel): both float dtypes are tried, a missing
        # one shows as the op failing
        return {"CPU": sorted(paddle_env.cpu_kernel_dtypes(op_type)) or
                ["float32", "float64"]}

    return op_info(op_type).kernel_places()


def check_override(name: str, backend: str | None = None):
    """None (the check runs as it is), a skip reason, or a replacement Check."""
    decide = OVERRIDES.get(backend or selected())
    return decide(name) if decide is not None else None


# backend -> override(check name): filled by the backend's checks module when a front door
# imports it (opkit.cli.test imports harness.backends.paddle_checks for --backend paddle);
# this package imports no check (the checks import the engine, which imports this package)
OVERRIDES: dict = {}


def compile_shapes(case, specs: dict, outs: dict, unknown: dict, backend: str | None = None):
    """{output: compile-time shape} with the dims in `unknown` set to -1, in the selected
    backend's own compile-time infer_shape."""
    if (backend or selected()) == "paddle":
        from harness.backends.paddle_op import compile_shapes as paddle_shapes

        return paddle_shapes(case, specs, outs, unknown)
    return None
