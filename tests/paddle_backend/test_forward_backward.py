"""PaddlePreparedOp.forward_backward (harness.backend.seam.run_forward_backward's one run of the forward
op and its grad ops): the values of forward() then backward(), and back to the two runs
wherever the one run could differ."""
from __future__ import annotations

import functools

import numpy as np

from harness.backend import contract
from harness.backend.case import VarSpec


def op(op_type, inputs, outputs):
    from harness.backend.seam import make as make_op

    specs = {slot: [VarSpec(n, a, None) for n, a in items] for slot, items in inputs.items()}
    return make_op(op_type, specs, {}, outputs, backend="paddle")


def two_runs(p, cot_of, wrt, no_grad=()):
    outs = p.forward()
    return outs, p.backward(cot_of(outs), wrt, no_grad)


def ones_cot(outs):
    return {n: np.full(v.shape, 0.5, v.dtype) for n, v in outs.items() if v is not None}


def test_one_run_gives_what_the_two_runs_give(paddle_backend):
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(4, 3)), rng.normal(size=(3, 5))
    p = op("mul", {"X": [("x", x)], "Y": [("y", y)]}, {"Out": ["out"]})
    runs = []
    count = p._run_plain
    p._run_plain = lambda *a, **k: runs.append(a[0]) or count(*a, **k)
    first = p.forward_backward(ones_cot, ["x", "y"])      # the first: two runs
    assert len(runs) == 2
    fused = p.forward_backward(ones_cot, ["x", "y"])      # then one
    assert len(runs) == 3
    want = two_runs(p, ones_cot, ["x", "y"])
    for got in (first, fused):
        np.testing.assert_array_equal(got[0]["out"], want[0]["out"])
        for n in ("x", "y"):
            np.testing.assert_array_equal(got[1][n], want[1][n])
    np.testing.assert_allclose(fused[1]["x"], np.full((4, 5), 0.5) @ y.T)
    # per no_grad_set: the frozen input has no gradient, as backward() gives it
    _, g = p.forward_backward(ones_cot, ["x"], ("y",))
    _, g = p.forward_backward(ones_cot, ["x"], ("y",))
    np.testing.assert_allclose(g["x"], np.full((4, 5), 0.5) @ y.T)


def test_a_cotangent_drawn_for_other_shapes_is_not_used(paddle_backend):
    # the cotangent function sees the outputs of the last run with these inputs; when the
    # real outputs differ, the grad ops run again with the cotangent of the real ones
    x = np.arange(6.0).reshape(2, 3)
    p = op("relu", {"X": [("x", x)]}, {"Out": ["out"]})
    p.forward_backward(ones_cot, ["x"])
    sig, predicted = next(iter(p._out_sig.values()))
    predicted["out"].data = np.zeros((3, 2))              # a stale prediction
    p._out_sig = {k: (sig[:0] + (("out", (3, 2), "<f8", "None"),), predicted)
                  for k in p._out_sig}
    outs, grads = p.forward_backward(ones_cot, ["x"])
    np.testing.assert_array_equal(outs["out"], np.maximum(x, 0))
    np.testing.assert_array_equal(grads["x"], np.where(x > 0, 0.5, 0.0))


def test_the_mutation_check_keeps_the_two_runs(paddle_backend):
    x = np.arange(6.0).reshape(2, 3)
    p = op("relu", {"X": [("x", x)]}, {"Out": ["out"]})
    p.read_back = True
    runs = []
    count = p._run_plain
    p._run_plain = lambda *a, **k: runs.append(a[0]) or count(*a, **k)
    for _ in range(3):
        p.forward_backward(ones_cot, ["x"])
    assert len(runs) == 6 and p.mutated == []


def test_run_forward_backward_is_the_same_either_way(paddle_backend):
    from harness.backend.case import Case
    from harness.backend.seam import Combo, prepare, run_forward_backward

    rng = np.random.default_rng(5)
    case = Case("softmax", "softmax", {"X": rng.normal(size=(3, 4))}, {"axis": -1}, {})
    case.grad_inputs = ["X"]
    p = prepare(case, Combo("CPU", "float64"))
    got = [run_forward_backward(p, case) for _ in range(3)]      # two runs, then one
    q = prepare(case, Combo("CPU", "float64"))
    # the contract's default: forward(), then backward() (the two runs only)
    q.forward_backward = functools.partial(contract.PreparedOp.forward_backward, q)
    want = run_forward_backward(q, case)
    for g in got:
        assert g.keys() == want.keys()
        for k in want:
            np.testing.assert_array_equal(g[k], want[k])
