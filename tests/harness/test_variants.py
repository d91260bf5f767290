"""The case pipeline: one comparator and tolerance table, the one-sided kink test, the
variant checks on broken ops and their twins, reproducers, fresh setUp per test method."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case
from harness.backend.context import CheckContext

CPU = CheckContext(places=("CPU",))
VARIANT_CHECKS = ("layout", "empty", "extremal", "kinks", "repeated_input", "infer_shape")


def test_every_variant_check_is_registered():
    from harness.checks.catalog import check_names, get_check

    names = check_names()
    for name in VARIANT_CHECKS + ("lod", "mutation", "aliasing", "determinism"):
        assert name in names
    assert get_check("layout").variants == ("layout",)


def test_float32_expectation_in_float64_run_uses_float32_tolerance():
    from harness.judging.compare import compare

    want = np.array([1.0, 2.0], dtype=np.float32)
    got = want.astype(np.float64) + 3e-7      # float32-level error in a float64 run
    assert compare("Out", got, want, "float64", None, None, False)[0] is None
    bad = want.astype(np.float64) + 1e-3
    msg = compare("Out", bad, want, "float64", None, None, False)[0]
    assert "float32's tolerance applies" in msg, msg


def test_compare_names_first_and_worst_element():
    from harness.judging.compare import compare

    msg = compare("Out", np.array([1.0, 2.0, 3.5, 9.0]), np.array([1.0, 2.1, 3.0, 4.0]),
                  "float64", None, None, False)[0]
    assert "first at Out[1]: actual 2.0, expected 2.1" in msg and "worst at Out[3]" in msg


class _FakeEngine:
    """L(x) = f(x[k]) along one element: enough for harness.judging.one_sided.one_sided."""

    def __init__(self, f):
        self.f, self.delta = f, 0.005
        self.base = {"X": np.zeros(3)}

    def loss(self, name, x):
        return float(self.f(x[1]))

    def restore(self, name):
        pass


def test_one_sided_test_tells_kinks_from_curvature():
    from harness.judging.one_sided import kink_verdict, one_sided

    left, right = one_sided(_FakeEngine(lambda v: v * v), "X", 1)       # smooth at 0
    assert kink_verdict(0.0, left, right, 0.005) is None
    left, right = one_sided(_FakeEngine(lambda v: max(v, 0.0)), "X", 1)  # relu at 0
    assert kink_verdict(1.0, left, right, 0.005) == "right"
    assert kink_verdict(0.0, left, right, 0.005) == "left"
    assert kink_verdict(0.5, left, right, 0.005) == "neither"


def test_extremum_kink_accepts_the_zero_subgradient_only():
    from harness.judging.one_sided import is_subgradient, kink_verdict, one_sided

    left, right = one_sided(_FakeEngine(abs), "X", 1)                  # abs at 0: -1, +1
    assert left < 0 < right
    assert kink_verdict(0.0, left, right, 0.005) == "subgradient"      # sign(0) = 0
    assert kink_verdict(-0.0, left, right, 0.005) == "subgradient"
    assert kink_verdict(0.5, left, right, 0.005) == "neither"
    assert kink_verdict(1.0, left, right, 0.005) == "right"
    left, right = one_sided(_FakeEngine(lambda v: max(v, 0.0)), "X", 1)  # relu: 0, 1
    assert not is_subgradient(0.5, left, right, 0.005)                 # no extremum there
    assert kink_verdict(0.5, left, right, 0.005) == "neither"


def test_domain_edge_is_no_kink():
    from harness.judging.one_sided import domain_edge, one_sided

    with np.errstate(all="ignore"):
        left, right = one_sided(_FakeEngine(np.sqrt), "X", 1)          # sqrt at 0
        assert domain_edge(left, right) and np.isnan(left) and np.isfinite(right)
        assert not domain_edge(*one_sided(_FakeEngine(abs), "X", 1))


def test_kinks_check_passes_abs_and_skips_sqrt_domain_edge():
    import json
    import subprocess
    import sys

    main = "import sys; from opkit.cli.main import main; sys.exit(main())"
    p = subprocess.run([sys.executable, "-c", main, "test", "abs", "sqrt", "--checks", "kinks",
                        "--format", "json"], capture_output=True, text=True, timeout=1800)
    doc = json.loads(p.stdout)
    kinks = {o["op"]: [c for c in o["checks"] if c["check"] == "kinks"
                       and c["place"] != "GPU"] for o in doc["ops"]}
    assert kinks["abs"] and all(c["status"] == "pass" for c in kinks["abs"]), kinks["abs"]
    assert kinks["sqrt"] and all(c["status"] == "skip" and "domain edge" in c["message"]
                                 for c in kinks["sqrt"]), kinks["sqrt"]


@pytest.mark.parametrize("op,check", [
    ("layout_scale", "layout"), ("empty_center", "empty"), ("naive_softmax", "extremal"),
    ("kink_relu", "kinks"), ("dedup_sum", "repeated_input"), ("twice_rows", "infer_shape"),
    ("seq_last", "lod")])
def test_broken_op_fails_its_variant_with_a_concrete_value_and_twin_passes(broken_ops, op,
                                                                           check):
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    by_op = discover([str(broken_ops / "test_variant_breakers.py")]).by_op()
    reports = {r.op: r for r in run_ops([f"broken_{op}", f"good_{op}"], by_op, isolate=False)}
    bad = [r for r in reports[f"broken_{op}"].results if r.status == "fail"]
    assert bad and {r.check for r in bad} == {check}, [(r.check, r.message) for r in bad]
    assert any(ch.isdigit() for ch in bad[0].message)          # a concrete value or index
    assert "reproduce:" in bad[0].message or check == "lod"
    good = [r for r in reports[f"good_{op}"].results if r.status == "fail"]
    assert good == [], [(r.check, r.message) for r in good]


def test_variant_that_cannot_apply_is_skip_with_reason():
    from harness.checks.catalog import get_check

    case = Case("TestInt", "increment", {"X": np.array([1], dtype=np.int64)}, {"step": 1.0})
    for name in ("layout", "empty", "extremal", "repeated_input"):
        got = get_check(name)(case, CPU)
        assert got and all(r.status == "skip" and r.message for r in got), (name, got)


def test_opting_out_of_a_variant_prints_the_reason():
    from harness.checks.catalog import get_check

    case = Case("TestScale", "scale", {"X": np.ones((2, 3))}, {"scale": 2.0},
                options={"skip": {"empty": "a zero batch is meaningless here"}})
    got = get_check("empty")(case, CPU)
    assert [(r.status, r.message) for r in got] == [
        ("skip", "opted out: a zero batch is meaningless here")]


def test_fixed_output_dtype_passes_in_the_float64_run():
    from harness.judging.output_judge import check_output

    rng = np.random.default_rng(0)
    idx, lab = rng.integers(0, 6, (5, 3)), rng.integers(0, 6, (5, 1))
    correct = sum(lab[i, 0] in idx[i] for i in range(5))
    case = Case("T", "accuracy", {"Out": rng.uniform(0, 1, (5, 3)), "Indices": idx,
                                  "Label": lab}, {},
                {"Accuracy": np.array([correct / 5]),       # given as float64
                 "Correct": np.array([correct], dtype="int32"),
                 "Total": np.array([5], dtype="int32")})
    got = check_output(case, places=("CPU",))
    assert [r.status for r in got] == ["pass", "pass"], [r.message for r in got]


def test_each_test_method_gets_a_fresh_setup():
    from harness import OpTest
    from harness.optest.methods import run_optest_methods

    class TestLeak(OpTest):
        def setUp(self):
            self.op_type = "scale"
            self.inputs = {"X": np.ones((2, 2))}
            self.attrs = {"scale": 2.0}
            self.outputs = {"Out": 2 * np.ones((2, 2))}

        def test_a_mutates(self):
            self.outputs = {"Out": np.zeros((2, 2))}     # leaks without a fresh setUp
            self.check_output()

        def test_b_check(self):
            self.check_output()

    test = TestLeak("runTest")
    test.setUp()
    results = run_optest_methods(test, "TestLeak", seed=1)
    by_status = [r.status for r in results]
    assert by_status.count("fail") == 2 and by_status.count("pass") == 2, \
        [(r.status, r.message) for r in results]


def test_reproducer_literals_are_valid_python():
    from harness.optest.reproduce import _literal

    text = _literal(np.array([1.0, np.nan, -np.inf, np.inf]))
    back = eval(text, {"np": np})           # noqa: S307 - the point of the test
    assert np.isnan(back[1]) and back[2] == -np.inf and back[3] == np.inf


def test_reproducer_is_confirmed_in_a_fresh_process():
    from harness.optest.reproduce import confirm

    source = '''import numpy as np
from harness import OpTest


class TestReproMinimal(OpTest):
    def setUp(self):
        self.op_type = "scale"
        self.inputs = {"X": np.ones((2, 2))}
        self.attrs = {"scale": 2.0}
        self.outputs = {"Out": OUT}

    def test_check_output(self):
        self.check_output()
'''
    assert confirm(["scale"], source.replace("OUT", "np.zeros((2, 2))"), "TestReproMinimal",
                   "output") is True
    assert confirm(["scale"], source.replace("OUT", "2 * np.ones((2, 2))"),
                   "TestReproMinimal", "output") is False


def _scale_case(reference, attrs):
    x = np.random.default_rng(3).uniform(-1, 1, (3, 4))
    return Case("TestScaleRef", "scale", {"X": x}, dict(attrs), reference({"X": x}, attrs),
                reference=reference, grad_inputs=["X"], grad_outputs=["Out"])


def test_other_attr_value_not_judged_by_a_reference_that_ignores_it():
    """A correct op whose test's reference() hard-codes the one attr value the test uses:
    the other value cannot be judged against it (no false alarm), the gradients still are."""
    from harness.checks.catalog import get_check

    attrs = {"scale": 2.0, "bias": 0.5, "bias_after_scale": True}

    def lazy(inputs, a):         # ignores bias_after_scale: the test only uses True
        return {"Out": inputs["X"] * a["scale"] + a["bias"]}

    got = get_check("attrs")(_scale_case(lazy, attrs), CPU)
    assert got and not [r for r in got if r.status == "fail"], got

    def honest(inputs, a):
        x = inputs["X"]
        return {"Out": x * a["scale"] + a["bias"] if a["bias_after_scale"]
                else (x + a["bias"]) * a["scale"]}

    got = get_check("attrs")(_scale_case(honest, attrs), CPU)
    assert got and not [r for r in got if r.status == "fail"], got

    def wrong(inputs, a):        # reads the attr, but gets the other form wrong
        x = inputs["X"]
        return {"Out": x * a["scale"] + a["bias"] if a["bias_after_scale"]
                else x * a["scale"] - a["bias"]}

    bad = [r for r in get_check("attrs")(_scale_case(wrong, attrs), CPU)
           if r.status == "fail"]
    assert bad and "bias_after_scale" in bad[0].message and "reference" in bad[0].message


def test_precision_does_not_judge_an_output_fixed_to_float32():
    """fill_constant reading its value from ValueTensor gives float32 (its dtype attr) in a
    float64 run too: that output cannot resolve input changes below float32's precision, and
    is no sign of a float64 kernel computing in float32 (a false alarm on Paddle's tests)."""
    from harness.checks.catalog import get_check

    value = np.array([3.8], dtype=np.float64)
    case = Case("TestFillFromTensor", "fill_constant", {"ValueTensor": value},
                {"shape": [20, 30], "dtype": "float32"},
                {"Out": np.full((20, 30), 3.8, dtype=np.float32)})
    got = get_check("precision")(case, CPU)
    assert got and not [r for r in got if r.status == "fail"], got


def test_other_attr_value_gradient_at_a_max_pool_tie_is_no_failure():
    """Max pool2d with `exclusive` flipped (it means nothing for max pooling): a directional
    (fast-mode) gradient comparison can be tipped by one kink (inputs 6 and 11 below did,
    as Paddle's TestCase5_Max did); the per-element mode with its one-sided kink test
    decides."""
    from harness.checks.catalog import get_check

    attrs = {"pooling_type": "max", "ksize": [3, 3], "strides": [1, 1], "paddings": [1, 1],
             "exclusive": True, "global_pooling": False}
    for seed in (6, 11):
        x = np.random.default_rng(seed).random((2, 3, 7, 7))
        case = Case("TestMaxPool", "pool2d", {"X": x}, attrs, {}, grad_inputs=["X"],
                    grad_outputs=["Out"], options={"max_relative_error": 1.0})
        got = get_check("attrs")(case, CPU)
        assert got and not [r for r in got if r.status == "fail"], (seed, got)


def test_extremal_gradients_not_judged_where_the_forward_overflows_the_run_dtype():
    """exp at 88.75 overflows float32 (inf is right) while the float64 gradient, the output
    times a cotangent below 1, still fits: the float32 gradient made from that inf output
    is no finding (a false alarm on Paddle's exp test); a naive softmax still fails."""
    from harness.checks.catalog import get_check

    x = np.random.default_rng(1).uniform(-1, 1, (4, 5))
    x[0, 0] = 1.0                       # the variant scales the largest value to 100
    x[1:3, :] = 0.8875                  # -> 88.75: exp overflows float32, not float64
    case = Case("TestExp", "exp", {"X": x}, {}, {"Out": np.exp(x)},
                grad_inputs=["X"], grad_outputs=["Out"])
    got = get_check("extremal")(case, CPU)
    assert got and not [r for r in got if r.status == "fail"], got


def test_the_empty_variant_keeps_a_duplicable_outputs_names():
    """split's Out is duplicable: the empty variant dropped the case's outputs, so split was
    built with no Out at all (opkit's own op refused it, and `empty` passed without running
    it; Paddle's Python refused to build it, a raw error). The names stay, the values go,
    and split runs on the zero-size batch."""
    from harness.backend.case import Case
    from harness.backend.seam import make, output_slots
    from harness.inputs.variants.empty import derive

    x = np.random.default_rng(0).uniform(-1, 1, (4, 6, 5))
    parts = np.split(x, 3, axis=1)
    case = Case("c", "split", {"X": x}, {"axis": 1, "num": 3, "sections": []},
                outputs={"Out": [(f"o{i}", p) for i, p in enumerate(parts)]})
    derived = derive(case)[0]      # the zero-size batch (each other dim follows)
    slots = output_slots(derived.case, "split")
    assert slots["Out"] == ["o0", "o1", "o2"]
    assert all(v is None for _, v in derived.case.outputs["Out"])
    from harness.backend.case import normalize_slots

    got = make("split", normalize_slots(derived.case.inputs), derived.case.attrs,
               slots).forward()
    assert [got[f"o{i}"].shape for i in range(3)] == [(0, 2, 5)] * 3


def test_an_infinite_expected_value_is_met_by_the_same_inf_only():
    from harness.judging.compare import compare, outside

    want = np.array([np.inf, -np.inf, np.inf, 1.0])
    got = np.array([5.0, np.inf, np.inf, 1.0])
    assert outside(got, want, 1e-5, 1e-5).tolist() == [True, True, False, False]
    msg = compare("Out", got, want, "float64", None, None, False)[0]
    assert "2 of 4 elements differ" in msg and "actual 5" in msg
