"""Messages a person reads: the error kind said once, plain numbers, agreeing notes."""
from __future__ import annotations

import numpy as np

from harness.options import override, set_place_option
from harness.executing.pool import run_case
from harness_test_helpers import make_case
from opkit import OpMaker, OperatorWithKernel, errors, register_kernel, register_operator
from opkit.framework.errors import one_line


class _Maker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) never produced.")
        self.add_comment("raises InvalidArgument")


class _Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


try:
    register_operator("polish_raises_invalid", _Op, _Maker)

    @register_kernel("polish_raises_invalid", place=("CPU",))
    def _kernel(ctx):
        raise errors.InvalidArgument("X must be positive, got %s", -1.5)
except errors.AlreadyExists:  # pragma: no cover - module imported twice
    pass


def test_one_line_says_the_kind_once():
    err = errors.InvalidArgument("bad %d", 3).with_context("relu", "X")
    line = one_line(err)
    assert line.count("InvalidArgument") == 1
    assert line.startswith("InvalidArgument: ") and "relu" in line and "bad 3" in line
    assert one_line(ValueError("oops")) == "ValueError: oops"
    assert one_line(ValueError("ValueError: oops")) == "ValueError: oops"


def test_failing_check_message_names_invalid_argument_once():
    case = make_case("polish_raises_invalid", reference=lambda x: {"Out": x}, grad=False)
    with override(place="CPU", dtype="all"):
        results = run_case(case, checks=["output"])
    failed = [r for r in results if r.status == "fail"]
    assert failed, results
    for r in failed:
        assert r.message.count("InvalidArgument") == 1, r.message
        assert "X must be positive, got -1.5" in r.message


def test_fmt_value_is_plain():
    from harness.reporting.values import fmt_value

    assert fmt_value(np.float64(1.2000000476837158)) == "1.2000000476837158"
    assert fmt_value(np.float32(0.5)) == "0.5"
    assert fmt_value([np.int64(1), np.float64(2.5)]) == "[1, 2.5]"
    assert fmt_value(np.array([1.0, 2.0])) == "[1.0, 2.0]"
    assert fmt_value("mean") == "'mean'"


def test_failing_output_message_has_no_numpy_reprs():
    import reference_ops  # noqa: F401  (registers relu)

    case = make_case("relu", reference=lambda x: {"Out": x + 0.25}, grad=False)
    with override(place="CPU", dtype="all"):
        results = run_case(case, checks=["output"])
    failed = [r for r in results if r.status == "fail"]
    assert failed, results
    for r in failed:
        assert "np." not in r.message and "float64(" not in r.message, r.message
        assert "actual " in r.message


def test_fuzz_reproduction_prints_plain_attrs():
    from harness.backend.case import Case
    from harness.executing.fuzz import format_optest

    case = Case("TestX", "scale", {"X": np.ones((2,), "float32")},
                {"scale": np.float64(np.float32(1.2)), "bias": np.float32(0.5)},
                {"Out": np.ones((2,), "float32")})
    code = format_optest(case)
    assert "self.attrs = {'scale': 1.2000000476837158, 'bias': 0.5}" in code, code
    compile(code, "<optest>", "exec")


def _render(results, cases):
    import io

    from harness.executing.pool import OpReport
    from opkit.cli.table import render_plain

    out = io.StringIO()
    render_plain([OpReport("myop", results, cases)], stream=out, verbose=True)
    return out.getvalue()


def test_skip_notes_agree_with_the_table():
    from harness.reporting.report import CheckResult

    results = [CheckResult("lod", "pass", "CPU", "float64", "TestA"),
               CheckResult("lod", "skip", "", "", "TestB", "no LoD input"),
               CheckResult("inplace", "skip", "", "", "TestA", "no inplace pairs"),
               CheckResult("inplace", "skip", "", "", "TestB", "no inplace pairs")]
    for case in ("TestA", "TestB"):
        results += [CheckResult("output", "pass", "CPU", "float64", case),
                    CheckResult("output", "skip", "GPU", "float64", case, "GPU not usable: x"),
                    CheckResult("grad", "pass", "CPU", "float64", case),
                    CheckResult("grad", "skip", "GPU", "float64", case, "GPU not usable: x")]
    text = _render(results, ["TestA", "TestB"])
    # lod passes in the table: its skip note names the case that skipped it
    assert "skip [TestB] lod: no LoD input" in text, text
    # a place skipped for every case: the column, once, not every case
    assert "skip [GPU/float64] output, grad: GPU not usable: x" in text, text
    # a check skipped everywhere: no brackets
    assert "skip inplace: no inplace pairs" in text, text
    assert "1 op:" in text and "(2 cases)" in text


def test_compat_header_pluralises_ops():
    from checkers.compat.compare import CompatReport
    from checkers.compat.report import text_report

    text = text_report(CompatReport(old_ops=1, new_ops=2), "OLD", "NEW")
    assert "OLD (1 op) -> NEW (2 ops)" in text, text


def test_places_skip_names_the_option_of_the_front_door():
    from harness.options import override
    from harness.reporting.report import SKIP

    case = make_case("relu", reference=lambda x: {"Out": np.maximum(x, 0)}, grad=False)
    try:
        for option, want, not_want in (("--place", "--place / OPKIT_PLACE", "--opkit-place"),
                                       ("--opkit-place", "--opkit-place / OPKIT_PLACE",
                                        "(--place")):
            set_place_option(option)
            with override(place="GPU", dtype="all"):
                results = run_case(case, checks=["places"])
            skips = [r.message for r in results if r.status == SKIP]
            assert skips and all(want in m and not_want not in m for m in skips), skips
    finally:
        set_place_option("OPKIT_PLACE")
