"""check_grad's per-input subsets (harness.judging.grad_judge._check_subsets) share one forward run:
a kernel whose gradient is wrong when another input is frozen is still caught, on either
input, and a grad kernel that writes into its inputs does not leak into the next subset."""
import numpy as np
import pytest

from harness.backend.case import Case
from harness.judging.grad_judge import check_grad
from harness.reporting.report import FAIL, PASS
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)

DX, DY, DOUT = grad_var_name("X"), grad_var_name("Y"), grad_var_name("Out")


class _XY(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class _XYGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        if ctx.has_output(DX):
            ctx.set_output_dim(DX, ctx.get_input_dim("X"))
        if ctx.has_output(DY):
            ctx.set_output_dim(DY, ctx.get_input_dim("Y"))


class _Maker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_input("Y", "(Tensor) input of X's shape.")
        self.add_output("Out", "(Tensor) X * Y.")
        self.add_comment("X * Y, with a planted bug in one grad path (or its twin).")


def _grad_maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input("X", self.input("X"))
            op.set_input("Y", self.input("Y"))
            op.set_input(DOUT, self.output_grad("Out"))
            op.set_output(DX, self.input_grad("X"))
            op.set_output(DY, self.input_grad("Y"))
            return [op]
    return Maker


def _onlydy_wrong(broken):
    """The "only dY wanted" path (X frozen: the SECOND subset) multiplies by Y."""
    def kernel(ctx):
        x, y, d = ctx.input("X"), ctx.input("Y"), ctx.input(DOUT)
        if ctx.has_output(DX):
            ctx.set_output(DX, d * y)
        if ctx.has_output(DY):
            ctx.set_output(DY, d * (y if broken and not ctx.has_output(DX) else x))
    return kernel


def _scribble(broken):
    """The "only dX wanted" path writes into X and Y after reading them (a grad kernel
    that scribbles on its inputs); the gradients it gives are right."""
    def kernel(ctx):
        x, y, d = ctx.input("X"), ctx.input("Y"), ctx.input(DOUT)
        if ctx.has_output(DX):
            ctx.set_output(DX, d * y)
        if ctx.has_output(DY):
            ctx.set_output(DY, d * x)
        if broken and ctx.has_output(DX) and not ctx.has_output(DY):
            for a in (x, y):           # past the read-only view, as a helper might
                buf = a.base if a.base is not None else a
                buf *= 3.0
    return kernel


@pytest.fixture
def ops():
    from opkit.registry import scratch

    with scratch():
        for name, grad in (("onlydy_mul", _onlydy_wrong), ("scribble_mul", _scribble)):
            for kind in ("broken", "good"):
                t = f"subset_{kind}_{name}"
                register_operator(t, _XY, _Maker, grad_maker=_grad_maker(t + "_grad"))
                register_kernel(t, dtypes=("float32", "float64"))(
                    lambda ctx: ctx.set_output("Out", ctx.input("X") * ctx.input("Y")))
                register_operator(t + "_grad", _XYGrad)
                register_kernel(t + "_grad", dtypes=("float32", "float64"))(grad(kind == "broken"))
        yield


def _case(op):
    rng = np.random.default_rng(7)
    x, y = rng.uniform(0.5, 1.5, (3, 4)), rng.uniform(0.5, 1.5, (3, 4))
    return Case(op, op, {"X": x, "Y": y}, {}, {"Out": x * y})


def _grad(op):
    return check_grad(_case(op), ["X", "Y"], ["Out"], places=("CPU",), dtypes=("float64",))


def test_wrong_gradient_when_the_other_input_is_frozen_is_caught(ops):
    got = _grad("subset_broken_onlydy_mul")
    assert [r.status for r in got] == [FAIL], got
    msg = got[0].message
    assert "with only Y requested (X in no_grad_set)" in msg, msg
    assert "differs from the one computed with all of X, Y requested" in msg, msg
    assert [r.status for r in _grad("subset_good_onlydy_mul")] == [PASS]


def test_a_grad_kernel_writing_its_inputs_does_not_reach_the_next_subset(ops):
    # the only-dX subset triples X and Y in the scope; the only-dY subset runs on a fresh
    # forward (as with a new PreparedOp per subset), so its gradient is the right one
    for op in ("subset_broken_scribble_mul", "subset_good_scribble_mul"):
        got = _grad(op)
        assert [r.status for r in got] == [PASS], (op, got)


def test_the_planted_broken_op_of_the_broken_ops_set_is_still_caught(broken_ops):
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    by_op = discover([str(broken_ops / "test_coverage_breakers.py")]).by_op()
    reports = {r.op: r for r in run_ops(["broken_onegrad_mul", "good_onegrad_mul"], by_op,
                                        isolate=False, checks=["grad"])}
    bad = [c for c in reports["broken_onegrad_mul"].results if c.status == FAIL]
    assert bad and all(c.check == "grad" for c in bad), bad
    assert any("with only X requested (Y in no_grad_set)" in c.message for c in bad), bad
    assert not [c for c in reports["good_onegrad_mul"].results if c.status == FAIL]
