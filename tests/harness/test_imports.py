"""Every harness module imports, and every built-in check module registers its check: a
check lost to an import error must fail here, not vanish from the report."""
from __future__ import annotations

import importlib
import pkgutil

import harness


def test_every_harness_module_imports():
    bad = []
    for m in pkgutil.walk_packages(harness.__path__, "harness."):
        if ".shim" in m.name:      # the Paddle mode's stand-ins, imported only in that mode
            continue
        try:
            importlib.import_module(m.name)
        except Exception as exc:  # noqa: BLE001 - listed, not raised
            bad.append(f"{m.name}: {type(exc).__name__}: {exc}")
    assert bad == []


def test_every_builtin_check_module_registers_its_check():
    from harness.checks.catalog import CHECK_MODULES, check_names

    names = set(check_names())
    assert {m.rsplit(".", 1)[1] for m in CHECK_MODULES} <= names
