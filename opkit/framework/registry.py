"""The op registry: op types -> OpInfo (proto, op class, grad maker, kernels, declarations)."""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import os
import sys
from dataclasses import dataclass, field

from opkit.framework import errors, packages
from opkit.framework.kernel_type import OpKernel, dtype_name, kernel_key
from opkit.framework.place import place_kind
from opkit.framework.proto import OpMaker, OpProto

__all__ = ["OpInfo", "KernelEntry", "register_operator", "register_kernel", "all_op_types",
           "op_info", "has_op", "scratch", "kernels_of", "orphan_kernels",
           "set_op_package_loader"]


@dataclass
class KernelEntry:
    op_type: str
    dtype: str
    place: str  # "CPU" or "GPU"
    layout: str
    library: str
    fn: object  # callable(ctx)
    name: str   # where it came from, for messages
    priority: int = 0  # a lower-priority kernel yields its key to a higher one
    where: str = ""  # '<file>:<line>' of the register_kernel call

    def __post_init__(self):
        import numpy as np

        self.np_dtype = np.dtype(self.dtype)

    @property
    def key(self) -> tuple:
        return (self.dtype, self.place, self.layout, self.library)

    def describe(self) -> str:
        extra = "" if (self.layout, self.library) == ("ANY", "PLAIN") else \
            f" {self.layout}/{self.library}"
        return f"{self.place} {self.dtype}{extra}"


@dataclass
class OpInfo:
    type: str
    op_class: type
    proto: OpProto | None = None
    grad_maker: object = None
    infer_var_type: object = None
    inplace: dict = field(default_factory=dict)
    no_need_buffer: list = field(default_factory=list)
    source: str = ""

    @property
    def kernels(self) -> dict:
        """{(dtype, place, layout, library): KernelEntry} of this op."""
        return _KERNELS.get(self.type, {})

    def kernel_places(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for entry in self.kernels.values():
            out.setdefault(entry.place, []).append(entry.dtype)
        return {p: sorted(set(d)) for p, d in sorted(out.items())}

    def describe_kernels(self) -> str:
        kernels = sorted(e.describe() for e in self.kernels.values())
        return ", ".join(kernels) if kernels else "none"


_OPS: dict[str, OpInfo] = {}
_KERNELS: dict[str, dict[tuple, KernelEntry]] = {}
_BUILTINS_LOADED = False
_LOADER = None  # set_op_package_loader's; else the default one (opkit.framework.packages)


def set_op_package_loader(loader) -> None:
    """Public seam: `loader()` is called once, on the first registry lookup, to load the
    installed op packages instead of the default one that `import opkit` installs in
    opkit.framework.packages (opkit.plugins: the entry points). The registry itself imports
    no op package."""
    global _LOADER, _BUILTINS_LOADED
    _LOADER = loader
    _BUILTINS_LOADED = False


def _load_op_type(op_type: str) -> None:
    """Before the installed op packages are all loaded: load what registers `op_type` only
    (opkit.plugins.load_op_type: the op's own module for a package that loads its ops on
    demand). Only with the default loader; a loader set by set_op_package_loader loads
    everything on the first lookup, as before."""
    if _BUILTINS_LOADED or _LOADER is not None or op_type in _TRIED:
        return
    _TRIED.add(op_type)
    packages.load_one(op_type)


_TRIED: set = set()  # op types whose on-demand load ran (found or not)


def _ensure_builtin_ops() -> None:
    """Load the installed op packages once, so that lookups see the built-in ops."""
    global _BUILTINS_LOADED
    if _BUILTINS_LOADED:
        return
    _BUILTINS_LOADED = True
    (_LOADER or packages.load_all)()


@functools.lru_cache(maxsize=None)
def _real_path(filename: str) -> str:
    return os.path.realpath(filename)  # one file registers many ops: resolve it once


def _source_of(obj, filename: str | None = None) -> str:
    """'<real path of the file>:<qualname>': who registered something, for messages and for
    telling a module loaded twice (same file) from a real clash."""
    try:
        if filename is None:
            code = getattr(obj, "__code__", None)  # a function: no inspect needed
            filename = code.co_filename if code is not None else inspect.getsourcefile(obj)
        return f"{_real_path(filename)}:{obj.__qualname__}"
    except (TypeError, OSError):
        return getattr(obj, "__qualname__", repr(obj))


def register_operator(op_type: str, op_class, maker=None, *, grad_maker=None,
                      infer_var_type=None, inplace=None, no_need_buffer=None) -> OpInfo:
    """Register an op type. Registering the same type twice is an error (unless the same
    class from the same file registers again, as when a module is loaded a second time)."""
    if not isinstance(op_type, str) or not op_type:
        raise errors.InvalidArgument("register_operator needs a non-empty op type, got %r",
                                     op_type)
    # an operator class, known by its base's name: the registry sits below the module of
    # OperatorBase (which looks kernels up here) and does not import it
    if not (inspect.isclass(op_class) and
            any(k.__name__ == "OperatorBase" for k in op_class.__mro__)):
        raise errors.InvalidArgument(
            "register_operator('%s', ...): op_class must subclass OperatorWithKernel or "
            "OperatorBase, got %r", op_type, op_class)
    # the file that registers the op (an op class may be shared by several registrations)
    source = _source_of(op_class, sys._getframe(1).f_code.co_filename)
    old = _OPS.get(op_type)
    if old is not None and old.source != source:
        raise errors.AlreadyExists("op '%s' is registered twice: first by %s, again by %s",
                                   op_type, old.source, source)
    proto = None
    if maker is not None:
        if inspect.isclass(maker) and issubclass(maker, OpMaker):
            maker = maker(op_type)
        elif isinstance(maker, OpMaker):
            maker.proto.type = op_type
        else:
            raise errors.InvalidArgument("register_operator('%s', ...): maker must be an OpMaker "
                                         "subclass, got %r", op_type, maker)
        maker.proto.type = op_type
        for a in maker.proto.attrs:
            a.op_type = op_type
        proto = maker.build()
        for a in proto.attrs:
            a.op_type = op_type
    inplace = dict(inplace or {})
    no_need_buffer = list([no_need_buffer] if isinstance(no_need_buffer, str)
                          else (no_need_buffer or []))
    if proto is not None:
        for slot_in, slot_out in inplace.items():
            if proto.input(slot_in) is None or proto.output(slot_out) is None:
                raise errors.InvalidArgument(
                    "op '%s' declares inplace %s -> %s, but the proto has no input %r or no "
                    "output %r", op_type, slot_in, slot_out, slot_in, slot_out)
    info = OpInfo(op_type, op_class, proto, grad_maker, infer_var_type, inplace,
                  no_need_buffer, source)
    _OPS[op_type] = info
    return info


def _as_tuple(value, what: str, op_type: str) -> tuple:
    if isinstance(value, str):
        return (value,)
    try:
        items = tuple(value)
    except TypeError:
        raise errors.InvalidArgument("register_kernel('%s'): %s must be a string or a tuple of "
                                     "strings, got %r", op_type, what, value) from None
    if not items:
        raise errors.InvalidArgument("register_kernel('%s'): %s is empty", op_type, what)
    return items


def register_kernel(op_type: str, place="CPU", dtypes=("float32", "float64"), layout="ANY",
                    library="PLAIN", priority: int = 0):
    """Decorator: registers `f(ctx)` or an `OpKernel` subclass for every place x dtype.

    Two kernels for one (op, place, dtype, layout, library) are an error, unless their
    priorities differ: then the higher one holds the key, whichever registers first (a
    fallback kernel registers with priority -1, a dedicated one that should win with 1)."""
    caller = sys._getframe(1)
    where = f"{caller.f_code.co_filename}:{caller.f_lineno}"
    if not isinstance(priority, int):
        raise errors.InvalidArgument("register_kernel('%s'): priority must be an int, got %r",
                                     op_type, priority)
    places = [place_kind(p) for p in _as_tuple(place, "place", op_type)]
    try:
        dts = [dtype_name(d) for d in _as_tuple(dtypes, "dtypes", op_type)]
    except TypeError as exc:
        raise errors.InvalidArgument("register_kernel('%s'): unknown dtype in %r (%s)", op_type,
                                     dtypes, exc) from None

    def decorate(kernel):
        if inspect.isclass(kernel):
            if not issubclass(kernel, OpKernel):
                raise errors.InvalidArgument(
                    "register_kernel('%s'): a class kernel must subclass OpKernel, got %r",
                    op_type, kernel)
            fn = kernel().compute
        elif callable(kernel):
            fn = kernel
        else:
            raise errors.InvalidArgument("register_kernel('%s'): expected a function f(ctx) or "
                                         "an OpKernel subclass, got %r", op_type, kernel)
        source = _source_of(kernel)
        table = _KERNELS.setdefault(op_type, {})
        for p in places:
            for d in dts:
                key = kernel_key(d, p, layout, library)
                old = table.get(key)
                if old is not None and old.name != source:
                    if old.priority > priority:
                        continue  # the registered kernel outranks this one
                    if old.priority == priority:
                        raise errors.AlreadyExists(
                            "kernel of op '%s' for %s %s is registered twice: by %s and by %s",
                            op_type, p, d, old.name, source)
                table[key] = KernelEntry(op_type, d, p, layout, library, fn, source, priority,
                                         where)
        return kernel

    return decorate


def kernels_of(op_type: str) -> dict:
    """{(dtype, place, layout, library): KernelEntry} registered for `op_type` so far (also
    for an op type not registered (yet): see orphan_kernels)."""
    return dict(_KERNELS.get(op_type, {}))


def orphan_kernels() -> list[KernelEntry]:
    """Kernels registered for an op type that no loaded package registers."""
    return [e for t, table in sorted(_KERNELS.items()) if t not in _OPS
            for e in table.values()]


def all_op_types() -> list[str]:
    """Every registered op type, sorted."""
    _ensure_builtin_ops()
    return sorted(_OPS)


def has_op(op_type: str) -> bool:
    if op_type not in _OPS:
        _load_op_type(op_type)
        if op_type not in _OPS:
            _ensure_builtin_ops()
    return op_type in _OPS


def op_info(op_type: str) -> OpInfo:
    """The OpInfo of `op_type`; NotFound (listing close names) when it is not registered."""
    info = _OPS.get(op_type)
    if info is None:
        _load_op_type(op_type)
        info = _OPS.get(op_type)
    if info is None:
        _ensure_builtin_ops()
        info = _OPS.get(op_type)
    if info is None:
        import difflib

        close = difflib.get_close_matches(op_type, list(_OPS), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise errors.NotFound("op '%s' is not registered%s", op_type, hint)
    return info


# op type -> its declared parallel signatures (filled by opkit.framework.sbp.register_sbp;
# kept here so that scratch() restores them without importing that module)
SBP_DECLARATIONS: dict = {}


@contextlib.contextmanager
def scratch():
    """Snapshot the registry and restore it on exit (for tests that register ops)."""
    _ensure_builtin_ops()
    ops = dict(_OPS)
    kernels = {k: dict(v) for k, v in _KERNELS.items()}
    protos = {k: copy.deepcopy(v.proto) for k, v in _OPS.items()}
    sbp_decls = dict(SBP_DECLARATIONS)
    try:
        yield
    finally:
        SBP_DECLARATIONS.clear()
        SBP_DECLARATIONS.update(sbp_decls)
        _OPS.clear()
        _OPS.update(ops)
        for k, info in _OPS.items():
            info.proto = protos[k]
        _KERNELS.clear()
        _KERNELS.update(kernels)
