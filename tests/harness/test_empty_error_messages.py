"""An exception with an empty message is reported by its type's name, never an IndexError of
the harness (harness.reporting.error_text.first_line, the one "first line of an error" of the
harness): in low_precision.judge, aliasing and determinism."""
from __future__ import annotations

import numpy as np
import pytest

from harness_test_helpers import ROOT


def test_first_line():
    from harness.reporting.error_text import first_line

    assert first_line(ValueError("a\nb")) == "a"
    assert first_line(ValueError("\n  \nsecond")) == "second"
    assert first_line(ValueError()) == "ValueError"
    assert first_line(KeyError("")) == "''"       # KeyError's str is the repr of its key
    assert first_line(RuntimeError("   ")) == "RuntimeError"
    assert first_line("") == "" and first_line("x\ny") == "x"


def test_no_harness_code_takes_line_0_of_a_message_unguarded():
    offenders = []
    for path in sorted([*(ROOT / "harness").rglob("*.py"), *(ROOT / "opkit_paddle").rglob("*.py")]):
        if path.name == "error_text.py":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if "str(exc).splitlines()[0]" in line or ".message.splitlines()[0])" in line:
                offenders.append(f"{path.relative_to(ROOT)}:{n}")
    assert not offenders, offenders


def _register(op_type: str):
    from opkit import (DefaultGradOpMaker, OpMaker, OperatorWithKernel, grad_var_name,
                       register_kernel, register_operator)

    class M(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "x doubled")
            self.add_comment("doubles X")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    class GradOp(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))

    register_operator(op_type, Op, M, grad_maker=DefaultGradOpMaker)
    register_operator(op_type + "_grad", GradOp)
    floats = ("float16", "bfloat16", "float32", "float64")

    @register_kernel(op_type, dtypes=floats)
    def fwd(ctx):
        ctx.set_output("Out", ctx.input("X") * 2)

    @register_kernel(op_type + "_grad", dtypes=floats)
    def bwd(ctx):
        ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")) * 2)


def _case(op_type):
    from harness.backend.case import Case

    x = np.random.default_rng(3).uniform(0.5, 1.0, (3, 4))
    return Case(f"Test_{op_type}", op_type, {"X": x}, {}, {"Out": x * 2},
                grad_inputs=["X"], grad_outputs=["Out"])


def _silent(*args, **kwargs):
    raise ValueError()        # what a kernel run outside the framework's wrapping can raise


def test_low_precision_judge_names_an_empty_error(ops, monkeypatch):
    from harness.judging import low_precision

    _register("double_lp")
    monkeypatch.setattr(low_precision.GridRun, "low", _silent)
    problems = low_precision.judge(_case("double_lp"), ["CPU"], 2024, ["double_lp_grad"])
    assert any("raised where the float64 ones did not: ValueError: ValueError" in p
               for p in problems["CPU"]), problems


@pytest.mark.parametrize("check", ["aliasing", "determinism"])
def test_mode_check_names_an_empty_error(ops, monkeypatch, check):
    import sys

    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check

    _register("double_mode")
    monkeypatch.setattr(sys.modules[type(get_check(check)).__module__],
                        "run_forward_backward", _silent)
    results = get_check(check)(_case("double_mode"), CheckContext(places=("CPU",)))
    failed = [r for r in results if r.status == "fail"]
    assert failed and all(r.message.endswith("could finish: ValueError") for r in failed), \
        [(r.status, r.message) for r in results]
