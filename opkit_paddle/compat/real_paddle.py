"""The Paddle mode with the real PaddlePaddle (the Paddle backend): Fluid 1.8's name.

Paddle 2.5 renamed `paddle.fluid` to `paddle.base`; Paddle 3 has no `paddle.fluid`. The
Fluid 1.8 test files import `paddle.fluid` (and `paddle.fluid.core`, `.framework`, ...):
`install()` makes each `paddle.fluid.X` the module `paddle.base.X` of the installed Paddle
(a name Paddle 3 removed from `paddle.base`, e.g. most of `fluid.layers`, still fails, as
it would in Paddle), except `paddle.fluid.op`, Fluid's test-side `Operator` factory, which
is the mode's `op` (as Paddle 2.x's test files import it by its bare name). Nothing of that is installed when the Paddle in use has its own
`paddle.fluid`.

Paddle 2.6's test files import the test decorators `test_with_pir_api` and
`test_with_old_ir_only` from `paddle.pir_utils`, which Paddle 3 removed from the package:
where missing they are added, and run the test once, in the legacy static graph the
backend runs (as the facade's do). `uninstall()` takes all of it away.
"""
from __future__ import annotations

import functools
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
        if name == _OLD + ".op":
            return importlib.util.spec_from_loader(name, self)
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
        name = module.__name__
        sys.modules[name] = importlib.import_module(
            "op" if name == _OLD + ".op" else _NEW + name[len(_OLD):])


def _installed() -> list:
    return [f for f in sys.meta_path if type(f).__name__ == "_FluidAlias" and
            type(f).__module__ == __name__]


_DECORATORS = ("test_with_pir_api", "test_with_old_ir_only")
_added: list = []


def _run_once(func):
    """Paddle 2.6's decorator ran the test under the old IR and under PIR; here it runs
    once, in the old IR (the one the Paddle backend runs its ops in)."""

    @functools.wraps(func)
    def impl(*args, **kwargs):
        return func(*args, **kwargs)

    return impl


_run_once.__test__ = False      # a decorator, not a test (pytest collects imported names)


def _add_decorators() -> None:
    try:
        pir_utils = importlib.import_module("paddle.pir_utils")
    except ImportError:
        return
    for name in _DECORATORS:
        if not hasattr(pir_utils, name):
            setattr(pir_utils, name, _run_once)
            _added.append((pir_utils, name))


def install() -> None:
    paddle = sys.modules.get("paddle")
    if paddle is None or _installed():
        return
    _add_decorators()
    try:
        if importlib.util.find_spec(_OLD) is not None:
            return              # this Paddle still has its own paddle.fluid
    except (ImportError, ValueError):
        pass
    sys.meta_path.insert(0, _FluidAlias())


def uninstall() -> None:
    while _added:
        module, name = _added.pop()
        if getattr(module, name, None) is _run_once:
            delattr(module, name)
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
