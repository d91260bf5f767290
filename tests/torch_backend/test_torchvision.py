"""torchvision's ops on the torch backend (docs/torch.md, "torchvision"): the declared box
and size domains, the kernel probe through a declared sample, the false alarms fixed on the
way (a fake kernel with a data-dependent output size, a declared lack of second order), and,
where torchvision imports beside this torch, the OpTests of opkit_torch/vision_optests run
through the backend. torchvision is imported only inside the tests that need it (never at
collection), and those skip with the reason where it does not import."""
from pathlib import Path

import numpy as np
import pytest

from harness.backend.case import Case
from harness.backend.context import CheckContext

FOLDER = Path(__file__).resolve().parents[2] / "opkit_torch" / "vision_optests"
CTX = CheckContext(places=("CPU",), dtypes=("float64",))


def need_torchvision():
    from opkit_torch import env

    why = env.library_missing("torchvision")
    if why is not None:
        pytest.skip(why)


def run_check(name, op_type, inputs, attrs=None, grad=()):
    from opkit_torch.checks import override

    case = Case(name=op_type, op_type=op_type, inputs=inputs, attrs=attrs or {},
                outputs={"out": None}, grad_inputs=list(grad), grad_outputs=["out"])
    case.outputs = {}
    results = override(name)(case, CTX)
    return {r.status for r in results}, " ".join(r.message for r in results)


# -- declared domains (no torch needed: a proto from a description) -----------------------
@pytest.mark.no_torch_needed
def test_declared_domains_land_on_the_proto():
    from harness.backend.contract import OpDescription, Slot
    from opkit_torch import declared

    desc = OpDescription("torchvision::roi_align", (Slot("input"), Slot("rois")),
                         (Slot("out"),), {"spatial_scale": 1.0, "pooled_height": 1,
                                          "pooled_width": 1, "sampling_ratio": -1,
                                          "aligned": False})
    proto = declared.apply("torchvision::roi_align.default", desc.to_proto())
    rois = proto.input("rois").domain
    shapes = {"input": (2, 3, 8, 8)}
    assert rois.contains(np.array([[1.0, 0.2, 0.2, 1.9, 1.9]]), attrs={}, shapes=shapes)
    assert not rois.contains(np.array([[2.0, 0.2, 0.2, 1.9, 1.9]]), attrs={}, shapes=shapes)
    assert not rois.contains(np.array([[0.0, -0.5, 0.2, 1.9, 1.9]]), attrs={}, shapes=shapes)
    assert proto.input("rois").no_gradient_reason
    assert proto.input("input").domain is None
    assert proto.attr("spatial_scale").domain.contains(0.5, attrs={}, shapes={})
    assert not proto.attr("spatial_scale").domain.contains(0.0, attrs={}, shapes={})
    assert not proto.attr("pooled_height").domain.contains(0, attrs={}, shapes={})


@pytest.mark.no_torch_needed
def test_an_op_without_declarations_keeps_its_proto():
    from harness.backend.contract import OpDescription, Slot
    from opkit_torch import declared

    proto = OpDescription("aten::relu", (Slot("self"),), (Slot("out"),)).to_proto()
    assert declared.apply("aten::relu", proto) is proto
    assert proto.input("self").domain is None


# -- the kernel probe through a declared sample --------------------------------------------
def test_kernel_places_probes_an_op_with_a_required_attr_through_its_declared_sample(
        monkeypatch):
    from opkit_torch import declared, describe

    op = "opkit_test::scaled_no_bf16"
    describe.kernel_places.cache_clear()
    assert "bfloat16" in describe.kernel_places(op)["CPU"]      # no sample: all four
    monkeypatch.setitem(declared.PROBES, op, ({"x": (2, 2)}, {"factor": 3}))
    describe.kernel_places.cache_clear()
    try:
        assert describe.kernel_places(op)["CPU"] == ["float16", "float32", "float64"]
    finally:
        monkeypatch.undo()
        describe.kernel_places.cache_clear()


# -- describe: a fake kernel with a data-dependent output size ----------------------------
X = np.array([[0.5, -1.0, 2.0], [-0.25, 3.0, -4.0]])


@pytest.mark.usefixtures("torch_backend")
def test_describe_judges_a_data_dependent_size_by_what_the_fake_kernel_fixes():
    status, msg = run_check("describe", "opkit_test::positives", {"x": X})
    assert status == {"pass"}, msg
    status, msg = run_check("describe", "opkit_test::positives_bad_fake", {"x": X})
    assert status == {"fail"} and "dtype torch.float32" in msg and "torch.float64" in msg


# -- double_grad: a declared lack of second order skips, another error fails --------------
@pytest.mark.usefixtures("torch_backend")
def test_double_grad_skips_a_declared_lack_of_second_order_and_fails_another_error():
    status, msg = run_check("double_grad", "opkit_test::no_double", {"x": X}, grad=["x"])
    assert status == {"skip"} and "double backwards on no_double not supported" in msg
    status, msg = run_check("double_grad", "opkit_test::broken_double", {"x": X},
                            grad=["x"])
    assert status == {"fail"} and "out of bounds" in msg


# -- naming a torchvision op -----------------------------------------------------------------
def test_a_torchvision_op_without_torchvision_says_why():
    from opkit_torch import env

    why = env.library_missing("torchvision")
    if why is None:
        assert env.resolve("torchvision::roi_align").name() == "torchvision::roi_align"
        return
    with pytest.raises(ValueError, match="torchvision"):
        env.resolve("torchvision::roi_align")


# -- with torchvision: the OpTests through the backend --------------------------------------
def _vision_cases():
    from harness.backend.case import case_from_test
    from harness.selecting.discovery import discover, instantiate

    found = discover([FOLDER], seed=2024)
    assert not found.broken, [b.text for b in found.broken]
    return [case_from_test(instantiate(t.cls, 2024)) for t in found.tests]


def test_torchvision_kernels_and_domains_as_declared():
    need_torchvision()
    from opkit_torch import plugin

    places = plugin.kernel_places("torchvision::roi_align")["CPU"]
    assert "bfloat16" not in places and "float64" in places        # probed, not assumed
    assert plugin.kernel_places("torchvision::nms")["CPU"] == ["float32", "float64"]
    assert plugin.proto("torchvision::roi_align").input("rois").domain is not None


def test_every_torchvision_optest_matches_its_reference_but_ps_roi_pool_at_the_border():
    need_torchvision()
    from harness.backend.case import case_inputs, normalize_slots
    from opkit_torch import plugin

    cases = _vision_cases()
    assert {c.op_type for c in cases} >= {
        "torchvision::roi_align", "torchvision::roi_pool", "torchvision::ps_roi_align",
        "torchvision::ps_roi_pool", "torchvision::nms", "torchvision::deform_conv2d"}
    for case in cases:
        outs = {slot: [slot] for slot in case.outputs}
        got = plugin.make(case.op_type, case_inputs(case, "float64"), case.attrs,
                          outs).forward()
        want = {s.name: s.data for specs in normalize_slots(case.outputs).values()
                for s in specs}
        for name, w in want.items():
            same = np.allclose(got[name], w, rtol=1e-7, atol=1e-9)
            if case.op_type == "torchvision::ps_roi_pool" and name == "out0":
                # examples/torch_bugs/torchvision_ps_roi_pool_last_row.py: the bins of
                # the box that reaches the map's last row and column differ, no other
                bad = {tuple(i[:1]) for i in np.argwhere(~np.isclose(got[name], w))}
                assert bad <= {(case.inputs["rois"].shape[0] - 1,)}, (case.name, bad)
                continue
            assert same, (case.name, name)


# -- opcheck: an autograd that declares no derivative is not a failure -----------------------
@pytest.mark.usefixtures("torch_backend")
def test_opcheck_takes_a_declared_lack_of_derivative_and_fails_another_error():
    from harness.backend.context import CheckContext as Ctx
    from opkit_torch.opcheck import CHECK

    def verdict(op_type):
        case = Case(name=op_type, op_type=op_type, inputs={"x": X}, attrs={},
                    outputs={"out": None}, grad_inputs=["x"], grad_outputs=["out"])
        case.outputs = {}
        results = CHECK(case, Ctx(places=("CPU",), dtypes=("float64",)))
        return {r.status for r in results}, " ".join(r.message for r in results)

    status, msg = verdict("opkit_test::backward_only")
    assert status == {"pass"} and "declares no derivative" in msg, msg
    status, msg = verdict("opkit_test::backward_broken")
    assert status == {"fail"} and "out of bounds" in msg, msg
