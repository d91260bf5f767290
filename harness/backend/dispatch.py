"""Which implementation runs the op under test: THE dispatch point of the backends.

A backend is a `harness.backend.contract.Backend`: the object an entry point of the group
`opkit.backends` names, opkit's own kernels among them ("opkit", the default:
opkit_fluid's) as PaddlePaddle's ("paddle": opkit_paddle's).
`Options.backend` picks it (`opkit test --backend NAME`, OPKIT_BACKEND); every function
below asks the run's backend (or the one named), none knows any backend by name.
"""
from __future__ import annotations

import functools
import os

from harness import options
from harness.backend.contract import Backend
from harness.spec import BACKEND_GROUP, COMPAT_GROUP
from opkit.plugins import entry_points_of, load_entry_point

__all__ = ["DEFAULT_BACKEND", "names", "plugin", "get", "compat_mode", "compat_names",
           "optest_surfaces",
           "selected", "activate", "prepare_child", "unavailable", "has_op", "has_grad",
           "kernel_places", "check_override", "compile_shapes", "grad_key", "cannot",
           "reference_on_stored_attrs", "declared", "proto", "describe", "selector",
           "kernel_functions", "kernel_files"]

DEFAULT_BACKEND = options.BUILTIN_BACKEND
_LOADED: dict = {}


def _plugin_names() -> dict:
    return dict(entry_points_of(BACKEND_GROUP))


def _load(backend: str):
    """The entry point `backend`'s object, loaded once (KeyError: no such entry point)."""
    if backend not in _LOADED:
        _LOADED[backend] = load_entry_point(_plugin_names()[backend])
    return _LOADED[backend]


def names() -> list[str]:
    """Every backend this installation has: the default first, then the others (their
    entry points' names; nothing is loaded)."""
    return options.backend_names()


def plugin(backend: str) -> Backend:
    """The backend object named `backend` (ValueError: none is, or the entry point's
    object is not a harness.backend.contract.Backend)."""
    try:
        found = _load(backend)
    except KeyError:
        raise ValueError(f"unknown backend {backend!r}: choose from "
                         f"{', '.join(names())}") from None
    if not isinstance(found, Backend):
        raise ValueError(f"backend {backend!r}: its entry point names a "
                         f"{type(found).__name__}, not a harness.backend.contract.Backend")
    return found


get = plugin


def optest_surfaces() -> list:
    """The installed plugins' `optest_surface`s (harness.spec.PLUGIN_ATTRIBUTES), in the
    order of their names."""
    found = [_load(name) for name in sorted(_plugin_names())]
    return [f.optest_surface for f in found if callable(getattr(f, "optest_surface", None))]


@functools.cache
def compat_names() -> list[str]:
    """The names of the compatibility modes installed (entry points of spec.COMPAT_GROUP;
    nothing is loaded)."""
    return [name for name, _ in entry_points_of(COMPAT_GROUP)]


@functools.cache
def compat_mode(name: str):
    """The compatibility mode (spec.COMPAT_PROTOCOL) named `name`, or None."""
    value = dict(entry_points_of(COMPAT_GROUP)).get(name)
    return None if value is None else load_entry_point(value)


def selected() -> str:
    return getattr(options.current(), "backend", DEFAULT_BACKEND) or DEFAULT_BACKEND


def _backend(backend: str | None) -> Backend:
    return plugin(backend or selected())


def activate(backend: str, op_types=()) -> None:
    """A front door selected `backend`: the fresh interpreters the checks start get it
    through their environment; the backend prepares the named ops."""
    os.environ["OPKIT_BACKEND"] = backend     # read back by harness.options in the children
    plugin(backend).activate(op_types or ())


def prepare_child() -> None:
    """In a fresh interpreter (harness.processes.fresh.child): the selected backend prepares all its
    ops (the child does not know which it will get)."""
    _backend(None).prepare_child()


def unavailable(backend: str) -> str | None:
    """Why `backend` cannot run here (None: it can)."""
    try:
        return plugin(backend).unavailable()
    except ValueError as exc:
        return str(exc)


def has_op(op_type: str, backend: str | None = None) -> bool:
    return _backend(backend).has_op(op_type)


def has_grad(op_type: str, backend: str | None = None) -> bool:
    return _backend(backend).has_grad(op_type)


def kernel_places(op_type: str, backend: str | None = None) -> dict:
    """{place: [float dtypes with a kernel]} of the selected backend ({}: none)."""
    return _backend(backend).kernel_places(op_type)


def declared(backend: str | None = None) -> Backend:
    """The backend whose declarations the checks derive cases from
    (Backend.declared_by: the selected backend itself, unless it runs another's op
    vocabulary). Its has_op, describe, proto, kernel_places and has_grad are what the
    checks read of an op, never a framework's registry."""
    return _backend(backend).declared_by()


def proto(op_type: str, backend: str | None = None):
    """The op's declaration as an opkit OpProto (Backend.proto), or None: an op the
    declaring backend does not have, or one without a proto."""
    try:
        return declared(backend).proto(op_type)
    except Exception:  # noqa: BLE001 - an op without a declaration declares nothing
        return None


def describe(op_type: str, backend: str | None = None):
    """The declaring backend's OpDescription of the op."""
    return declared(backend).describe(op_type)


def selector(backend: str | None = None) -> str:
    """The `opkit test` arguments that select the backend ("" for the default one)."""
    return _backend(backend).selector()


def kernel_functions(op_type: str, backend: str | None = None) -> list:
    """The selected backend's Python kernels of the op (Backend.kernel_functions)."""
    return _backend(backend).kernel_functions(op_type)


def kernel_files(op_type: str) -> list[str]:
    """The source files of the declaring backend's kernels of `op_type` and of its grad op."""
    import inspect

    files = []
    for t in (op_type, op_type + "_grad"):
        for entry in declared().kernel_functions(t):
            try:
                f = inspect.getsourcefile(entry.fn)
            except TypeError:
                f = None
            f = f or (entry.where or "").rsplit(":", 1)[0]
            if f and os.path.isfile(f) and os.path.abspath(f) not in files:
                files.append(os.path.abspath(f))
    return files


def check_override(name: str, backend: str | None = None):
    """None (the check runs as it is), a skip reason, or a replacement Check."""
    return _backend(backend).check_override(name)


def cannot(capability: str, backend: str | None = None) -> str | None:
    """Why the selected backend lacks `capability` (contract.CAPABILITIES), or None."""
    return _backend(backend).cannot(capability)


def grad_key(name: str, backend: str | None = None) -> str:
    """The key of input `name`'s gradient in a run's results."""
    return _backend(backend).grad_key(name)


def compile_shapes(case, specs: dict, outs: dict, unknown: dict, backend: str | None = None):
    """{output: compile-time shape} with the dims in `unknown` set to -1, in the selected
    backend's own compile-time infer_shape."""
    return _backend(backend).compile_shapes(case, specs, outs, unknown)


def reference_on_stored_attrs(op_type: str, reference, backend: str | None = None):
    """`reference(inputs, attrs)` given the attrs as the selected backend stores them
    (Backend.stored_attrs: a framework that keeps a float attr in 32 bits, Paddle's AttrType
    FLOAT, gives the oracle the value the kernel gets, not the 64-bit value the case
    wrote). The reference itself where the backend stores attrs as given (opkit's own)."""
    found = _backend(backend)
    if type(found).stored_attrs is Backend.stored_attrs or \
            getattr(reference, "__opkit_stored_attrs__", False):
        return reference

    @functools.wraps(reference)
    def on_stored(inputs, attrs, *args, **kwargs):
        return reference(inputs, found.stored_attrs(op_type, attrs), *args, **kwargs)

    on_stored.__opkit_stored_attrs__ = True
    return on_stored
