"""The harness's checks on torch ops (Backend.check_override): which run as they are, which
cannot apply (and why), and the torch backend's own way to make four findings whose core
checks watch opkit's kernels through hooks or read opkit's grad ops:

- `mutation`: every input read back after the forward and the backward, byte for byte,
  against the schema's declared writes in both directions (an undeclared write; a declared
  `Tensor(a!)` write whose input does not end up holding the returned value);
- `aliasing`: an output sharing storage with an input where the schema promises a new
  tensor (no `Tensor(a)` annotation on the return);
- `describe`: the fake/meta kernel (the op run under torch's FakeTensorMode on inputs of the
  same shapes, dtypes and strides) against the real kernel: each output's shape, dtype and
  strides;
- `double_grad`: second-order gradients through `create_graph` against the numeric slope
  of the first-order backward (float64).

Each names the input, output, element or value it found.
"""
from __future__ import annotations

import numpy as np

from harness.backend.case import case_inputs, normalize_slots
from harness.checks.base import AliasedOutput, Check, InputWritten, WrongShape, WrongValue
from harness.backend.seam import Combo

__all__ = ["override", "SKIPS", "REPLACED", "TorchMutation", "TorchAliasing",
           "FakeKernel", "CreateGraphDoubleGrad", "prepare"]

#: check -> why it does not apply to a torch op
SKIPS = {
    "lod": "torch tensors carry no LoD",
    "sparse": "the torch backend feeds dense tensors only (no SelectedRows)",
    "sbp": "SBP signatures are opkit declarations; torch ops declare none",
    "no_need_buffer": "no_need_buffer is an opkit declaration; torch's autograd saves what "
                      "its backward needs",
    "declared_inputs": "it watches which variables a kernel reads through opkit's kernel "
                       "hooks; torch's dispatcher has none",
    "plan": "opkit's prepared plans do not run torch ops",
    "inplace": "it runs opkit's executor with its inplace pass on; torch eager has none",
    "infer_shape": "torch ops have no compile-time infer_shape (`describe` judges the "
                   "fake/meta kernel instead)",
    "every_grad": "it runs each of opkit's grad ops alone; torch's autograd graph has no "
                  "separate grad ops (`grad` judges every input's gradient)",
    "grad_outputs": "it reads which output gradients opkit's grad ops consume; torch's "
                    "autograd graph has no separate grad ops",
}

CPU64 = Combo("CPU", "float64")


def prepare(case, combo: Combo):
    """The run's backend's prepared op of the case (the torch backend's) on the combo."""
    from harness.backend.seam import make

    outputs = {slot: [s.name for s in specs] for slot, specs in
               normalize_slots(case.outputs).items()}
    return make(case.op_type, case_inputs(case, combo.dtype), case.attrs, outputs, None)


def _fed(case, combo) -> dict:
    return {s.name: s.data for specs in case_inputs(case, combo.dtype).values() for s in specs}


def _same_bytes(a, b) -> bool:
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()


def _first_change(before, after) -> str:
    a, b = np.asarray(before).reshape(-1), np.asarray(after).reshape(-1)
    if a.shape != b.shape:
        return f"shape {np.shape(before)} -> {np.shape(after)}"
    i = int(np.flatnonzero(~((a == b) | (np.isnan(a) & np.isnan(b))))[0]) \
        if a.dtype.kind == "f" else int(np.flatnonzero(a != b)[0])
    index = np.unravel_index(i, np.shape(before))
    return f"element {list(map(int, index))}: {a[i].item()!r} -> {b[i].item()!r}"


def _combos(check, derived, context):
    runnable, skips = check.plan(derived, context)
    return [c for c in runnable if c.place == "CPU"], skips


class TorchMutation(Check):
    """`mutation` on torch: inputs read back after the run against the declared writes."""

    name = "mutation"
    description = "inputs read back after the run equal what was fed, except the schema's " \
                  "declared writes (which hold the returned value)"
    order = 40

    def verdict(self, derived, context):
        from opkit_torch.schema import read

        case = derived.case
        schema = read(case.op_type)
        runnable, skips = _combos(self, derived, context)
        yield from skips
        slot_of = {s.name: slot for slot, specs in normalize_slots(case.inputs).items()
                   for s in specs}
        for combo in runnable:
            fed = _fed(case, combo)
            try:
                p = prepare(case, combo)
                p.read_back = True
                outs = p.forward()
                seen = [("forward", p.read_inputs())]
                if p.has_autograd() and case.grad_inputs:
                    cot = {n: np.ones_like(v) for n, v in outs.items()
                           if v is not None and v.dtype.kind == "f"}
                    p.backward(cot, list(case.grad_inputs), tuple(case.no_grad_set or ()))
                    seen.append(("backward", p.read_inputs()))
            except Exception as exc:  # noqa: BLE001 - the op failing is output's finding
                yield self.skipped(case, f"the op raised ({type(exc).__name__}): see output",
                                   combo)
                continue
            problems = []
            for where, back in seen:
                for name, before in fed.items():
                    after = back.get(name)
                    if after is None or _same_bytes(before, after):
                        continue
                    if slot_of.get(name) not in schema.writes:
                        problems.append(f"the {where} run changed input '{name}', which the "
                                        f"schema does not declare written ({schema.text}): "
                                        f"{_first_change(before, after)}")
            back = seen[0][1]
            for out_slot, source in schema.views.items():
                if source not in schema.writes or out_slot not in outs:
                    continue
                name = next((s.name for s in normalize_slots(case.inputs).get(source, [])),
                            None)
                if name is not None and outs[out_slot] is not None and \
                        not _same_bytes(back[name], outs[out_slot]):
                    problems.append(f"the schema declares input '{source}' written and "
                                    f"returned as '{out_slot}', but after the run it does "
                                    f"not hold the returned value: "
                                    f"{_first_change(outs[out_slot], back[name])}")
            if problems:
                yield self.failed(derived, combo, "; ".join(problems[:3]), kind=InputWritten)
            else:
                yield self.passed(derived, combo)


class TorchAliasing(Check):
    """`aliasing` on torch: storage shared between an output and an input."""

    name = "aliasing"
    description = "no output shares storage with an input unless the schema declares the " \
                  "view (Tensor(a))"
    order = 50

    def verdict(self, derived, context):
        from opkit_torch.schema import read

        case = derived.case
        schema = read(case.op_type)
        runnable, skips = _combos(self, derived, context)
        yield from skips
        for combo in runnable:
            try:
                p = prepare(case, combo)
                p.forward()
            except Exception as exc:  # noqa: BLE001
                yield self.skipped(case, f"the op raised ({type(exc).__name__}): see output",
                                   combo)
                continue
            found = []
            out_slot_of = {n: slot for slot, names in p.output_slots.items() for n in names}
            in_slot_of = {s.name: slot for slot, specs in p.inputs.items() for s in specs}
            for out_name, out in p.output_tensors().items():
                for in_name, t in p.graph_inputs().items():
                    if not _overlap(out, t):
                        continue
                    if schema.views.get(out_slot_of.get(out_name)) == in_slot_of.get(in_name):
                        continue
                    found.append(f"output '{out_name}' shares storage with input "
                                 f"'{in_name}', and the schema promises a new tensor "
                                 f"({schema.text})")
            if found:
                yield self.failed(derived, combo, "; ".join(found), kind=AliasedOutput)
            else:
                yield self.passed(derived, combo)


def _overlap(a, b) -> bool:
    """Tensors `a` and `b` share bytes of one storage."""
    import torch

    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or \
            a.numel() == 0 or b.numel() == 0:
        return False
    sa, sb = a.untyped_storage(), b.untyped_storage()
    if sa.data_ptr() != sb.data_ptr():
        return False

    def span(t):
        start = t.storage_offset() * t.element_size()
        extent = sum((n - 1) * s for n, s in zip(t.shape, t.stride()) if n > 0) + 1
        return start, start + extent * t.element_size()

    (a0, a1), (b0, b1) = span(a), span(b)
    return a0 < b1 and b0 < a1


#: a fake kernel's size that depends on the values (an unbacked symbol: nms's kept boxes)
DATA_DEPENDENT = "data-dependent"


def _dims(sizes) -> list:
    """Sizes or strides of a fake tensor as ints; a symbol without a value (a size the
    values decide) is DATA_DEPENDENT, which any real size matches."""
    out = []
    for d in sizes:
        try:
            out.append(int(d))
        except Exception:  # noqa: BLE001 - torch's guard on a data-dependent symbol
            out.append(DATA_DEPENDENT)
    return out


class FakeKernel(Check):
    """`describe` on torch: the fake/meta kernel against the real one."""

    name = "describe"
    description = "the fake/meta kernel's output shapes, dtypes and strides == the real " \
                  "kernel's"
    order = 151

    def verdict(self, derived, context):
        case = derived.case
        combo = CPU64 if any(c.dtype == "float64" for c in self.plan(derived, context)[0]) \
            else Combo("CPU", "")
        try:
            p = prepare(case, combo)
            p.forward()
            real = p.output_tensors()
        except Exception:  # noqa: BLE001 - the real kernel failing is output's finding
            return [self.skipped(case, "the real kernel raises: see output", combo)]
        try:
            fake = p.run_fake()
        except Exception as exc:  # noqa: BLE001 - no fake kernel, or it raises
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            if "no fake" in text.lower() or "meta" in text.lower() and \
                    "not" in text.lower() and "implement" in text.lower():
                return [self.skipped(case, f"the op has no fake/meta kernel: {text}", combo)]
            return [self.failed(derived, combo, f"the fake kernel raised on inputs the real "
                                f"kernel runs: {type(exc).__name__}: {text}", kind=WrongShape)]
        problems = []
        for name, r in real.items():
            f = fake.get(name)
            if f is None:
                continue
            for what, rv, fv in (("shape", list(r.shape), _dims(f.shape)),
                                 ("dtype", str(r.dtype), str(f.dtype)),
                                 ("strides", list(r.stride()), _dims(f.stride()))):
                if what == "strides" and r.numel() <= 1:
                    continue
                if what != "dtype" and len(rv) == len(fv):
                    fv = [a if b == DATA_DEPENDENT else b for a, b in zip(rv, fv)]
                if rv != fv:
                    problems.append(f"output '{name}': the fake kernel gives {what} {fv}, "
                                    f"the real kernel {rv}")
        if problems:
            return [self.failed(derived, combo, "; ".join(problems), kind=WrongShape)]
        return [self.passed(derived, combo)]


class CreateGraphDoubleGrad(Check):
    """`double_grad` on torch: autograd through create_graph against numeric slopes."""

    name = "double_grad"
    description = "second-order gradients (autograd with create_graph) against the numeric " \
                  "slope of the first-order backward (float64)"
    order = 22
    needs_float = True
    STEP = 1e-6
    SAMPLED = 8          # elements per input

    def applies(self, case, context):
        if not case.grad_inputs:
            return "the case names no gradients"
        from opkit_torch.describe import has_grad

        return None if has_grad(case.op_type) else "the op has no autograd registration"

    def _first(self, case, inputs, cot, wrt):
        from harness.backend.seam import make

        outputs = {slot: [s.name for s in specs] for slot, specs in
                   normalize_slots(case.outputs).items()}
        p = make(case.op_type, inputs, case.attrs, outputs, None)
        p.forward()
        return p, p.backward(cot, wrt, tuple(case.no_grad_set or ()), create_graph=True)

    def verdict(self, derived, context):
        import torch

        case = derived.case
        rng = np.random.default_rng(context.seed)
        inputs = case_inputs(case, "float64")
        wrt = list(case.grad_inputs)
        try:
            p, _ = self._first(case, inputs, {}, wrt)
            outs = p.forward()
            cot = {n: rng.uniform(0.5, 1.5, np.shape(v)) * rng.choice([-1, 1], np.shape(v))
                   for n, v in outs.items() if v is not None and v.dtype.kind == "f"}
            p, _ = self._first(case, inputs, cot, wrt)
        except Exception as exc:  # noqa: BLE001
            return [self.skipped(case, f"the first-order backward raises "
                                 f"({type(exc).__name__}): see grad", CPU64)]
        grads = {n: t for n, t in p.grads.items() if t is not None}
        if not any(t.requires_grad for t in grads.values()):
            return [self.skipped(case, "the first-order gradients do not depend on the "
                                 "inputs through autograd (no second order to judge)", CPU64)]
        cot2 = {n: rng.uniform(0.5, 1.5, tuple(t.shape)) for n, t in grads.items()}
        leaves = p.graph_inputs()
        target = sum((torch.from_numpy(cot2[n]) * t).sum() for n, t in grads.items()
                     if t.requires_grad)
        wanted = [n for n in wrt if n in leaves and leaves[n].requires_grad]
        try:
            analytic = torch.autograd.grad(target, [leaves[n] for n in wanted],
                                           allow_unused=True)
        except (RuntimeError, NotImplementedError) as exc:
            text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            from opkit_torch.errors import declared_no_derivative

            if "not implemented" in text or "does not require grad" in text or \
                    declared_no_derivative(text):
                return [self.skipped(case, f"torch has no second-order derivative here: "
                                     f"{text}", CPU64)]
            return [self.failed(derived, CPU64, f"the second-order backward raised "
                                f"{type(exc).__name__}: {text}", kind=WrongValue)]
        by_name = {s.name: s for specs in inputs.values() for s in specs}
        for n, a in zip(wanted, analytic):
            a = np.zeros(by_name[n].data.shape) if a is None else a.detach().numpy(force=True)
            x = by_name[n].data.reshape(-1)
            for i in np.linspace(0, x.size - 1, min(self.SAMPLED, x.size)).astype(int):
                saved = x[i]
                vals = []
                for step in (self.STEP, -self.STEP):
                    x[i] = saved + step
                    _, g = self._first(case, inputs, cot, wrt)
                    vals.append(sum(float(np.sum(cot2[m] * g[m])) for m in cot2
                                    if g.get(m) is not None))
                x[i] = saved
                numeric = (vals[0] - vals[1]) / (2 * self.STEP)
                got = float(a.reshape(-1)[i])
                if abs(got - numeric) > 1e-4 * max(1.0, abs(numeric)):
                    index = list(map(int, np.unravel_index(i, a.shape)))
                    return [self.failed(
                        derived, CPU64, f"d/d{n}{index} of sum(cot2 * first-order "
                        f"gradients): autograd (create_graph) gives {got:.6g}, the numeric "
                        f"slope of the backward {numeric:.6g}", kind=WrongValue)]
        return [self.passed(derived, CPU64)]


REPLACED = {"mutation": TorchMutation(), "aliasing": TorchAliasing(), "describe": FakeKernel(),
            "double_grad": CreateGraphDoubleGrad()}


def override(name: str):
    if name in SKIPS:
        return f"cannot apply to torch ops: {SKIPS[name]}"
    return REPLACED.get(name)

