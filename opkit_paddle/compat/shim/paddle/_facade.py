"""Placeholders for the parts of Paddle's Python API that opkit's facade does not provide.

Importing such a name works (test files import them at the top); using it raises
`unittest.SkipTest` naming the API, so a test that needs Paddle's static-graph, dygraph or
executor API is reported as skipped with the reason, never passed.
"""
from __future__ import annotations

import sys
import types
import unittest

REASON = ("is Paddle's own Python API (static graph / dygraph / executor), not part of "
          "opkit's Paddle facade: the compatibility mode runs OpTest checks only")


def skip(name: str):
    raise unittest.SkipTest(f"{name} {REASON}")


class Unsupported:
    """A Paddle API object opkit does not provide: any use skips the test."""

    def __init__(self, name: str):
        object.__setattr__(self, "_name", name)

    def __repr__(self):
        return f"<opkit Paddle facade: {self._name} (unsupported)>"

    def __getattr__(self, attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Unsupported(f"{self._name}.{attr}")

    def __call__(self, *args, **kwargs):
        skip(self._name)

    def __enter__(self):
        skip(self._name)

    def __exit__(self, *exc):
        return False

    def __iter__(self):
        skip(self._name)

    def __getitem__(self, key):
        skip(self._name)

    def __mro_entries__(self, bases):
        """A test file's class deriving from Paddle's API (`class Net(paddle.nn.Layer)`)
        is defined; making an instance of it skips the test doing so."""
        name = self._name

        def __init__(obj, *args, **kwargs):
            skip(name)

        return (type(name.rpartition(".")[2], (), {"__init__": __init__,
                                                   "__opkit_facade__": True}),)


def placeholder_module(name: str, doc: str = "", **real) -> types.ModuleType:
    """A module (registered in sys.modules) whose unknown attributes are Unsupported."""
    module = sys.modules.get(name)
    if module is None:
        module = types.ModuleType(name, doc or f"opkit Paddle facade: {name}")
        sys.modules[name] = module
    module.__opkit_facade__ = True
    module.__dict__.update(real)

    def __getattr__(attr, _name=name):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Unsupported(f"{_name}.{attr}")

    module.__getattr__ = __getattr__
    parent, _, child = name.rpartition(".")
    if parent in sys.modules:
        setattr(sys.modules[parent], child, module)
    return module


def install_getattr(module_globals: dict) -> None:
    """Give a facade module file a module-level __getattr__ returning Unsupported."""
    name = module_globals["__name__"]

    def __getattr__(attr):
        if attr.startswith("__") and attr.endswith("__"):
            raise AttributeError(attr)
        return Unsupported(f"{name}.{attr}")

    module_globals["__getattr__"] = __getattr__


class _Alias:
    """Loader handing back a module that already exists under another name."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        pass


class _Placeholder:
    """Loader of a placeholder module (a Paddle module the facade does not provide)."""

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        name = module.__name__
        module.__opkit_facade__ = True
        module.__path__ = []

        def __getattr__(attr, _name=name):
            if attr.startswith("__") and attr.endswith("__"):
                raise AttributeError(attr)
            return Unsupported(f"{_name}.{attr}")

        module.__getattr__ = __getattr__


class _SubmoduleFinder:
    """Meta-path finder of the facade, last on sys.meta_path: `paddle.base.X` is
    `paddle.fluid.X` (Paddle 2.5 renamed fluid to base), and any other `paddle.X.Y` that the
    facade has no file for is a placeholder module (`import paddle.inference`,
    `from paddle.incubate.autograd import primapi` work; using them skips the test)."""

    def find_spec(self, fullname, path=None, target=None):
        import importlib.machinery
        import importlib.util

        if not fullname.startswith("paddle.") or "paddle" not in sys.modules or \
                not getattr(sys.modules["paddle"], "OPKIT_FACADE", False):
            return None
        for old, new in (("paddle.base.", "paddle.fluid."), ("paddle.base", "paddle.fluid")):
            if fullname == old or (old.endswith(".") and fullname.startswith(old)):
                target_name = new + fullname[len(old):]
                module = importlib.import_module(target_name)
                return importlib.machinery.ModuleSpec(fullname, _Alias(module),
                                                      is_package=True)
        return importlib.machinery.ModuleSpec(fullname, _Placeholder(), is_package=True)


def install_submodule_finder() -> None:
    if not any(isinstance(f, _SubmoduleFinder) for f in sys.meta_path):
        sys.meta_path.append(_SubmoduleFinder())


def uninstall_submodule_finder() -> None:
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _SubmoduleFinder)]
