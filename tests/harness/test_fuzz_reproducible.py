"""A generated case is a function of the OpTest and the seed: not of which other modules the
process happened to import (hypothesis mixes the constants of loaded non-library modules
into its draws; `--all`, one op, the fork pool and xdist load different sets)."""
from __future__ import annotations

import sys


def _draws(n=300):
    from hypothesis import given, seed, settings
    from hypothesis import strategies as st

    from harness.inputs.strategies import reproducible_draws

    got = []

    @seed(2024)
    @settings(max_examples=n, database=None, deadline=None)
    @given(st.floats(-1e6, 1e6), st.integers(-10**6, 10**6))
    def prop(x, k):
        got.append((x, k))

    with reproducible_draws():
        prop()
    return got


def test_draws_do_not_change_when_a_module_with_constants_loads(tmp_path, monkeypatch):
    first = _draws()
    values = ", ".join(f"{k * 7919}, {k * 1.37 + 0.5}" for k in range(1, 400))
    (tmp_path / "opkit_many_constants.py").write_text(f"VALUES = [{values}]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import opkit_many_constants  # noqa: F401

    try:
        second = _draws()
    finally:
        sys.modules.pop("opkit_many_constants", None)
    assert second == first
