"""Refusal vs failure on torch."""
import numpy as np
import pytest

from harness.backend.case import VarSpec


def raised(op_type, inputs, attrs=None):
    from opkit_torch import plugin

    p = plugin.make(op_type, {k: [VarSpec(k, v)] for k, v in inputs.items()}, attrs)
    with pytest.raises(Exception) as info:
        p.forward()
    return plugin, info.value


def test_torch_checks_on_invalid_input_are_refusals():
    plugin, exc = raised("aten::mm", {"self": np.ones((2, 3)), "mat2": np.ones((2, 3))})
    assert plugin.refused(exc) and "2x3" in plugin.refusal_message(exc)
    plugin, exc = raised("aten::softmax.int", {"self": np.ones((2, 3))}, {"dim": 5})
    assert isinstance(exc, IndexError) and plugin.refused(exc)
    plugin, exc = raised("opkit_test::checked", {"x": np.ones(3)})
    assert plugin.refused(exc) and "2-D" in plugin.refusal_message(exc)


def test_a_python_bug_in_a_kernel_is_a_failure():
    plugin, exc = raised("opkit_test::python_bug", {"x": np.ones(3)})
    assert isinstance(exc, KeyError) and not plugin.refused(exc)


def test_a_missing_dtype_kernel_and_an_internal_assert_are_not_refusals():
    from opkit_torch import plugin

    assert not plugin.refused(NotImplementedError("\"foo\" not implemented for 'Half'"))
    assert not plugin.refused(RuntimeError("INTERNAL ASSERT FAILED at x.cpp:12"))
    assert not plugin.refused(RuntimeError(""))
