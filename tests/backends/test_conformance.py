"""harness.testing, the backend conformance suite: opkit's own backend, the numpy toy
backend and the entry-point toy of tests/harness pass it; a backend that breaks one
promise (each planted below, on the numpy toy) fails it with that promise named."""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.contract import Backend, OpRefused
from opkit_fluid.backend import OpkitBackend
from harness.testing import (BackendUnavailable, ConformanceError, conformance_failures,
                             run_conformance_test)
from opkit_numpy_toy import OPS, NumpyOp, NumpyToyBackend


def test_opkit_passes():
    run_conformance_test(OpkitBackend())


def test_the_numpy_toy_passes():
    run_conformance_test(NumpyToyBackend())


def test_a_broken_kernel_still_keeps_the_contract():
    """The conformance suite judges the contract, not the kernels' values (the checks do)."""
    from opkit_numpy_toy import broken

    assert conformance_failures(broken) == []


# -- planted offenders: one broken promise each -------------------------------------------
class Noisy(NumpyOp):
    def forward(self, hooks=None):
        out = super().forward(hooks)
        for n, v in out.items():
            self._vars[n] = v + np.random.default_rng().uniform(0, 1e-3, v.shape)
        return {n: self.array(n) for n in out}


class WrongGradShape(NumpyOp):
    def backward(self, cotangents, wrt, no_grad_set=(), hooks=None, forward_outputs=None):
        got = super().backward(cotangents, wrt, no_grad_set, hooks, forward_outputs)
        return {n: None if g is None else g.reshape(-1) for n, g in got.items()}


class LyingReadBack(NumpyOp):
    def read_inputs(self):
        return {n: self.array(n) * 2 for n in self.input_names()}


class IgnoresHooks(NumpyOp):
    def forward(self, hooks=None):
        return super().forward(None)


class SquaredCotangent(NumpyOp):
    def backward(self, cotangents, wrt, no_grad_set=(), hooks=None, forward_outputs=None):
        return super().backward({n: c * c for n, c in cotangents.items()}, wrt, no_grad_set,
                                hooks, forward_outputs)


def _toy(op_class, **overrides):
    class Planted(NumpyToyBackend):
        def make(self, op_type, inputs, attrs, outputs=None, place=None,
                 enable_inplace=False):
            return op_class(self.ops, op_type, inputs, attrs, outputs, place)

    for name, value in overrides.items():
        setattr(Planted, name, value)
    return Planted()


def _raw_refusal(ins, attrs):
    raise ValueError("a raw numpy error, not a refusal")


@pytest.mark.parametrize("backend, promise", [
    (_toy(Noisy), "second forward() on the same inputs"),
    (_toy(WrongGradShape), "a gradient of shape"),
    (_toy(LyingReadBack), "read_inputs()"),
    (_toy(IgnoresHooks), "ran without the hooks"),
    (_toy(SquaredCotangent), "not linear in the cotangent"),
    (_toy(NumpyOp, lacks={**NumpyToyBackend.lacks, "lod": ""}), "cannot('lod')"),
    (_toy(NumpyOp, refused=lambda self, exc: True), "refused(ValueError) is True"),
    (_toy(NumpyOp, kernel_places=lambda self, op: {"CPU": []}), "lists no CPU"),
    (_toy(NumpyOp, grad_key=lambda self, name: name), "grad_key()"),
    (NumpyToyBackend({**OPS, "reduce_sum": (OPS["reduce_sum"][0], OPS["reduce_sum"][1],
                                            _raw_refusal, OPS["reduce_sum"][3])}),
     "a failure, not a refusal"),
])
def test_a_broken_promise_fails_with_its_name(backend, promise):
    bad = conformance_failures(backend)
    assert any(promise in b for b in bad), bad
    with pytest.raises(ConformanceError, match="broken promise"):
        run_conformance_test(backend)


def test_an_object_that_is_no_backend_is_named():
    assert conformance_failures(object()) == ["object is not a harness.backend.contract."
                                              "Backend"]


def test_an_unavailable_backend_raises_its_reason():
    class Missing(NumpyToyBackend):
        def unavailable(self):
            return "numpy_toy needs a package this machine lacks"

    with pytest.raises(BackendUnavailable, match="lacks"):
        run_conformance_test(Missing())


def test_the_contract_refuses_an_unknown_capability():
    with pytest.raises(ValueError, match="unknown capability"):
        NumpyToyBackend().cannot("time_travel")


def test_a_backend_must_implement_the_abstract_methods():
    class Half(Backend):
        def has_op(self, op_type):
            return True

    with pytest.raises(TypeError, match="abstract"):
        Half()


def test_the_contract_refusal_type_is_a_refusal_for_opkit_too():
    assert OpkitBackend().refused(OpRefused("no"))
    assert not OpkitBackend().refused(KeyError("x"))


def test_the_opkit_kernel_toy_of_tests_harness_passes(monkeypatch):
    from pathlib import Path

    here = Path(__file__).resolve().parents[1] / "harness" / "fixtures" / "toy_backend"
    monkeypatch.syspath_prepend(str(here))
    import opkit_toy_backend

    run_conformance_test(opkit_toy_backend.faithful)


# -- forward_backward: the contract's default, and a backend's own ---------------------------
class FusedWrong(NumpyOp):
    def forward_backward(self, cotangents_of, wrt, no_grad_set=()):
        outs, grads = super().forward_backward(cotangents_of, wrt, no_grad_set)
        return outs, {n: None if g is None else 2 * g for n, g in grads.items()}


def test_a_forward_backward_that_disagrees_with_the_two_runs_is_named():
    bad = conformance_failures(_toy(FusedWrong))
    assert any("forward_backward() gives another gradient of 'x_in'" in b for b in bad), bad


def _relu_op(op_class=NumpyOp):
    from harness.backend.case import VarSpec

    x = np.random.default_rng(3).uniform(-1, 1, (3, 4)) + 0.05
    return op_class(OPS, "relu", {"X": [VarSpec("x", x)]}, {}, {"Out": ["out"]}, None)


def test_the_contracts_default_forward_backward_is_forward_then_backward():
    assert "forward_backward" not in vars(NumpyOp)      # the toy inherits the default
    seen = []

    def cot_of(outs):
        seen.append({n: v.copy() for n, v in outs.items()})
        return {n: np.full(v.shape, 3.0) for n, v in outs.items()}

    outs, grads = _relu_op().forward_backward(cot_of, ["x"])
    p = _relu_op()
    want = p.forward()
    assert seen and seen[0].keys() == want.keys() == outs.keys()
    np.testing.assert_array_equal(outs["out"], want["out"])
    np.testing.assert_array_equal(grads["x"], p.backward(cot_of(want), ["x"])["x"])


def test_run_forward_backward_goes_through_the_prepared_ops_forward_backward():
    """No probing for an optional method: every prepared op has forward_backward, and the
    harness's forward+backward is it (a backend without its own still runs)."""
    from types import SimpleNamespace

    from harness.backend.seam import make_cotangents, run_forward_backward

    calls = []

    class Counted(NumpyOp):
        def forward_backward(self, cotangents_of, wrt, no_grad_set=()):
            calls.append(list(wrt))
            return super().forward_backward(cotangents_of, wrt, no_grad_set)

    case = SimpleNamespace(op_type="relu", grad_inputs=["x"], no_grad_set=None,
                           grad_outputs=None)
    got = run_forward_backward(_relu_op(Counted), case, seed=7)
    assert calls == [["x"]]
    p = _relu_op()
    outs = p.forward()
    cot = make_cotangents(outs, ["out"], seed=7)
    np.testing.assert_array_equal(got["out"], outs["out"])
    np.testing.assert_array_equal(got["x@GRAD"], p.backward(cot, ["x"])["x"])
