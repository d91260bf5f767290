"""`precision` on results defined only up to sign (eigenvectors) and on a result whose
first-order change vanishes (a determinant at a singular matrix: the Paddle sweep's false
alarms): neither fails, while a real float32 error in either still does."""
from __future__ import annotations

import numpy as np

from harness_test_helpers import make_case


def _ref(v64):
    return ({"Out": v64}, None, None, {"Out": np.zeros(v64.shape)})


def test_vectors_negated_whole_agree_and_a_real_error_still_fails():
    from harness.checks.values.precision import _judge_place

    v64 = np.linalg.eigh(np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 4.0]]))[1]
    flipped = v64 * np.array([1.0, -1.0, 1.0])          # column 1 with the other sign
    assert _judge_place(_ref(v64), {"Out": flipped.astype(np.float32)})[0] is None
    wrong = flipped.copy()
    wrong[0, 0] += 1e-3
    problem = _judge_place(_ref(v64), {"Out": wrong.astype(np.float32)})[0]
    assert problem is not None and "Out[0, " in problem
    row = np.array([0.5, -0.25, 2.0])                    # one vector: no sign to pick
    assert _judge_place(_ref(row), {"Out": (-row).astype(np.float32)})[0] is not None


def _register_square_of_sum(float32_inside):
    from opkit import OperatorWithKernel, OpMaker, register_kernel, register_operator

    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            self.add_output("Out", "(Tensor) (sum X)^2, shape [1].")
            self.add_comment("Out = (sum X)^2")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", [1])

    name = "sq_sum_f32" if float32_inside else "sq_sum"
    register_operator(name, Op, Maker)

    @register_kernel(name)
    def kernel(ctx):
        x = ctx.input("X")
        s = x.astype(np.float32).sum(dtype=np.float32) if float32_inside else x.sum()
        ctx.set_output("Out", np.array([s * s], dtype=x.dtype))
    return name


def _precision(op, x):
    from harness.executing.pool import run_case
    from harness.options import override

    case = make_case(op, x=x, reference=lambda x: {"Out": np.array([x.sum() ** 2])},
                     grad=False)
    with override(place="CPU"):
        return [r for r in run_case(case, checks=["precision"], seed=1)
                if r.check == "precision" and r.status != "skip"]


def test_second_order_change_at_a_vanishing_first_derivative_passes(ops):
    x = np.array([[0.5, -0.25], [-0.125, -0.125]])      # sum 0: d(sum^2) = 0 there
    got = _precision(_register_square_of_sum(False), x)
    assert got and all(r.status == "pass" for r in got), [(r.status, r.message) for r in got]


def test_float32_inside_a_float64_kernel_still_fails_off_the_singular_point(ops):
    x = np.array([[0.5, 0.25], [0.125, 0.375]])
    got = _precision(_register_square_of_sum(True), x)
    assert any(r.status == "fail" and "does not resolve" in r.message for r in got), \
        [(r.status, r.message) for r in got]
