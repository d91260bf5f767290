"""The backend conformance suite: the promises of harness.backend.contract as tests a
backend author runs against their backend (as Hypothesis's `run_conformance_test` does for
its providers):

    from harness.testing import run_conformance_test
    run_conformance_test(MyBackend())                  # raises ConformanceError

`conformance_failures(backend, samples)` returns the broken promises instead ([] when it
conforms). `samples` are the cases to run (`Sample`: an op type, its inputs, attrs and
outputs; `refuses=True`: the op must refuse it); the default set uses relu,
elementwise_add and reduce_sum (those the backend has). docs/architecture.md, "Backends".
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from harness.backend.contract import (CAPABILITIES, Backend, OpDescription, OpRefused,
                                      PreparedOp)
from harness.backend.case import VarSpec

__all__ = ["Sample", "DEFAULT_SAMPLES", "ConformanceError", "BackendUnavailable",
           "conformance_failures", "run_conformance_test"]


@dataclass
class Sample:
    """One case of an op: {slot: array}, attrs, the output slots to ask for."""

    op_type: str
    inputs: dict
    attrs: dict = field(default_factory=dict)
    outputs: tuple = ("Out",)
    refuses: bool = False      # the op must refuse it on purpose (Backend.refused)

    def specs(self, dtype=None) -> dict:
        return {slot: [VarSpec(f"{slot.lower()}_in", self._cast(a, dtype))]
                for slot, a in self.inputs.items()}

    @staticmethod
    def _cast(a, dtype):
        a = np.asarray(a)
        return a.astype(dtype) if dtype and a.dtype.kind == "f" else a.copy()

    def output_slots(self) -> dict:
        return {slot: [f"{slot.lower()}_out"] for slot in self.outputs}


def _rng(seed):
    return np.random.default_rng(seed)


DEFAULT_SAMPLES = (
    Sample("relu", {"X": _rng(1).uniform(-1, 1, (3, 4)) + 0.05}),
    Sample("elementwise_add", {"X": _rng(2).uniform(-1, 1, (2, 3)),
                               "Y": _rng(3).uniform(-1, 1, (2, 3))}, {"axis": -1}),
    Sample("reduce_sum", {"X": _rng(4).uniform(-1, 1, (2, 3, 4))},
           {"dim": [1], "keep_dim": False, "reduce_all": False}),
    Sample("reduce_sum", {"X": _rng(5).uniform(-1, 1, (2, 3))},
           {"dim": [7], "keep_dim": False, "reduce_all": False}, refuses=True),
)


class ConformanceError(AssertionError):
    """The backend breaks promises of the contract (one line each in the message)."""


class BackendUnavailable(Exception):
    """The backend cannot run here (its `unavailable()` reason): nothing was checked."""


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def _float_dtypes(backend, op_type) -> list:
    listed = backend.kernel_places(op_type).get("CPU", [])
    return [d for d in ("float64", "float32") if d in listed]


def _general(backend) -> list[str]:
    bad = []
    if not isinstance(backend, Backend):
        return [f"{type(backend).__name__} is not a harness.backend.contract.Backend"]
    for cap in CAPABILITIES:
        why = backend.cannot(cap)
        if why is not None and not (isinstance(why, str) and why.strip()):
            bad.append(f"cannot({cap!r}) must be None or a non-empty reason, not {why!r}")
    try:
        backend.cannot("no such capability")
        bad.append("cannot() of an unknown capability returned instead of raising "
                   "ValueError")
    except ValueError:
        pass
    if backend.has_op("no_such_op_of_any_backend"):
        bad.append("has_op('no_such_op_of_any_backend') is True")
    for exc in (ValueError("boom"), RuntimeError("boom"), ZeroDivisionError()):
        if backend.refused(exc):
            bad.append(f"refused({type(exc).__name__}) is True: a raw Python error is a "
                       "failure, not a refusal")
    if not backend.refused(OpRefused("the op refuses")):
        bad.append("refused(OpRefused(...)) is False: the contract's own refusal type")
    from harness.checks.catalog import all_checks

    for check in all_checks():
        got = backend.check_override(check.name)
        if not (got is None or (isinstance(got, str) and got.strip()) or callable(got)):
            bad.append(f"check_override({check.name!r}) is {got!r}: None, a non-empty "
                       "reason or a Check")
    return bad


def _describe(backend, s: Sample, outs: dict) -> list[str]:
    d = backend.describe(s.op_type)
    where = f"describe({s.op_type!r})"
    if not isinstance(d, OpDescription) or d.op_type != s.op_type:
        return [f"{where} is {d!r}, not an OpDescription of the op"]
    bad = [f"{where} has no input slot {slot!r} the sample feeds"
           for slot in s.inputs if d.input_slot(slot) is None]
    bad += [f"{where} has no attr {k!r} the sample sets" for k in s.attrs
            if k not in d.attrs]
    bad += [f"{where} declares output {o!r} required, and the run did not give it"
            for o in d.required_outputs() if f"{o.lower()}_out" not in outs
            and o in s.outputs]
    if d.has_grad != backend.has_grad(s.op_type):
        bad.append(f"{where}.has_grad is {d.has_grad} and has_grad() {not d.has_grad}")
    return bad


def _forward(backend, s: Sample, dtype) -> list[str]:
    name = f"{s.op_type} ({dtype})"
    p = backend.make(s.op_type, s.specs(dtype), dict(s.attrs), s.output_slots())
    if not isinstance(p, PreparedOp):
        return [f"make({s.op_type!r}) gave a {type(p).__name__}, not a contract.PreparedOp"]
    p.read_back = True
    first = p.forward()
    bad = [f"{name}: forward() gave no output {n!r}" for n in p.output_names()
           if n not in first]
    bad += [f"{name}: array({n!r}) differs from what forward() returned"
            for n, v in first.items() if not _same(p.array(n), v)]
    fed = {s2.name: s2.data for specs in s.specs(dtype).values() for s2 in specs}
    written = set(backend.describe(s.op_type).writes.values())
    back = p.read_inputs()
    bad += [f"{name}: read_inputs()[{n!r}] differs from the input fed (no declared write)"
            for slot, specs in s.specs(dtype).items() if slot not in written
            for n in (x.name for x in specs) if not _same(back.get(n), fed[n])]
    again = p.forward()
    bad += [f"{name}: a second forward() on the same inputs gave another {n!r}"
            for n in first if not _same(first[n], again.get(n))]
    fresh = backend.make(s.op_type, s.specs(dtype), dict(s.attrs), s.output_slots()).forward()
    bad += [f"{name}: a fresh prepared op on the same inputs gave another {n!r}"
            for n in first if not _same(first[n], fresh.get(n))]
    if backend.cannot("kernel_hooks"):
        try:
            p.forward(hooks=object())
            bad.append(f"{name}: forward(hooks=...) ran without the hooks (the backend "
                       "lacks kernel_hooks: it must raise)")
        except Exception:  # noqa: BLE001 - any error: the hooks were not ignored
            pass
    if not backend.cannot("compile_shapes"):
        shapes = _compile(backend, s, dtype)
        bad += [f"{name}: compile_shapes gives {n!r} the shape {shapes.get(n)}, the run "
                f"{list(np.shape(v))}" for n, v in first.items()
                if v is not None and shapes.get(n) not in (list(np.shape(v)), None)]
    bad += _backward(backend, s, p, first, name)
    return bad


def _compile(backend, s, dtype) -> dict:
    from harness.backend.case import Case

    case = Case(s.op_type, s.op_type, s.specs(dtype), dict(s.attrs), {})
    return backend.compile_shapes(case, s.specs(dtype), s.output_slots(), {})


def _backward(backend, s: Sample, p, outs: dict, name: str) -> list[str]:
    if not backend.has_grad(s.op_type):
        return []
    specs = [x for v in p.inputs.values() for x in v
             if isinstance(x.data, np.ndarray) and x.data.dtype.kind == "f"]
    wrt = [x.name for x in specs]
    cot = {n: _rng(9).uniform(0.5, 1.5, np.shape(v)).astype(v.dtype)
           for n, v in outs.items() if v is not None and v.dtype.kind == "f"}
    g1 = {n: None if g is None else np.array(g, copy=True)
          for n, g in p.backward(cot, wrt).items()}
    outs2, g4 = p.forward_backward(lambda _outs: dict(cot), wrt)
    bad = [f"{name}: forward_backward() gives another output {n!r} than forward()"
           for n in outs if not _same(outs[n], outs2.get(n))]
    bad += [f"{name}: forward_backward() gives another gradient of {n!r} than forward() "
            "then backward()" for n in wrt if not _same(g1.get(n), g4.get(n))]
    for x in specs:
        g = g1.get(x.name)
        if g is None or np.shape(g) != x.data.shape:
            bad.append(f"{name}: backward() gives {x.name!r} a gradient of shape "
                       f"{None if g is None else np.shape(g)}, the input's is "
                       f"{x.data.shape}")
    g2 = p.backward({n: 2 * c for n, c in cot.items()}, wrt)
    for n in wrt:
        if g1.get(n) is not None and g2.get(n) is not None and not np.allclose(
                2 * np.asarray(g1[n], np.float64), np.asarray(g2[n], np.float64),
                rtol=1e-3, atol=1e-6):
            bad.append(f"{name}: backward() is not linear in the cotangent ({n!r}: twice "
                       "the cotangent does not give twice the gradient)")
    if len(wrt) > 1:
        g3 = p.backward(cot, wrt[1:], no_grad_set=(wrt[0],))
        bad += [f"{name}: backward() with {wrt[0]!r} in no_grad_set changed {n!r}'s gradient"
                for n in wrt[1:] if not np.allclose(np.asarray(g1[n], np.float64),
                                                    np.asarray(g3.get(n), np.float64))]
    keys = {backend.grad_key(n) for n in wrt}
    if len(keys) != len(wrt) or keys & set(wrt) | keys & set(outs):
        bad.append(f"{name}: grad_key() must give each input a key of its own, apart from "
                   f"the variables' names (got {sorted(keys)})")
    if not backend.cannot("grad_ops"):
        ops = p.grad_ops(())
        bad += [f"{name}: grad_ops() lists {op!r} without type/inputs/outputs/attrs"
                for op in ops if not all(hasattr(op, a) for a in
                                         ("type", "inputs", "outputs", "attrs"))]
    return bad


def _refusal(backend, s: Sample) -> list[str]:
    try:
        backend.make(s.op_type, s.specs("float64"), dict(s.attrs), s.output_slots()).forward()
    except Exception as exc:  # noqa: BLE001 - what the suite classifies
        if not backend.refused(exc):
            return [f"{s.op_type} {s.attrs}: the op raised {type(exc).__name__}: {exc}, "
                    "which the backend calls a failure, not a refusal"]
        if not backend.refusal_message(exc):
            return [f"{s.op_type} {s.attrs}: a refusal without a message"]
        return []
    return [f"{s.op_type} {s.attrs}: the op ran a case it must refuse"]


def conformance_failures(backend, samples=None) -> list[str]:
    """Every broken promise of the contract, one line each ([]: `backend` conforms).
    BackendUnavailable: it cannot run here."""
    bad = _general(backend)
    if bad and not isinstance(backend, Backend):
        return bad
    why = backend.unavailable()
    if why is not None:
        if not (isinstance(why, str) and why.strip()):
            return bad + [f"unavailable() must be None or a non-empty reason, not {why!r}"]
        raise BackendUnavailable(why)
    samples = [s for s in (DEFAULT_SAMPLES if samples is None else samples)
               if backend.has_op(s.op_type)]
    if not samples:
        return bad + ["the backend has none of the sample ops: give it samples of its own"]
    for s in samples:
        places = backend.kernel_places(s.op_type)
        if not isinstance(places, dict) or not all(
                isinstance(v, (list, tuple)) for v in places.values()):
            bad.append(f"kernel_places({s.op_type!r}) is {places!r}, not {{place: [dtype]}}")
            continue
        if s.refuses:
            bad += _refusal(backend, s)
            continue
        dtypes = _float_dtypes(backend, s.op_type)
        if not dtypes:
            bad.append(f"kernel_places({s.op_type!r}) lists no CPU float64/float32 kernel")
        for dtype in dtypes:
            try:
                bad += _forward(backend, s, dtype)
            except Exception as exc:  # noqa: BLE001 - a listed kernel that does not run
                bad.append(f"{s.op_type} ({dtype}), a kernel kernel_places lists: "
                           f"{type(exc).__name__}: {exc}")
        try:
            p = backend.make(s.op_type, s.specs(dtypes[0] if dtypes else None),
                             dict(s.attrs), s.output_slots())
            bad += _describe(backend, s, p.forward())
        except Exception as exc:  # noqa: BLE001
            bad.append(f"describe({s.op_type!r}): {type(exc).__name__}: {exc}")
    return bad


def run_conformance_test(backend, samples=None) -> None:
    """Raise ConformanceError listing every broken promise of the contract (BackendUnavailable
    when the backend cannot run here)."""
    bad = conformance_failures(backend, samples)
    if bad:
        raise ConformanceError(f"{len(bad)} broken promise(s) of the backend contract:\n" +
                               "\n".join(f"- {b}" for b in bad))
