"""pytest hooks of the Paddle-compatibility mode (registered by `--opkit-paddle`).

- Paddle runs its test files with unittest: a plain class named `Test...` that is no
  `unittest.TestCase` (Paddle's mixins, e.g. `TestPool2D_Op_Mixin`) is no test there, and
  pytest does not collect it in the mode either.
- Each test file's folder is on sys.path (appended), as Paddle's CTest runner has it, and
  its sibling `legacy_test` folder (Paddle's shared test helpers), as Paddle's build has it.
- A test file the mode cannot import is one collection error whose message names the file
  and the missing name (`continue_on_collection_errors` keeps the other files running).
- With the real PaddlePaddle (the Paddle backend): Paddle runs each test file in a process
  of its own, in the static or dynamic mode its import left; in one pytest process a file
  that ends in the other mode would leak it into the next file. Each file's tests start in
  the mode its import left.
- With the real PaddlePaddle: a test whose static-graph API call fails because Paddle 3's
  API builds PIR programs while the backend keeps the legacy graph is reported skipped with
  that reason (opkit_paddle.compat.pir_mismatch), not failed.
"""
from __future__ import annotations

import inspect
import sys
import unittest

import pytest

from opkit_paddle import compat as paddle_compat
from opkit_paddle.compat import pir_mismatch


def pytest_collectstart(collector):
    """Paddle runs each test file with its folder on PYTHONPATH (CTest), whatever the
    working directory: its files import siblings by bare name (`from test_conv2d_op import
    ...`) even where their own `sys.path.append("../../legacy_test")` misses."""
    if isinstance(collector, pytest.Module):
        import sys

        folder = str(collector.path.parent)
        if folder not in sys.path:
            sys.path.append(folder)
        # Paddle's build puts test/legacy_test (its shared test helpers) on the path of
        # every test folder: test/sequence's files import `test_softmax_op` from there
        shared = collector.path.parent.parent / "legacy_test"
        if shared.is_dir() and str(shared) not in sys.path:
            sys.path.append(str(shared))


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makeitem(collector, name, obj):
    if inspect.isclass(obj) and not issubclass(obj, unittest.TestCase) and \
            collector.classnamefilter(name):
        return []
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if not report.failed or not isinstance(collector, pytest.Module):
        return
    excinfo = None
    text = str(report.longrepr)
    for line in reversed(text.splitlines()):
        if line.startswith("E   ") and ("Error" in line or "Exception" in line):
            excinfo = line[4:].strip()
            break
    report.longrepr = (f"{collector.path} cannot be imported in opkit's Paddle mode: "
                       f"{excinfo or text.strip().splitlines()[-1]}")


_IMPORT_MODE: dict = {}     # test file -> Paddle's dynamic mode after its import
_LAST_FILE: list = [None]


def _real_paddle():
    if not paddle_compat.real_paddle_active():
        return None

    return sys.modules.get("paddle")


def pytest_itemcollected(item):
    paddle = _real_paddle()
    if paddle is not None and item.path not in _IMPORT_MODE:
        _IMPORT_MODE[item.path] = paddle.in_dynamic_mode()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    if item.path == _LAST_FILE[0] or item.path not in _IMPORT_MODE:
        return
    _LAST_FILE[0] = item.path
    paddle = _real_paddle()
    if paddle is None:
        return
    if _IMPORT_MODE[item.path]:
        paddle.disable_static()
    else:
        paddle.enable_static()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" or not report.failed or call.excinfo is None:
        return
    why = pir_mismatch.reason(call.excinfo.value, call.excinfo.tb, _real_paddle())
    if why:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), (item.location[1] or 0) + 1, f"Skipped: {why}")
