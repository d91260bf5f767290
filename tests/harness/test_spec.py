"""harness.spec declares every extension point: the code's tables agree with it, and an
undeclared knob is an error rather than a silent default."""
from __future__ import annotations

import pytest

from harness import spec


def test_every_variant_family_is_declared_and_every_declared_family_exists():
    from harness.inputs.variants import VARIANTS

    assert set(VARIANTS) == set(spec.VARIANT_FAMILIES)


def test_every_declared_input_module_is_in_harness_inputs_and_imports():
    import importlib
    import pkgutil

    import harness.inputs

    modules = {m.name for m in pkgutil.iter_modules(harness.inputs.__path__)}
    assert set(spec.INPUT_MODULES) | {"variants"} == modules
    for name in spec.INPUT_MODULES:
        importlib.import_module(f"harness.inputs.{name}")


def test_the_check_base_class_has_every_declared_attribute_and_required_hook():
    from harness.checks.base import Check

    for name in spec.CHECK_ATTRIBUTES:
        assert hasattr(Check, name), name
    for name in ("applies", "verdict"):
        assert callable(getattr(Check, name)), name
    assert spec.op_level_hook(Check()) is None


def test_op_level_hook_finds_a_checks_op_results():
    from harness.checks.catalog import get_check

    assert spec.op_level_hook(get_check("state")) is not None
    assert spec.op_level_hook(get_check("output")) is None


def test_the_entry_point_groups_the_code_reads_are_declared():
    from opkit import plugins

    assert plugins.ENTRY_POINT_GROUP in spec.ENTRY_POINT_GROUPS
    from pathlib import Path

    registry_src = Path(spec.__file__).parent.joinpath("checks", "catalog.py").read_text()
    assert 'entry_points_of("opkit.checks")' in registry_src
    assert "opkit.checks" in spec.ENTRY_POINT_GROUPS


def test_knob_reads_a_declared_knob_and_its_default():
    class T:
        opkit_skip = {"lod": "no LoD"}

    assert spec.knob(T(), "opkit_skip") == {"lod": "no LoD"}
    assert spec.knob(T(), "opkit_sparse_inputs") == ()
    assert spec.knob(None, "reference") is None


def test_an_undeclared_knob_is_an_error():
    with pytest.raises(KeyError, match="undeclared OpTest knob 'opkit_skp'"):
        spec.knob(object(), "opkit_skp")
    with pytest.raises(KeyError, match="undeclared module knob"):
        spec.module_knob(object(), "OPKIT_EXEMPTS")


def test_the_optest_class_declares_the_knobs_it_defines():
    from harness import OpTest

    own = {n for n in vars(OpTest) if n.startswith(("opkit_", "grad_check_mode"))}
    assert own <= set(spec.OPTEST_KNOBS)
