"""Every OpTest of opkit_torch/optests, run through the torch backend alone (CPU float64):
its expected outputs match the op's, and the backend's backward matches the numeric slope
of sum(cotangent * output) for the inputs the OpTest checks gradients of."""
from pathlib import Path

import numpy as np
import pytest

from harness.backend.case import case_inputs

FOLDER = Path(__file__).resolve().parents[2] / "opkit_torch" / "optests"


def _cases():
    from harness.backend.case import case_from_test
    from harness.selecting.discovery import discover, instantiate

    found = discover([FOLDER], seed=2024)
    assert not found.broken, [b.text for b in found.broken]
    return [case_from_test(instantiate(t.cls, 2024)) for t in found.tests]


CASES = None


def cases():
    global CASES
    if CASES is None:
        CASES = _cases()
    return CASES


def _expected(case):
    from harness.backend.case import normalize_slots

    return {s.name: s.data for specs in normalize_slots(case.outputs).values() for s in specs}


def _make(case, inputs=None):
    from opkit_torch import plugin

    outs = {slot: [slot] for slot in case.outputs}
    return plugin.make(case.op_type, inputs or case_inputs(case, "float64"), case.attrs, outs)


def test_there_are_at_least_60_optests_of_aten_ops_and_a_custom_op():
    ops = {c.op_type for c in cases()}
    assert len([o for o in ops if o.startswith("aten::")]) >= 60, sorted(ops)
    assert "mylib::scaled_softplus" in ops


@pytest.mark.parametrize("index", range(80))
def test_an_optest_forward_and_backward(index):
    if index >= len(cases()):
        pytest.skip("fewer OpTests")
    case = cases()[index]
    p = _make(case)
    got = p.forward()
    for name, want in _expected(case).items():
        assert np.allclose(got[name], want, rtol=1e-7, atol=1e-9), (case.name, name)
    wrt = [n for n in p.input_names() if n not in ("running_mean", "running_var") and
           np.asarray(p.array(n)).dtype.kind == "f"]
    if not wrt or not p.has_autograd():
        return
    out_name = next(n for n in got if np.asarray(got[n]).dtype.kind == "f")
    cot = np.random.default_rng(0).uniform(0.5, 1.5, np.shape(got[out_name]))
    analytic = p.backward({out_name: cot}, wrt)
    inputs = case_inputs(case, "float64")
    by_name = {spec.name: spec for specs in inputs.values() for spec in specs}
    for slot in wrt:
        x = by_name[slot].data
        flat = x.reshape(-1)
        numeric = np.zeros_like(flat)
        for i in range(0, flat.size, max(1, flat.size // 12)):   # a spread of elements
            saved = flat[i]
            vals = []
            for step in (1e-6, -1e-6):
                flat[i] = saved + step
                vals.append(np.sum(cot * _make(case, inputs).forward()[out_name]))
            flat[i] = saved
            numeric[i] = (vals[0] - vals[1]) / 2e-6
            assert abs(numeric[i] - analytic[slot].reshape(-1)[i]) <= \
                1e-4 * max(1.0, abs(numeric[i])), (case.name, slot, i)
