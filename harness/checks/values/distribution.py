"""`distribution`: a random op samples the distribution its OpTest declares (or that its
attrs imply: `inferred`), and its attrs and the other float dtype move it as declared, at a
false-alarm rate of at most ALPHA per case. docs/harness.md, "`distribution`"."""
from __future__ import annotations

import copy
import dataclasses

import numpy as np

from harness.backend import dispatch as backends
from harness.reporting.error_text import first_line
from harness.backend.case import normalize_slots
from harness.checks.base import Check, WrongValue
from harness.backend.context import Combo, has_float_inputs, op_refused
from harness.judging.distributions import Law, Normal, Uniform, dropout_laws
from harness.judging.unconfirmed import confirm_inferred
from harness.judging.output_judge import prepare_case
from harness.spec import knob  # noqa: I001

NAME = "distribution"
ALPHA = 1e-6              # the probability that a correct op fails one case, at most
TARGET_SAMPLES = 10000    # samples per declared output and attrs setting ...
MAX_RUNS = 100            # ... from at most this many runs of the op
MAX_SAMPLES = 50000       # at most this many samples tested per output and setting
NO_VARY = ("seed", "fix_seed", "dtype", "shape")
CPU = Combo("CPU", "")


def declared(case, context):
    d = knob(getattr(context, "test", None), "distribution")
    if d is None:
        d = (case.options or {}).get("distribution")
    return d or inferred(case)


def inferred(case) -> dict | None:
    """The law of a random op that follows Paddle's conventions (seed and mean/std, min/max or
    dropout_prob attrs: docs/harness.md, "Inferred laws"), for an OpTest that declares none;
    None otherwise. A declared `distribution` always takes precedence."""
    proto = backends.proto(case.op_type)
    if proto is None:
        return None
    pattrs = {a.name: a for a in proto.attrs}
    seed = pattrs.get("seed")
    if seed is None or seed.type not in ("int", "long"):
        return None
    attrs = {a.name: a.default for a in proto.attrs if a.has_default}
    attrs.update(case.attrs or {})
    outs = {v.name for v in proto.outputs}
    ins = {v.name for v in proto.inputs}
    float_in = has_float_inputs(case)

    def floats(*names) -> bool:
        return all(getattr(pattrs.get(n), "type", None) in ("float", "float64") for n in names)

    if "Out" in outs and not float_in:
        if floats("mean", "std"):
            return {"Out": Normal(mean="mean", std="std")}
        if floats("min", "max") and not attrs.get("diag_num"):
            return {"Out": Uniform(min="min", max="max")}
    if "dropout_prob" in pattrs and "X" in ins and {"Out", "Mask"} <= outs and \
            not attrs.get("is_test") and float_in:
        impl = "dropout_implementation" if "dropout_implementation" in pattrs else None
        return dropout_laws("dropout_prob", impl)
    return None


def _candidates(proto_attr, value, law_vary) -> list:
    out = list(law_vary or [])
    t = getattr(proto_attr, "type", "")
    if t in ("float", "float64") and isinstance(value, (int, float)):
        out += [0.25, 0.75, 2.5 * float(value) + 0.5]
    elif t in ("int", "long") and isinstance(value, int) and not isinstance(value, bool):
        out += [value + 1, 2 * value + 2]
    elif t == "bool":
        out += [not value]
    return [v for i, v in enumerate(out) if v != value and v not in out[:i]]


class DistributionCheck(Check):
    name = NAME
    description = ("a random op's samples fit the distribution its OpTest declares (and the "
                   "attrs move it as declared), at a false-alarm rate <= 1e-6")
    order = 165

    def applies(self, case, context):
        if not declared(case, context):
            return ("the test declares no distribution (a random op's OpTest sets "
                    "distribution = {output: Law}, harness.judging.distributions)")
        return None

    def verdict(self, derived, context):
        return confirm_inferred(self, derived, context, self._verdict(derived, context))

    def _verdict(self, derived, context):
        case = derived.case
        decl = declared(case, context)
        own = getattr(getattr(context, "test", None), "distribution", None) or \
            (case.options or {}).get("distribution")
        how = "" if own else " (inferred from the op's attrs: declare `distribution` on the " \
                             "OpTest to change it)"
        if not isinstance(decl, dict) or not all(isinstance(v, Law) for v in decl.values()):
            return [self._fail(derived, "distribution must be a dict {output name: "
                                        "harness.judging.distributions Law}")]
        proto = backends.proto(case.op_type)
        pattrs = {a.name: a for a in proto.attrs} if proto is not None else {}
        attrs = dict(case.attrs)
        for a in pattrs.values():
            if a.name not in attrs and a.has_default:
                attrs[a.name] = a.default
        # which attrs each law reads: those get other values too; the other float dtype
        plan = [("the case's attrs", {}, "")]     # (label, attrs changed, dtype cast to)
        try:
            for law in decl.values():
                _, read = law.resolve(attrs)
                for name in read:
                    if name in NO_VARY or name not in pattrs:
                        continue
                    for v in _candidates(pattrs[name], attrs.get(name), law.vary.get(name)):
                        if not any(ch == {name: v} for _, ch, _ in plan):
                            plan.append((f"{name}={v!r}", {name: v}, ""))
        except Exception as exc:  # noqa: BLE001 - a bad declaration
            return [self._fail(derived, f"cannot resolve the declared distribution: "
                                        f"{type(exc).__name__}: {exc}")]
        other = _other_float_dtype(case, attrs, pattrs)
        if other:
            plan.append((f"{other} ({'the dtype attr' if 'dtype' in pattrs else 'inputs'} "
                         f"cast)", {}, other))
        alpha = ALPHA / (len(plan) * len(decl))
        seed = int(context.seed)
        tested, refused, total = [], [], 0
        for label, change, cast in plan:
            run_attrs = dict(attrs, **change)
            if cast and isinstance(attrs.get("dtype"), str) and "dtype" in pattrs:
                run_attrs["dtype"] = cast
            changed = bool(change or cast)
            if changed and not all(law.valid(law.resolve(run_attrs)[0]) for law in decl.values()):
                refused.append(f"{label} (outside the declared law)")
                continue
            try:
                samples, note, rtol = _sample(case, run_attrs, decl, pattrs, seed, cast)
            except _Refused as exc:
                if not changed:
                    return [self.skipped(case, f"the op refuses the case: {exc}")]
                refused.append(label)
                continue
            except Exception as exc:  # noqa: BLE001
                return [self._fail(derived, f"with {label} the op raised "
                                            f"{type(exc).__name__}: {exc}")]
            for out, law in decl.items():
                values, _ = law.resolve(run_attrs)
                x = samples[out]
                total += x.size
                judged = copy.copy(law)          # the dtype's tolerance on a copy
                judged.rtol = rtol
                msg = judged.test(x, values, alpha, rng=np.random.default_rng(seed))
                if msg:
                    head = f"with {label} (other attrs as the case): " if changed else ""
                    return [self._fail(derived, f"{head}{out} does not follow the declared "
                                                f"{law.describe(values)}{how}: {msg}{note}")]
            tested.append(label)
        text = (f"{', '.join(f'{o} ~ {type(law).__name__}' for o, law in decl.items())}: "
                f"{len(tested)} attr settings ({'; '.join(tested)}), {total} samples, "
                f"false-alarm rate <= {ALPHA:g}")
        if refused:
            text += f"; not tested: {', '.join(refused)}"
        text += how
        return [self.passed(derived, CPU, text)]

    def _fail(self, derived, message):
        return self.failed(derived, CPU, message, kind=WrongValue)


class _Refused(Exception):
    pass


def _sample(case, attrs, decl, pattrs, seed, cast=""):
    """{declared name: samples (1-D float64)} from repeated runs (float inputs cast to `cast`
    when given), a note, and how close a sample must be to a declared value (`_rtol` of the
    outputs: the declared Laws, the OpTest's own objects, are not written to)."""
    inputs = {s.name: s.data for specs in normalize_slots(case.inputs).values() for s in specs}
    got = {k: [] for k in decl}
    key, n, note, rtol = next(iter(decl)), 0, "", Law.rtol
    for k in range(MAX_RUNS):
        run_attrs = dict(attrs)
        if "seed" in pattrs:
            run_attrs["seed"] = 1 + (seed * 1000003 + 7919 * (k + 1)) % 2147483000
        if "fix_seed" in pattrs:
            run_attrs["fix_seed"] = True
        try:
            outs = prepare_case(dataclasses.replace(case, attrs=run_attrs), "CPU", cast).forward()
        except Exception as exc:  # noqa: BLE001
            if op_refused(exc):
                raise _Refused(first_line(exc) if str(exc).strip() else
                               type(exc).__name__) from exc
            raise
        this = {}
        for name, law in decl.items():
            x = law.of(outs, inputs) if law.of is not None else outs.get(name)
            if x is None:
                raise KeyError(f"'{name}' is not an output of the op (outputs: "
                               f"{', '.join(outs)}); give of=fn(outputs, inputs)")
            this[name] = np.asarray(x, np.float64).reshape(-1)
            rtol = max(rtol, _rtol(outs))
        if got[key] and this[key].size and np.array_equal(this[key], got[key][0]):
            note = ("; note: another seed gave the same samples, so one run was tested (the "
                    "op ignores its seed attr, or a seed is fed as an input)")
            break
        for name, x in this.items():
            got[name].append(x)
        n += this[key].size
        if n >= TARGET_SAMPLES or this[key].size == 0:
            break
    # the first MAX_SAMPLES of each (independent draws: an unbiased subsample) bound the
    # cost of a large output
    return {k: np.concatenate(v)[:MAX_SAMPLES] if v else np.zeros(0)
            for k, v in got.items()}, note, rtol


def _rtol(outs) -> float:
    """How close a sample must be to a declared value: 1e-6, or 16 eps of the least precise
    float output (float16 results)."""
    return max([1e-6] + [16 * float(np.finfo(v.dtype).eps) for v in outs.values()
                         if isinstance(v, np.ndarray) and v.dtype.kind == "f"])


def _other_float_dtype(case, attrs, pattrs) -> str:
    """float32 for a float64 case and the reverse (the dtype attr of a creation op, else the
    float inputs), where the op has a CPU kernel for it; '' otherwise."""
    if isinstance(attrs.get("dtype"), str) and "dtype" in pattrs:
        now = attrs["dtype"]
    else:
        kinds = [str(s.data.dtype) for specs in normalize_slots(case.inputs).values()
                 for s in specs if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"]
        now = kinds[0] if kinds else ""
    other = {"float32": "float64", "float64": "float32"}.get(now, "")
    cpu = backends.declared().kernel_places(case.op_type).get("CPU", [])
    return other if other in cpu else ""


CHECK = DistributionCheck()
