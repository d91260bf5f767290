"""The registry's seam to the op packages.

The framework imports no op package and nothing of the layers above it. `import opkit`
installs the default loaders here (`opkit.plugins`: the installed packages of the entry-point
group `opkit.ops`, one op's module on demand); the registry calls them on its first lookup.
`opkit.registry.set_op_package_loader` replaces the whole-package loader for a process.
"""
from __future__ import annotations

__all__ = ["install", "load_all", "load_one"]

_LOAD_ALL = None   # () -> None: load every installed op package
_LOAD_ONE = None   # (op_type) -> None: load what registers op_type


def install(load_all, load_one) -> None:
    """Set the default loaders (called once, by `import opkit`)."""
    global _LOAD_ALL, _LOAD_ONE
    _LOAD_ALL, _LOAD_ONE = load_all, load_one


def load_all() -> None:
    if _LOAD_ALL is not None:
        _LOAD_ALL()


def load_one(op_type: str) -> None:
    if _LOAD_ONE is not None:
        _LOAD_ONE(op_type)
