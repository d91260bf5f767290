"""The torch backend's own ways to make four findings (opkit_torch.checks): each fails on a
broken op and passes its correct twin."""
import numpy as np
import pytest

from harness.backend.case import Case
from harness.backend.context import CheckContext

CTX = CheckContext(places=("CPU",), dtypes=("float64",))


def judge(check_name, op_type, inputs, attrs=None, outputs=("out",), grad=()):
    from opkit_torch.checks import override

    check = override(check_name)
    case = Case(name=op_type, op_type=op_type, inputs=inputs, attrs=attrs or {},
                outputs={o: None for o in outputs}, grad_inputs=list(grad),
                grad_outputs=list(outputs[:1]))
    case.outputs = {}
    return {r.status for r in check(case, CTX)}, " ".join(r.message for r in check(case, CTX))


X = np.random.default_rng(0).uniform(0.5, 1.5, (3, 4))


@pytest.mark.usefixtures("torch_backend")
def test_mutation_undeclared_write_fails_declared_twin_passes():
    status, msg = judge("mutation", "opkit_test::sneaky_write", {"x": X})
    assert status == {"fail"} and "changed input 'x'" in msg and "->" in msg
    assert judge("mutation", "opkit_test::declared_write", {"x": X})[0] == {"pass"}
    assert judge("mutation", "aten::add_.Tensor", {"self": X, "other": X})[0] == {"pass"}
    assert judge("mutation", "aten::add.Tensor", {"self": X, "other": X})[0] == {"pass"}


@pytest.mark.usefixtures("torch_backend")
def test_aliasing_an_undeclared_view_fails_a_declared_one_passes():
    status, msg = judge("aliasing", "opkit_test::flat_view", {"x": X})
    assert status == {"fail"} and "shares storage with input 'x'" in msg
    assert judge("aliasing", "opkit_test::flat_copy", {"x": X})[0] == {"pass"}
    assert judge("aliasing", "aten::transpose.int", {"self": X},
                 {"dim0": 0, "dim1": 1})[0] == {"pass"}


@pytest.mark.usefixtures("torch_backend")
def test_describe_a_fake_kernel_that_disagrees_fails():
    status, msg = judge("describe", "opkit_test::bad_fake", {"x": X})
    assert status == {"fail"} and "shape [3]" in msg and "[3, 4]" in msg
    assert judge("describe", "opkit_test::good_fake", {"x": X})[0] == {"pass"}
    assert judge("describe", "aten::hardshrink", {"self": X})[0] == {"pass"}


@pytest.mark.usefixtures("torch_backend")
def test_double_grad_through_create_graph():
    assert judge("double_grad", "aten::tanh", {"self": X}, grad=["self"])[0] == {"pass"}
    status, msg = judge("double_grad", "opkit_test::wrong_double", {"x": X}, grad=["x"])
    assert status == {"fail"} and "autograd (create_graph) gives" in msg
    assert judge("double_grad", "opkit_test::right_double", {"x": X}, grad=["x"])[0] == \
        {"pass"}


def _opcheck(op_type, inputs):
    from opkit_torch.opcheck import CHECK

    case = Case(name=op_type, op_type=op_type, inputs=inputs, attrs={}, outputs={})
    return CHECK(case, CTX)


@pytest.mark.usefixtures("torch_backend")
def test_opcheck_reports_the_failing_test_and_the_sample():
    results = _opcheck("opkit_test::bad_fake", {"x": X})
    assert [r.status for r in results] == ["fail"]
    assert "test_faketensor" in results[0].message and "Tensor[3, 4] float64" in \
        results[0].message
    assert [r.status for r in _opcheck("opkit_test::good_fake", {"x": X})] == ["pass"]
    skipped = _opcheck("aten::hardshrink", {"self": X})
    assert [r.status for r in skipped] == ["skip"] and "PyTorch's own" in skipped[0].message


def test_opcheck_skips_on_another_backend_and_is_not_run_there_by_default():
    from opkit_torch.opcheck import CHECK

    results = _opcheck("opkit_test::bad_fake", {"x": X})
    assert [r.status for r in results] == ["skip"] and "--backend torch" in results[0].message
    assert not CHECK.default
