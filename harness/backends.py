"""Which implementation runs the op under test: THE dispatch point of the backends.

A backend implements the op seam (`harness.op.PreparedOp`'s public methods): "opkit"
(opkit's own kernels, the default), or an entry point of the group `opkit.backends`
(harness.spec.BACKEND_PROTOCOL; opkit_paddle's "paddle": PaddlePaddle's CPU kernels).
`Options.backend` picks it (`opkit test --backend NAME`, OPKIT_BACKEND).
"""
from __future__ import annotations

import functools
import os
from importlib.metadata import entry_points

from harness import options
from harness.spec import BACKEND_GROUP
from opkit.registry import has_op as opkit_has_op
from opkit.registry import op_info

__all__ = ["DEFAULT_BACKEND", "names", "plugin", "compat_mode", "selected", "activate",
           "prepare_child", "unavailable", "has_op", "has_grad",
           "kernel_places", "check_override", "compile_shapes", "reference_on_stored_attrs"]

DEFAULT_BACKEND = "opkit"


@functools.cache
def _plugins() -> dict:
    return {ep.name: ep.load() for ep in entry_points(group=BACKEND_GROUP)}


def names() -> list[str]:
    """Every backend this installation has: opkit's own first, then the plugins' (their
    entry points' names; nothing is loaded)."""
    return options.backend_names()


def plugin(backend: str):
    """The backend object the entry point `backend` names (ValueError: none does)."""
    try:
        return _plugins()[backend]
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}: choose from "
                         f"{', '.join(names())}") from None


def compat_mode(backend: str):
    """The compatibility mode (spec.COMPAT_PROTOCOL) of the backend `backend`, or None."""
    return getattr(_plugins().get(backend), "compat", None)


def selected() -> str:
    return getattr(options.current(), "backend", DEFAULT_BACKEND) or DEFAULT_BACKEND


def _other(backend: str | None):
    """The object of `backend` (default: the selected one); None for opkit's own."""
    backend = backend or selected()
    return None if backend == DEFAULT_BACKEND else plugin(backend)


def activate(backend: str, op_types=()) -> None:
    """A front door selected `backend`: the fresh interpreters the checks start get it
    through their environment; the backend registers the named ops opkit lacks."""
    os.environ["OPKIT_BACKEND"] = backend     # read back by harness.options in the children
    if backend != DEFAULT_BACKEND:
        plugin(backend).activate(op_types or ())


def prepare_child() -> None:
    """In a fresh interpreter (harness.fresh.child): the selected backend registers all
    its ops that opkit lacks (the child does not know which it will get)."""
    other = _other(None)
    if other is not None:
        other.prepare_child()


def unavailable(backend: str) -> str | None:
    """Why `backend` cannot run here (None: it can)."""
    if backend == DEFAULT_BACKEND:
        return None
    try:
        return plugin(backend).unavailable()
    except ValueError as exc:
        return str(exc)


def has_op(op_type: str, backend: str | None = None) -> bool:
    other = _other(backend)
    return opkit_has_op(op_type) if other is None else other.has_op(op_type)


def has_grad(op_type: str, backend: str | None = None) -> bool:
    other = _other(backend)
    return op_info(op_type).grad_maker is not None if other is None else \
        other.has_grad(op_type)


def kernel_places(op_type: str, backend: str | None = None) -> dict:
    """{place: [float dtypes with a kernel]} of the selected backend ({}: none)."""
    other = _other(backend)
    return op_info(op_type).kernel_places() if other is None else \
        other.kernel_places(op_type)


def check_override(name: str, backend: str | None = None):
    """None (the check runs as it is), a skip reason, or a replacement Check."""
    other = _other(backend)
    return None if other is None else other.check_override(name)


def compile_shapes(case, specs: dict, outs: dict, unknown: dict, backend: str | None = None):
    """{output: compile-time shape} with the dims in `unknown` set to -1, in the selected
    backend's own compile-time infer_shape (None: opkit's, which the caller runs)."""
    other = _other(backend)
    return None if other is None else other.compile_shapes(case, specs, outs, unknown)


def reference_on_stored_attrs(op_type: str, reference, backend: str | None = None):
    """`reference(inputs, attrs)` given the attrs as the selected backend stores them (a
    backend whose framework keeps a float attr in 32 bits, Paddle's AttrType FLOAT: the
    oracle computes with the value the kernel gets, not the 64-bit value the case wrote).
    The reference itself where the backend stores attrs as given (opkit's own)."""
    other = _other(backend)
    stored = getattr(other, "stored_attrs", None)
    if stored is None or getattr(reference, "__opkit_stored_attrs__", False):
        return reference

    @functools.wraps(reference)
    def on_stored(inputs, attrs, *args, **kwargs):
        return reference(inputs, stored(op_type, attrs), *args, **kwargs)

    on_stored.__opkit_stored_attrs__ = True
    return on_stored
