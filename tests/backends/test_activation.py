"""The front doors (`opkit test`, the pytest plugin) ask the selected backend object whether
it can run and activate it, whichever backend it is: opkit's own default included (no
branch on the backend's name)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from harness import options as run_options
from opkit_fluid.backend import OpkitBackend


class Stop(Exception):
    """Raised by the watched activate: the front door got that far."""


@pytest.fixture
def watched(monkeypatch):
    """opkit's own backend, watched: its unavailable() and activate() record their calls."""
    calls = []
    monkeypatch.setattr(OpkitBackend, "unavailable",
                        lambda self: calls.append("unavailable") or None)

    def activate(self, op_types):
        calls.append(("activate", tuple(op_types)))
        raise Stop

    monkeypatch.setattr(OpkitBackend, "activate", activate)
    monkeypatch.delenv("OPKIT_BACKEND", raising=False)   # restored after (activate sets it)
    saved = run_options.current()
    yield calls
    run_options.use(saved)


def test_opkit_test_activates_the_default_backend_through_its_object(watched):
    from opkit.cli.main import main

    with pytest.raises(Stop):
        main(["test", "relu", "--checks", "output", "--no-isolate"])
    assert watched == ["unavailable", ("activate", ("relu",))]


def test_the_pytest_plugin_activates_the_default_backend_through_its_object(watched):
    from harness.pytest_plugin import pytest_configure

    config = SimpleNamespace(getoption=lambda name, default=None: default)
    with pytest.raises(Stop):
        pytest_configure(config)
    assert watched == ["unavailable", ("activate", ())]


def test_the_default_backend_unavailable_is_a_usage_error(monkeypatch):
    from opkit.cli.main import main

    monkeypatch.setattr(OpkitBackend, "unavailable", lambda self: "opkit's kernels are gone")
    monkeypatch.delenv("OPKIT_BACKEND", raising=False)
    saved = run_options.current()
    try:
        assert main(["test", "relu", "--checks", "output"]) == 2
    finally:
        run_options.use(saved)
