"""Declared domains (opkit.framework.domains), `explore`, the domain entries of `opkit dump`
and `opkit compat`, and the input-validity fixes of issue 23 (empty, infer_shape)."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from harness_test_helpers import ROOT
from opkit import OperatorWithKernel, OpMaker, enforce, errors, register_kernel, \
    register_operator, registry
from opkit.framework import domains as D


# -- domains -----------------------------------------------------------------------------------
def test_domain_membership_and_json_round_trip():
    ids = D.integers(0, D.dim("W", 0))
    assert ids.contains(np.array([0, 5]), shapes={"W": (6, 3)})
    assert not ids.contains(np.array([-1, 2]), shapes={"W": (6, 3)})
    assert not ids.contains(np.array([6]), shapes={"W": (6, 3)})
    assert D.integers(0, D.attr("depth")).contains(np.array([3]), attrs={"depth": 4})
    assert not D.finite().contains(np.array([1.0, np.nan]))
    assert D.probabilities().contains(np.array([0.0, 1.0])) and \
        not D.probabilities().contains(np.array([1.5]))
    assert D.axis_of("X").contains(-2, rank=2) and not D.axis_of("X").contains(2, rank=2)
    assert D.axes_of("X").contains([2, 0], rank=3) and not D.axes_of("X").contains([0, -3],
                                                                                   rank=3)
    assert D.perm_of("X").contains([2, 0, 1], rank=3) and \
        not D.perm_of("X").contains([0, 0, 1], rank=3)
    for dom in (ids, D.one_of(["NCHW", "NHWC"]), D.between(0, 1, lo_open=True),
                D.dtype(["float32", "int64"]), D.perm_of("X"), D.integers(0, D.dim("X", 1) + 1)):
        assert D.Domain.from_json(json.loads(json.dumps(dom.to_json()))) == dom
    assert str(D.integers(0, D.dim("X", 1) + 1)) == "integers in [0, dim 1 of X + 1)"


def test_domain_covers():
    assert D.one_of(["a", "b", "c"]).covers(D.one_of(["a", "b"]))
    assert not D.one_of(["a", "b"]).covers(D.one_of(["a", "c"]))
    assert D.between(0, None).covers(D.between(0, 1))
    assert not D.between(0, 1, lo_open=True).covers(D.between(0, 1))
    assert D.finite().covers(D.probabilities()) and not D.probabilities().covers(D.finite())


class _DomOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


def _dom_maker(formats, axis_domain=True):
    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) x.").set_domain(D.finite())
            self.add_input("W", "(Tensor) table.").as_parameter()
            self.add_output("Out", "(Tensor) out.")
            self.add_attr("data_format", "string", "layout", "NCHW").in_set(formats)
            a = self.add_attr("axis", "int", "axis", -1)
            if axis_domain:
                a.set_domain(D.axis_of("X"))
            self.add_attr("alpha", "float", "slope", 0.5).greater_than(0.0)
            self.add_comment("domain probe")
    return Maker


def test_proto_domains_from_checkers_and_set_domain():
    proto = _dom_maker(["NCHW", "NHWC"])("p").build()
    assert proto.attr("data_format").domain == D.one_of(["NCHW", "NHWC"])
    assert proto.attr("alpha").domain == D.between(0.0, None, lo_open=True)
    assert proto.attr("axis").domain == D.axis_of("X")
    assert proto.input("X").domain == D.finite() and proto.input("W").parameter
    with pytest.raises(errors.InvalidArgument):
        proto.attr("axis").set_domain("an axis")


def _dump(maker) -> dict:
    from checkers.compat import loads_op_descs
    from opkit.op_desc import dumps_op_descs

    with registry.scratch():
        register_operator("domain_probe", _DomOp, maker)
        text = dumps_op_descs()
    return json.loads(text), loads_op_descs(text)


def test_dump_writes_domains_and_compat_compares_them():
    from checkers.compat import compare

    raw, old = _dump(_dom_maker(["NCHW", "NHWC", "AnyLayout"]))
    probe = raw["domain_probe"]
    assert probe["Attrs"]["data_format"]["domain"] == {"kind": "set",
                                                       "values": ["NCHW", "NHWC", "AnyLayout"]}
    assert probe["Attrs"]["axis"]["domain"] == {"kind": "axis", "of": "X"}
    assert probe["Inputs"]["X"]["domain"] == {"kind": "finite"}
    assert probe["Inputs"]["W"]["parameter"] is True
    _, narrowed = _dump(_dom_maker(["NCHW", "NHWC"], axis_domain=False))
    report = compare(old, narrowed)
    assert {(e["kind"], e["name"]) for e in report.breaking} == {
        ("domain-narrowed", "data_format")}
    assert "'AnyLayout' no longer accepted" in report.breaking[0]["message"]
    assert ("domain-widened", "axis") in {(e["kind"], e["name"]) for e in report.notes}
    back = compare(narrowed, old)
    assert not back.breaking and ("domain-widened", "data_format") in {
        (e["kind"], e["name"]) for e in back.notes}
    assert compare(old, old).breaking == [] and compare(old, old).notes == []


# -- explore on a few ops of its own -------------------------------------------------------------
class _SameOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class _UnaryMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) x.")
        self.add_output("Out", "(Tensor) out.")
        self.add_comment("probe")


def _explore(case, test=None):
    from harness.executing.pool import run_case

    return [r for r in run_case(case, checks=["explore"], test=test) if r.check == "explore"]


def test_explore_reseeds_an_optest_without_reference():
    """No reference(): setUp runs again under other numpy seeds; a kernel wrong only on
    values the author's seed did not draw (x > 0.99) fails, its twin passes."""
    from harness import OpTest
    from harness.selecting.discovery import instantiate
    from harness.executing.pool import case_from_test

    with registry.scratch():
        for kind in ("broken", "good"):
            register_operator(f"{kind}_top_clip", _SameOp, _UnaryMaker)

        @register_kernel("broken_top_clip")
        def broken(ctx):
            x = ctx.input("X")
            ctx.set_output("Out", np.where(x > 0.99, 0.0, 2 * x))   # BUG above 0.99

        @register_kernel("good_top_clip")
        def good(ctx):
            ctx.set_output("Out", 2 * ctx.input("X"))

        results = {}
        for kind in ("broken", "good"):
            class T(OpTest):
                def setUp(self, kind=kind):
                    self.op_type = f"{kind}_top_clip"
                    self.inputs = {"X": np.random.random((4, 5))}
                    self.outputs = {"Out": 2 * self.inputs["X"]}

                def test_check_output(self):
                    self.check_output()

            t = instantiate(T, 2024)
            assert t.inputs["X"].max() < 0.99       # the author's own case passes
            results[kind] = _explore(case_from_test(t), test=t)
    assert [r.status for r in results["good"]] == ["pass"], results["good"]
    bad = [r for r in results["broken"] if r.status == "fail"]
    assert bad and "setUp re-run under numpy seed" in bad[0].message and \
        "actual 0" in bad[0].message, results["broken"]


def test_explore_nan_and_refusal_verdicts():
    """NaN dropped is a failure naming NaN; a reference that raises needs an opkit refusal."""
    from harness.backend.case import Case

    with registry.scratch():
        for kind in ("broken", "good"):
            register_operator(f"{kind}_nanmax", _SameOp, _UnaryMaker)

        @register_kernel("broken_nanmax")
        def broken(ctx):
            ctx.set_output("Out", np.fmax(ctx.input("X"), 0.0))   # BUG: NaN -> 0

        @register_kernel("good_nanmax")
        def good(ctx):
            ctx.set_output("Out", np.maximum(ctx.input("X"), 0.0))

        def ref(inputs, attrs):
            return {"Out": np.maximum(inputs["X"], 0.0)}

        x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
        out = {}
        for kind in ("broken", "good"):
            case = Case(f"Test_{kind}", f"{kind}_nanmax", {"X": x}, {},
                        {"Out": np.maximum(x, 0)}, reference=ref)
            out[kind] = _explore(case)
    assert all(r.status == "pass" for r in out["good"]), out["good"]
    bad = [r for r in out["broken"] if r.status == "fail"]
    assert bad and "NaN" in bad[0].message and "minimal case" in bad[0].message
    assert "class Test_brokenMinimal(OpTest)" in bad[0].message


def _explore_big(kind, seed=2024, domain=None):
    """explore on an op twice its input; the broken one is wrong only where |x| > 4 (none of
    the deterministic derived values goes there; the case's values are in [-1, 1])."""
    from harness.backend.case import Case
    from harness.executing.pool import run_case

    class _Maker(OpMaker):
        def make(self):
            x = self.add_input("X", "(Tensor) x.")
            if domain is not None:
                x.set_domain(domain)
            self.add_output("Out", "(Tensor) out.")
            self.add_comment("probe")

    with registry.scratch():
        register_operator(f"{kind}_big", _SameOp, _Maker)

        @register_kernel(f"{kind}_big")
        def kernel(ctx):
            x = ctx.input("X")
            bug = np.abs(x) > 4 if kind == "broken" else np.zeros(x.shape, bool)
            ctx.set_output("Out", np.where(bug, 2 * x + 1, 2 * x))

        x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
        case = Case(f"Test_{kind}", f"{kind}_big", {"X": x}, {}, {"Out": 2 * x},
                    reference=lambda inputs, attrs: {"Out": 2 * inputs["X"]})
        return [r for r in run_case(case, checks=["explore"], seed=seed)
                if r.check == "explore"]


def test_a_drawn_explore_failure_shrinks_to_the_simplest_failing_value():
    """The edge values miss a kernel wrong only for |x| > 4; the hypothesis-drawn values
    find it and shrink it to one element of X just past 4 (the other values the case's);
    the same seed reports the same case; the correct twin passes."""
    import re

    for seed in (2024, 1, 2, 3):
        bad = [r for r in _explore_big("broken", seed) if r.status == "fail"]
        assert len(bad) == 1, bad
        msg = bad[0].message
        m = re.search(r"drawn values \(hypothesis, shrunk\): X\[\d+, \d+\] = (-?[\d.]+) \(", msg)
        assert m, msg                                   # one element: the other values the case's
        assert 4 < abs(float(m.group(1))) <= 5, msg     # shrunk: near the threshold
        assert "minimal case" in msg and "class Test_brokenMinimal(OpTest)" in msg
        good = _explore_big("good", seed)
        assert [r.status for r in good] == ["pass"], [r.message for r in good]
    again = [r for r in _explore_big("broken", 3) if r.status == "fail"]
    assert again[0].message.splitlines()[0] == msg.splitlines()[0]      # reproducible


def test_drawn_values_stay_inside_the_declared_domain():
    """With X declared in [-3, 3] no drawn value reaches the broken region (|x| > 4): a
    pass; declared in [-6, 6], the failing drawn value is inside it."""
    import re

    got = _explore_big("broken", domain=D.between(-3.0, 3.0))
    assert [r.status for r in got] == ["pass"], [r.message for r in got]
    got = [r for r in _explore_big("broken", domain=D.between(-6.0, 6.0)) if r.status == "fail"]
    m = re.search(r"drawn values \(hypothesis, shrunk\): X\[\d+, \d+\] = (-?[\d.]+) \(",
                  got[0].message if got else "")
    assert m and 4 < abs(float(m.group(1))) <= 6, [r.message for r in got]


# -- only valid inputs (issue 23, item 6) --------------------------------------------------------
class _TableOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        w, ids = ctx.get_input_dim("W"), ctx.get_input_dim("Ids")
        ctx.set_output_dim("Out", [ids[0], w[1]])


class _TableMaker(OpMaker):
    def make(self):
        self.add_input("W", "(Tensor) table, no as_parameter declared.")
        self.add_input("Ids", "(Tensor) ids.")
        self.add_output("Out", "(Tensor) rows.")
        self.add_comment("probe")


def test_empty_leaves_an_indexed_table_alone():
    """An embedding table is no batch: emptying it (and keeping the ids) fed a correct op
    ids outside the table."""
    from harness.backend.case import Case
    from harness.executing.pool import run_case
    from harness.inputs.variants import derive

    with registry.scratch():
        register_operator("plain_table", _TableOp, _TableMaker)

        @register_kernel("plain_table")
        def kernel(ctx):
            ctx.set_output("Out", ctx.input("W")[ctx.input("Ids").reshape(-1)])

        w = np.random.default_rng(1).uniform(size=(6, 3))
        ids = np.array([[0], [5], [2], [1]], dtype=np.int64)
        case = Case("TestTable", "plain_table", {"W": w, "Ids": ids}, {},
                    {"Out": w[ids.reshape(-1)]})
        d = derive("empty", case)[0]   # the batch first, then each other dim cut to 0
        assert d.case.inputs["W"].shape == (6, 3) and d.case.inputs["Ids"].shape == (0, 1)
        got = [r for r in run_case(case, checks=["empty"]) if r.status == "fail"]
    assert got == [], got[0].message


class _StrictMul(OperatorWithKernel):
    def infer_shape(self, ctx):
        x, y = ctx.get_input_dim("X"), ctx.get_input_dim("Y")
        enforce(x[1] == y[0], "X's columns %s and Y's rows %s differ", x[1], y[0])
        ctx.set_output_dim("Out", [x[0], y[1]])


class _MulMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) x.")
        self.add_input("Y", "(Tensor) y.")
        self.add_output("Out", "(Tensor) out.")
        self.add_comment("probe")


def test_infer_shape_unknown_dims_consistent_across_inputs():
    from harness.backend.case import Case
    from harness.executing.pool import run_case

    with registry.scratch():
        register_operator("strict_mul", _StrictMul, _MulMaker)

        @register_kernel("strict_mul")
        def kernel(ctx):
            ctx.set_output("Out", ctx.input("X") @ ctx.input("Y"))

        x, y = np.ones((2, 3)), np.ones((3, 4))
        case = Case("TestStrictMul", "strict_mul", {"X": x, "Y": y}, {}, {"Out": x @ y})
        got = run_case(case, checks=["infer_shape"])
    assert [r.status for r in got] == ["pass"], got[0].message


# -- the explore breakers: catch rate and twins --------------------------------------------------
def _breaker_ops():
    import re

    text = (ROOT / "tests/broken_ops/explore_breakers_op.py").read_text()
    names = re.findall(r'_pair\("(\w+)"', text) + ["wrap_embedding"]
    return names


def test_explore_breakers_caught_and_twins_pass():
    names = _breaker_ops()
    assert len(names) >= 20
    ops = [f"{k}_{n}" for n in names for k in ("broken", "good")]
    env = dict(os.environ, NO_COLOR="1", OPKIT_NO_GPU="1")
    p = subprocess.run([sys.executable, "-c", "import sys; from opkit.cli.main import main; "
                        "sys.exit(main())", "test", *ops,
                        "--ops", "tests/broken_ops/explore_breakers_op.py",
                        "--tests", "tests/broken_ops/explore_breakers_optests.py",
                        "--format", "json", "--fuzz", "0"],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800, env=env)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    doc = json.loads(p.stdout)
    failed = {o["op"]: {c["check"] for c in o["checks"] if c["status"] == "fail"}
              for o in doc["ops"]}
    twins = {op: checks for op, checks in failed.items() if op.startswith("good_") and checks}
    assert twins == {}, twins
    caught = [n for n in names if "explore" in failed[f"broken_{n}"]]
    assert len(caught) >= 0.9 * len(names), sorted(set(names) - set(caught))


def test_grad_steps_scaled_to_the_point_near_close_kinks():
    """clip's bounds at -1e-7 and 1e-7, inputs at 0 and 5e-8: the numeric step (5e-3) spans
    both kinks, the central difference is ~0 while the (right) analytic gradient is 1. Steps
    scaled toward the point see the local slope: no false failure. A wrong gradient there
    still fails."""
    from harness.backend.case import Case
    from harness.executing.pool import run_case

    x = np.random.default_rng(0).uniform(-1, 1, (3, 4))
    x[0, 0], x[1, 1] = 0.0, 5e-8
    case = Case("TestClipTiny", "clip", {"X": x}, {"min": -1e-7, "max": 1e-7},
                {"Out": np.clip(x, -1e-7, 1e-7)}, grad_inputs=["X"], grad_outputs=["Out"])
    got = [r for r in run_case(case, checks=["grad"], places=("CPU",)) if r.status != "skip"]
    assert got and all(r.status == "pass" for r in got), [r.message for r in got]

    with registry.scratch():
        from opkit import GradOpMaker, grad_var_name

        class _Grad(GradOpMaker):
            def apply(self):
                op = self.new_grad_op("half_clip_grad")
                op.set_input("X", self.input("X"))
                op.set_input(grad_var_name("Out"), self.output_grad("Out"))
                op.set_output(grad_var_name("X"), self.input_grad("X"))
                return [op]

        class _GradOp(OperatorWithKernel):
            def infer_shape(self, ctx):
                ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))

        register_operator("half_clip", _SameOp, _UnaryMaker, grad_maker=_Grad)
        register_operator("half_clip_grad", _GradOp)

        @register_kernel("half_clip")
        def fwd(ctx):
            ctx.set_output("Out", np.clip(ctx.input("X"), -1e-7, 1e-7))

        @register_kernel("half_clip_grad")
        def bwd(ctx):
            x, d = ctx.input("X"), ctx.input(grad_var_name("Out"))
            inside = (x > -1e-7) & (x < 1e-7)
            ctx.set_output(grad_var_name("X"), d * inside * 0.5)     # BUG: half

        bad = Case("TestHalfClip", "half_clip", {"X": x}, {}, {"Out": np.clip(x, -1e-7, 1e-7)},
                   grad_inputs=["X"], grad_outputs=["Out"])
        got = [r for r in run_case(bad, checks=["grad"], places=("CPU",)) if r.status == "fail"]
    assert got, "a wrong gradient between close kinks must still fail"
