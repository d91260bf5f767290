"""The Paddle mode with the real PaddlePaddle (the Paddle backend): Fluid 1.8's name.

Paddle 2.5 renamed `paddle.fluid` to `paddle.base`; Paddle 3 has no `paddle.fluid`. The
Fluid 1.8 test files import `paddle.fluid` (and `paddle.fluid.core`, `.framework`, ...):
`install()` makes each `paddle.fluid.X` the module `paddle.base.X` of the installed Paddle
(a name Paddle 3 removed from `paddle.base`, e.g. most of `fluid.layers`, still fails, as
it would in Paddle). `uninstall()` takes the alias away. Nothing is installed when the
Paddle in use has its own `paddle.fluid`.
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

__all__ = ["install", "uninstall"]

_OLD, _NEW = "paddle.fluid", "paddle.base"


class _FluidAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`paddle.fluid[.X]` imports as the module `paddle.base[.X]` itself."""

    def find_spec(self, name, path=None, target=None):
        if name != _OLD and not name.startswith(_OLD + "."):
            return None
        try:
            if importlib.util.find_spec(_NEW + name[len(_OLD):]) is None:
                return None
        except (ImportError, ValueError):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        # the import system hands out what sys.modules holds under the name after this
        sys.modules[module.__name__] = importlib.import_module(_NEW + module.__name__[len(_OLD):])


def _installed() -> list:
    return [f for f in sys.meta_path if type(f).__name__ == "_FluidAlias" and
            type(f).__module__ == __name__]


def install() -> None:
    paddle = sys.modules.get("paddle")
    if paddle is None or _installed():
        return
    try:
        if importlib.util.find_spec(_OLD) is not None:
            return              # this Paddle still has its own paddle.fluid
    except (ImportError, ValueError):
        pass
    sys.meta_path.insert(0, _FluidAlias())


def uninstall() -> None:
    found = _installed()
    if not found:
        return
    sys.meta_path[:] = [f for f in sys.meta_path if f not in found]
    for name in [n for n in sys.modules if n == _OLD or n.startswith(_OLD + ".")]:
        del sys.modules[name]
    paddle = sys.modules.get("paddle")
    if paddle is not None and not getattr(paddle, "__opkit_facade__", False) and \
            "fluid" in vars(paddle):
        delattr(paddle, "fluid")
