"""`sbp`: the op's declared parallel signatures (OneFlow's SBP, opkit.sbp) hold, for the op
and its grad ops, on 2 and 3 simulated devices (docs/sbp.md, "The `sbp` check")."""
from __future__ import annotations

import numpy as np

from harness.backend.case import VarSpec, normalize_slots
from harness.checks.base import Check, Failure, KernelRaised, WrongShape, WrongValue
from harness.judging.compare import first_flagged, first_wrong, fmt_index
from harness.backend.context import (describe_error, grad_outputs, grad_wrt, has_grad, place_object,
                             prepare)
from harness.backend.seam import make, make_cotangents
from opkit.framework.dtypes import eps, is_float, is_low_precision
from opkit.framework.tensor import LoDTensor
from opkit.sbp import SbpContext, physical_shape, sbp_signatures, split_bounds

DEVICES = (2, 3)


class SbpFailure(Failure):
    kind = "sbp-mismatch"


class SbpCheck(Check):
    name = "sbp"
    description = ("declared parallel signatures (split/broadcast/partial_sum): split-compute-"
                   "merge on 2 and 3 simulated devices equals the single-device run")
    order = 185
    needs = ("declarations", "grad_ops")

    def applies(self, case, context):
        if getattr(context, "generated", False):
            return "a generated case: the OpTest's own cases check the declaration"
        if sbp_signatures(case.op_type) is None:
            return (f"op '{case.op_type}' declares no parallel signatures "
                    "(opkit.register_sbp; see docs/sbp.md)")
        sparse = [s.name for specs in normalize_slots(case.inputs).values() for s in specs
                  if not isinstance(s.data, np.ndarray)]
        return f"input '{sparse[0]}' is not a dense tensor" if sparse else None

    def verdict(self, derived, context):
        case = derived.case
        runnable, _ = self.plan(derived, context)   # CPU only: no GPU skip rows
        cpu = [c for c in runnable if c.place == "CPU"]
        if not cpu:
            return [self.skipped(derived.base, "no CPU kernel to simulate devices")]
        combo = next((c for c in cpu if c.dtype == "float64"), cpu[0])
        rng = np.random.default_rng(context.seed)
        try:
            prepared = prepare(case, combo)
            outs = prepared.forward()
        except Exception:  # noqa: BLE001 - the plain run failing is `output`'s business
            return [self.skipped(derived.base, "the single-device run raises: see the output "
                                 "check", combo)]
        inputs = {slot: [(s.name, s.data, s.lengths) for s in specs]
                  for slot, specs in prepared.inputs.items()}
        ref = {n: (None if v is None else np.array(v, copy=True)) for n, v in outs.items()}
        return [self._judge(derived, combo, case.op_type, inputs, prepared.op.attrs,
                            dict(prepared.output_slots), rng, ref)] + \
            self._grad(derived, combo, case, prepared, outs, rng, context)

    # -- the grad ops -----------------------------------------------------------------------
    def _grad(self, derived, combo, case, prepared, outs, rng, context):
        if not (case.grad_inputs and has_grad(case.op_type)):
            return []
        try:
            wrt = grad_wrt(case, prepared)
            cot = make_cotangents(outs, grad_outputs(case, outs), seed=context.seed)
            prepared.backward(cot, wrt, tuple(case.no_grad_set or ()))
            ops = prepared.grad_ops(tuple(case.no_grad_set or ()))
        except Exception:  # noqa: BLE001 - `grad` reports a backward that raises
            return [self.skipped(derived.base, "the single-device backward raises: see the "
                                 "grad check", combo)]
        results = []
        for op in ops:
            inputs = {}
            for slot, names in op.inputs.items():
                values = [(n, prepared.array(n), prepared.lod_lengths(n) or None)
                          for n in names if n]
                if any(v is None for _, v, _ in values):
                    results.append(self.skipped(derived.base, f"grad op '{op.type}': input "
                                                f"slot '{slot}' is not a dense tensor", combo))
                    break
                if values:
                    inputs[slot] = values
            else:
                outputs = {slot: [n for n in names if n] for slot, names in op.outputs.items()}
                results.append(self._judge(derived, combo, op.type, inputs, op.attrs, outputs,
                                           rng))
        return results

    # -- one op (forward or grad) -------------------------------------------------------------
    def _judge(self, derived, combo, op_type, inputs, attrs, outputs, rng, ref=None):
        sigs = sbp_signatures(op_type)
        if sigs is None:
            return self.skipped(derived.base, f"op '{op_type}' declares no parallel "
                                "signatures", combo)
        if ref is None:          # a grad op: its own single-device run on the same inputs
            try:
                ref = _run(op_type, inputs, attrs, outputs, combo.place, {})
            except Exception:  # noqa: BLE001
                return self.skipped(derived.base, f"the single-device run of '{op_type}' "
                                    "raises", combo)
        shapes = {slot: [np.shape(v) for _, v, _ in vals] for slot, vals in inputs.items()}
        for slot, names in outputs.items():
            got = [ref[n] for n in names if ref.get(n) is not None]
            if got:
                shapes[slot] = [g.shape for g in got]
        ctx = SbpContext(op_type, shapes, attrs)
        instances = []
        for sig in sigs:
            try:
                instances.extend(sig.resolve(ctx))
            except Exception as exc:  # noqa: BLE001
                return self.failed(derived, combo, f"op '{op_type}': signature '{sig.text()}' "
                                   f"cannot be resolved: {exc}", kind=SbpFailure)
        if not instances:
            return self.skipped(derived.base, f"op '{op_type}': no declared signature applies "
                                f"to this case (shapes {shapes})", combo)
        runs, left_out, lod_left = 0, [], 0
        pool: dict = {}          # one prepared op per simulated device, fed again per run
        for inst in instances:
            missing = [s for s in shapes if s not in inst.specs]
            if missing:
                return self.failed(derived, combo, f"op '{op_type}': signature "
                                   f"'{inst.text()}' (from '{inst.template}') does not say how "
                                   f"{', '.join(repr(m) for m in missing)} is distributed",
                                   kind=SbpFailure)
            lod_split = _lod_split(inst, inputs)
            if lod_split:
                left_out.append(f"'{inst.text()}': {lod_split}")
                lod_left += 1
                continue
            for n in DEVICES:
                too_small = _too_small(inst, shapes, n)
                if too_small:
                    left_out.append(f"'{inst.text()}' on {n}: {too_small}")
                    continue
                runs += 1
                problem = self._simulate(op_type, inst, inputs, attrs, outputs, ref, n,
                                         combo.place, rng, pool)
                if problem:
                    message, kind = problem
                    head = (f"op '{op_type}', signature '{inst.text()}'"
                            + (f" (from '{inst.template}')" if inst.template != inst.text()
                               else "") + f" on {n} devices: ")
                    return self.failed(derived, combo, head + message, kind=kind)
        if not runs:
            return self.skipped(derived.base, f"op '{op_type}': no signature can run on this "
                                f"case ({'; '.join(left_out)})", combo)
        note = f"op '{op_type}': {len(instances)} signature(s) x {len(DEVICES)} device counts"
        small = len(left_out) - lod_left
        if small:
            note += f"; {small} left out: an axis smaller than the device count"
        if lod_left:
            note += f"; {lod_left} left out: a LoD variable split along its sequences"
        return self.passed(derived, combo, note)

    def _simulate(self, op_type, inst, inputs, attrs, outputs, ref, n, place, rng, pool):
        per_dev = [{slot: [] for slot in inputs} for _ in range(n)]
        for slot, vals in inputs.items():
            for name, v, lengths in vals:
                for k, part in enumerate(_distribute(v, inst.specs[slot], n, rng)):
                    per_dev[k][slot].append((name, part, lengths))
        got = []
        for k in range(n):
            try:
                got.append(_run(op_type, per_dev[k], attrs, outputs, place, pool, k))
            except Exception as exc:  # noqa: BLE001
                return (f"device {k} raised {describe_error(exc)}", KernelRaised)
        for slot, names in outputs.items():
            spec = inst.specs.get(slot)
            for name in names:
                want = ref.get(name)
                if want is None or spec is None:
                    continue
                for k in range(n):
                    have = got[k].get(name)
                    expect = physical_shape(want.shape, spec, n, k)
                    if have is None or tuple(have.shape) != expect:
                        return (f"device {k}: output '{name}' has physical shape "
                                f"{None if have is None else tuple(have.shape)}, the signature "
                                f"implies {expect} (logical {tuple(want.shape)}; the physical "
                                "shape comes from the op's infer_shape on the device's slice)",
                                WrongShape)
                if spec.kind == "B":
                    for k in range(n):
                        wrong = _first_wrong(got[k][name], want)
                        if wrong:
                            return (f"broadcast output '{name}' differs on device {k}: "
                                    f"{_fmt(name, wrong)}", WrongValue)
                    continue
                if spec.kind == "S":
                    merged = np.concatenate([got[k][name] for k in range(n)], axis=spec.axis)
                    how = f"concatenated along axis {spec.axis}"
                else:
                    merged = got[0][name].astype(np.float64) if want.dtype.kind == "f" \
                        else got[0][name].copy()
                    for k in range(1, n):
                        merged = merged + got[k][name]
                    merged = merged.astype(want.dtype)
                    how = "summed (partial_sum)"
                wrong = _first_wrong(merged, want)
                if wrong:
                    where = ""
                    if spec.kind == "S":
                        idx = wrong[0][spec.axis]
                        for k, (a, b) in enumerate(split_bounds(want.shape[spec.axis], n)):
                            if a <= idx < b:
                                local = list(wrong[0])
                                local[spec.axis] = idx - a
                                where = (f" (device {k} computed it, its element "
                                         f"[{', '.join(map(str, local))}])")
                    else:
                        where = f" (the sum of the {n} devices' partial values)"
                    return (f"output '{name}' {how}: {_fmt(name, wrong)}{where}", WrongValue)
        return None


def _run(op_type, inputs, attrs, outputs, place, pool, key=None):
    """One run of the op on these inputs: {output name: array}. The prepared op of `key` (a
    simulated device) in `pool` (a dict) is made once and fed again for later runs; every
    output is reset to an empty tensor first, so nothing of an earlier run survives."""
    specs = {slot: [VarSpec(name, np.array(v, copy=True), lengths) for name, v, lengths in vals]
             for slot, vals in inputs.items()}
    op = pool.get(key)
    if op is None:
        op = pool[key] = make(op_type, specs, attrs, {s: list(n) for s, n in outputs.items()},
                              place_object(place))
    else:
        for items in specs.values():
            for spec in items:
                op.set_input(spec.name, spec.data, spec.lod)
        for name in op.output_names():
            op.scope.var(name).set_value(LoDTensor())
    out = op.forward()
    return {n: (None if v is None else np.array(v, copy=True)) for n, v in out.items()}


def _lod_split(inst, inputs) -> str:
    """A variable with a LoD split along axis 0 (its sequences): not modelled (a device would
    need its own LoD). Splits along other axes, broadcast and partial_sum keep the LoD."""
    for slot, vals in inputs.items():
        spec = inst.specs.get(slot)
        if spec is not None and spec.kind == "S" and spec.axis == 0 and \
                any(lengths for _, _, lengths in vals):
            return f"'{slot}' has a LoD and is split along axis 0 (its sequences)"
    return ""


def _too_small(inst, shapes, n) -> str:
    for slot, spec in inst.specs.items():
        if spec.kind != "S" or slot not in shapes:
            continue
        for shape in shapes[slot]:
            if shape[spec.axis] < n:
                return f"'{slot}' has {shape[spec.axis]} along axis {spec.axis}"
    return ""


def _distribute(v, spec, n, rng) -> list:
    """The n devices' parts of `v` (each fed as a copy by `_run`)."""
    v = np.asarray(v)
    if spec.kind == "S":
        return np.array_split(v, n, axis=spec.axis)    # split_bounds' balanced split
    if spec.kind == "B":
        return [v] * n
    # partial_sum: random parts that add up to v (not v, 0, 0: that would prove nothing)
    if v.dtype.kind == "f":
        scale = float(np.abs(v).mean()) + 1.0 if v.size else 1.0
        parts = [rng.uniform(-scale, scale, v.shape).astype(v.dtype) for _ in range(n - 1)]
        wide = np.float64
    else:
        parts = [rng.integers(-3, 4, v.shape).astype(v.dtype) for _ in range(n - 1)]
        wide = v.dtype
    parts.append((v.astype(wide) - sum(p.astype(wide) for p in parts)).astype(v.dtype))
    return parts


def _first_wrong(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape == want.shape and np.array_equal(got, want):
        return None              # the common case, kept cheap
    if got.shape != want.shape:
        return ((), f"shape {got.shape}", f"shape {want.shape}")
    if want.dtype.kind not in "fc" and not is_float(want.dtype):
        k, idx = first_flagged(got != want)
        return tuple(int(i) for i in idx), got.reshape(-1)[k].item(), want.reshape(-1)[k].item()
    scale = float(np.nanmax(np.abs(want[np.isfinite(want)]))) if np.isfinite(want).any() \
        else 1.0
    rtol = 1e-9 if want.dtype.itemsize >= 8 else 1e-5
    if is_low_precision(want.dtype):
        # float16 / bfloat16: each device's partial is rounded to the storage dtype before
        # the sum, the single-device result once: a few units in the last place apart
        rtol = 4 * eps(want.dtype)
        got, want = got.astype(np.float64), want.astype(np.float64)
    return first_wrong(got, want, rtol * max(1.0, scale), rtol)


def _fmt(name, wrong) -> str:
    idx, g, w = wrong
    return f"{fmt_index(name, idx)} is {g!r}, the single-device run gives {w!r}"


CHECK = SbpCheck()
