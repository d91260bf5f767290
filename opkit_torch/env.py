"""Loading PyTorch for the torch backend, and finding an op by its name.

`missing()` says why torch cannot be used (None: it can) without raising; `load()` imports
torch once per process; `resolve(op_type)` turns "NS::OP" or "NS::OP.OVERLOAD" into torch's
`OpOverload` (ValueError naming what is wrong when there is none).
"""
from __future__ import annotations

import functools
import importlib.util
import re

__all__ = ["PACKAGE", "EXTRA", "MIN_VERSION", "LIBRARIES", "install_hint", "missing", "load",
           "library_missing", "split", "resolve", "is_torch_name"]

PACKAGE = "torch"
EXTRA = "opkit-dl[torch]"
MIN_VERSION = (2, 4)

_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)::([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_]+))?$")


def install_hint() -> str:
    return (f"install it with: pip install {PACKAGE} (or opkit's extra {EXTRA}: "
            f"pip install -e '.[torch]' in a clone of opkit)")


@functools.lru_cache(maxsize=1)
def missing() -> str | None:
    """Why the torch backend cannot run here, or None."""
    if importlib.util.find_spec("torch") is None:
        return f"the torch backend needs the package '{PACKAGE}', which is not installed: " \
               f"{install_hint()}"
    try:
        torch = load()
    except Exception as exc:  # noqa: BLE001 - a broken install is a reason, not a crash
        return f"'{PACKAGE}' is installed but does not import ({type(exc).__name__}: {exc})"
    version = tuple(int(p) for p in re.findall(r"\d+", torch.__version__)[:2] or [0, 0])
    if version < MIN_VERSION:
        return f"the torch backend needs {PACKAGE} >= 2.4, found {torch.__version__}"
    return None


@functools.lru_cache(maxsize=1)
def load():
    """The `torch` module."""
    import torch

    return torch


#: namespaces whose ops a package registers when imported: {namespace: package}. Naming
#: an op of one (`torchvision::roi_align`) imports the package; no --ops needed.
LIBRARIES = {"torchvision": "torchvision"}


@functools.lru_cache(maxsize=None)
def library_missing(ns: str) -> str | None:
    """Why the package that registers namespace `ns` cannot be imported (None: imported,
    or `ns` is no namespace of LIBRARIES)."""
    package = LIBRARIES.get(ns)
    if package is None:
        return None
    if importlib.util.find_spec(package) is None:
        return (f"the package '{package}' that registers these ops is not installed (it "
                f"must be built for this torch, {load().__version__}: docs/torch.md, "
                f"\"torchvision\")")
    try:
        importlib.import_module(package)
    except Exception as exc:  # noqa: BLE001 - a broken install is a reason, not a crash
        first = (str(exc).splitlines() or [""])[0]
        return (f"the package '{package}' is installed but does not import beside torch "
                f"{load().__version__} ({type(exc).__name__}: {first}); install the "
                f"torchvision built for this torch (docs/torch.md, \"torchvision\")")
    return None


def is_torch_name(op_type: str) -> bool:
    """`op_type` is spelled as a torch op ("NS::OP" or "NS::OP.OVERLOAD")."""
    return bool(_NAME.match(op_type or ""))


def split(op_type: str) -> tuple[str, str, str | None]:
    """("NS", "OP", "OVERLOAD" or None) of a torch op name (ValueError: not one)."""
    m = _NAME.match(op_type or "")
    if not m:
        raise ValueError(f"{op_type!r} is not a torch op name: write it as NS::OP or "
                         f"NS::OP.OVERLOAD (aten::hardshrink, mylib::myop)")
    return m.group(1), m.group(2), m.group(3)


@functools.lru_cache(maxsize=None)
def resolve(op_type: str):
    """torch's OpOverload of `op_type`. Without an overload: the only one that takes
    tensors (`default` usually; an `out=` variant does not count); several: ValueError
    listing them."""
    ns, name, overload = split(op_type)
    torch = load()
    if ns in LIBRARIES:
        why = library_missing(ns)
        if why is not None:
            raise ValueError(f"{ns}::{name}: {why}")
    try:
        packet = getattr(getattr(torch.ops, ns), name)
    except (AttributeError, RuntimeError):
        raise ValueError(f"torch has no op {ns}::{name} (is the module that registers it "
                         f"imported? opkit test ... --ops MODULE)") from None
    names = list(packet.overloads())
    if overload is None:
        overload = _default_overload(ns, name, packet, names)
    if overload not in names:
        raise ValueError(f"{ns}::{name} has no overload {overload!r} (it has "
                         f"{', '.join(names)})")
    return getattr(packet, overload)


def _default_overload(ns: str, name: str, packet, names: list) -> str:
    """`default` when it takes tensors, else the only overload that takes tensors and is
    no `out=` variant (ValueError: several)."""
    def plain(o):
        args = getattr(packet, o)._schema.arguments
        is_out = any(a.kwarg_only and a.alias_info is not None and a.alias_info.is_write
                     for a in args)
        return not is_out and any("Tensor" in str(a.type) for a in args)

    if "default" in names and plain("default"):
        return "default"
    found = [o for o in names if plain(o)]
    if len(found) == 1:
        return found[0]
    raise ValueError(f"{ns}::{name} has several overloads that take tensors "
                     f"({', '.join(found or names)}): name one, as "
                     f"{ns}::{name}.{(found or names)[0]}")
