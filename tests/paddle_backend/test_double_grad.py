"""`double_grad` on Paddle's kernels: a grad op run on its own through the seam (harness.
backends.paddle_grad_op), its own grad ops from Paddle's double-grad makers, and the check
judging them as it judges opkit's."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case, VarSpec


def op(op_type, inputs, attrs=None, outputs=None):
    from harness.backend.seam import make as make_op

    specs = {slot: [VarSpec(n, a, lengths) for n, a, lengths in items]
             for slot, items in inputs.items()}
    return make_op(op_type, specs, attrs or {}, outputs, backend="paddle")


def double_grad(case):
    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check

    return get_check("double_grad")(case, CheckContext(seed=2024))


def statuses(results):
    return sorted({r.status for r in results})


def test_a_grad_op_runs_alone_and_differentiates_through_its_double_grad_maker(paddle_backend):
    rng = np.random.default_rng(0)
    out, dout, c = (rng.uniform(-0.9, 0.9, (3, 4)) for _ in range(3))
    g = op("tanh_grad", {"Out": [("out", out, None)], "Out@GRAD": [("dout", dout, None)]},
           outputs={"X@GRAD": ["dx"]})
    np.testing.assert_allclose(g.forward()["dx"], dout * (1 - out * out), rtol=1e-12)
    assert [o.type for o in g.grad_ops()] == ["tanh_grad_grad"]
    got = g.backward({"dx": c}, ["out", "dout"])
    np.testing.assert_allclose(got["dout"], c * (1 - out * out), rtol=1e-12)
    np.testing.assert_allclose(got["out"], -2 * out * dout * c, rtol=1e-12)


def test_a_grad_ops_attrs_keep_their_paddle_types(paddle_backend):
    """leaky_relu_grad's alpha is FLOAT: set back with pybind's guess it would be another
    type, and the kernel would read another attr than the grad maker made."""
    x = np.linspace(-1, 1, 6).reshape(2, 3)
    p = op("leaky_relu", {"X": [("x", x, None)]}, {"alpha": 0.25}, {"Out": ["out"]})
    p.forward()
    p.backward({"out": np.ones_like(x)}, ["x"])
    (gop,) = p.grad_ops()
    from opkit_fluid.checks.double_grad import grad_op_function

    g = grad_op_function(p, gop)
    desc = g.fwd_op.desc
    assert int(desc.attr_type("alpha")) == int(p.core.AttrType.FLOAT)
    np.testing.assert_allclose(g.forward()["x@G"], np.where(x > 0, 1.0, 0.25))


@pytest.mark.parametrize("case", [
    Case("tanh", "tanh", {"X": np.linspace(-1, 1, 12).reshape(3, 4)}, grad_inputs=["X"]),
    # a gradient in the no_grad_set: the grad op keeps its empty X@GRAD/Y@GRAD slot
    Case("mul_no_y", "elementwise_mul", {"X": np.arange(1.0, 25).reshape(2, 3, 4) / 10,
                                         "Y": np.array([0.5, -1.5])}, attrs={"axis": 0},
         grad_inputs=["X"], no_grad_set=("Y",)),
    # conv2d_grad_grad leaves DFilter unwritten without DDInput: not a (0,) gradient
    Case("conv_no_input", "conv2d", {"Input": np.random.default_rng(1).random((1, 2, 4, 4)),
                                     "Filter": np.random.default_rng(2).random((3, 2, 3, 3))},
         attrs={"strides": [1, 1], "paddings": [0, 0]}, grad_inputs=["Filter"],
         no_grad_set=("Input",)),
    # a full reduction: Paddle's 0-D gradient handed out in Fluid's shape [1]
    Case("sum_all", "reduce_sum", {"X": np.arange(6.0).reshape(2, 3)},
         attrs={"reduce_all": True, "dim": [0, 1]}, grad_inputs=["X"]),
    # pow's FactorTensor has no gradient at first order: a constant at second order
    Case("pow_tensor", "pow", {"X": np.linspace(0.5, 2, 6), "FactorTensor": np.array([2.5])},
         grad_inputs=["X"]),
    # elu_grad reads X and Out; Paddle's double-grad op folds d/dOut into X's gradient
    Case("elu", "elu", {"X": np.linspace(-2, 2, 10)}, attrs={"alpha": 1.0},
         grad_inputs=["X"]),
], ids=lambda c: c.name)
def test_double_grad_passes_on_paddles_double_grad_kernels(paddle_backend, case):
    results = double_grad(case)
    assert statuses(results) == ["pass"], [r.message for r in results]


def test_a_double_grad_op_without_a_cpu_kernel_fails(paddle_backend):
    """depthwise_conv2d_grad's grad maker makes depthwise_conv2d_grad_grad, whose kernel
    Paddle 3.3.1 registers for the GPU only: second-order gradients cannot run on CPU."""
    rng = np.random.default_rng(0)
    case = Case("dw", "depthwise_conv2d", {"Input": rng.random((1, 3, 5, 5)),
                                           "Filter": rng.random((3, 1, 3, 3))},
                attrs={"groups": 3, "strides": [1, 1], "paddings": [1, 1]},
                grad_inputs=["Input", "Filter"])
    from opkit_paddle.backend import env as paddle_env

    if "float64" in paddle_env.cpu_kernel_dtypes("depthwise_conv2d_grad_grad"):
        pytest.skip("this Paddle registers a CPU depthwise_conv2d double-grad kernel")
    results = double_grad(case)
    assert statuses(results) == ["fail"]
    assert "depthwise_conv2d_double_grad" in results[0].message


def _elu_fwd_and_grad_op():
    from opkit_fluid.checks.double_grad import grad_op_function
    from harness.backend.seam import make_cotangents

    x = np.linspace(-2, 1.5, 8)
    fwd = op("elu", {"X": [("X", x, None)]}, {"alpha": 1.0}, {"Out": ["Out"]})
    outs = fwd.forward()
    fwd.backward(make_cotangents(outs, ["Out"], seed=3), ["X"])
    (gop,) = fwd.grad_ops()
    g = grad_op_function(fwd, gop)
    gouts = g.forward()
    cot2 = make_cotangents(gouts, list(gouts), seed=4)
    return fwd, g, cot2


def test_the_composed_judgement_passes_paddles_folded_elu_gradient(paddle_backend):
    from harness.judging.second_order import judge_composed as judge

    fwd, g, cot2 = _elu_fwd_and_grad_op()
    analytic = g.backward(cot2, g.input_names())
    assert analytic.get("Out") is None        # folded into X's gradient
    assert judge(fwd, g, cot2, analytic) is None


def test_the_composed_judgement_fails_a_gradient_with_a_term_left_out(paddle_backend):
    """The broken twin: X's total derivative without the term through Out (the direct
    term only, 0 where x < 0) is wrong however Out is read."""
    from harness.judging.second_order import judge_composed as judge

    fwd, g, cot2 = _elu_fwd_and_grad_op()
    analytic = dict(g.backward(cot2, g.input_names()))
    x = fwd.array("X")
    analytic["X"] = np.where(x > 0, analytic["X"], 0.0)
    msg = judge(fwd, g, cot2, analytic)
    assert msg and msg.startswith("X: ") and "Out recomputed" in msg


def test_a_duplicable_gradient_slot_keeps_its_empty_positions(paddle_backend):
    """concat_grad with x1 in the no_grad_set writes X@GRAD [x0@GRAD, @EMPTY@, x2@GRAD]:
    run on its own it must keep x1's empty place (dropped, the kernel would refuse three
    inputs for two outputs)."""
    from opkit_fluid.checks.double_grad import grad_op_function

    xs = [np.full((2, 3), float(i)) for i in range(3)]
    p = op("concat", {"X": [(f"x{i}", x, None) for i, x in enumerate(xs)]}, {"axis": 0},
           {"Out": ["out"]})
    p.forward()
    dout = np.arange(18.0).reshape(6, 3)
    p.backward({"out": dout}, ["x0", "x2"], ("x1",))
    (gop,) = p.grad_ops(("x1",))
    assert gop.outputs["X@GRAD"] == ["x0@GRAD", "@EMPTY@", "x2@GRAD"]
    g = grad_op_function(p, gop)
    got = g.forward()
    np.testing.assert_array_equal(got["x0@G"], dout[:2])
    np.testing.assert_array_equal(got["x2@G"], dout[4:])
