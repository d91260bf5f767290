"""`dtypes`: float32 and float64 kernels on every place where the op or a grad op registers
kernels; its CPU integer kernels agree with its float64 kernel on integer values; its float16
/ bfloat16 kernels are judged by harness.judging.low_precision (docs/harness.md, docs/low_precision.md)."""
from __future__ import annotations

import functools

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import VarSpec, normalize_slots
from harness.checks.base import Check, MissingKernel
from harness.judging.compare import first_flagged, fmt_index
from harness.backend.context import (Combo, fail, gpu_unavailable_reason, grad_op_types, has_float_inputs,
                             op_refused, pass_, prepare)
from harness.judging.low_precision import judge, low_precision_kernels
from opkit.framework import errors

NAME = "dtypes"
REQUIRED = ("float32", "float64")
INT_DTYPES = ("int32", "int64")
INT_RANGE = 4   # integer-valued inputs in [-INT_RANGE, INT_RANGE]


def integer_kernel_problems(case) -> list[str]:
    """The op's CPU integer kernels (int32/int64), which a float OpTest never runs, against
    its float64 kernel on the case's float inputs rounded to integers in [-4, 4] (the rule:
    docs/harness.md, `dtypes`). An integer kernel refusing them (an opkit error) is left alone."""
    cpu = backends.kernel_places(case.op_type).get("CPU", [])
    ints = [d for d in INT_DTYPES if d in cpu]
    if not ints or "float64" not in cpu:
        return []
    slots = normalize_slots(case.inputs)
    floats = [s for items in slots.values() for s in items
              if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"]
    if not floats or not all(s.data.size for s in floats):
        return []

    def rounded(data, dtype):
        if not isinstance(data, np.ndarray) or data.dtype.kind != "f":
            return data.copy() if isinstance(data, np.ndarray) else data
        top = float(np.max(np.abs(data))) if np.all(np.isfinite(data)) else 0.0
        return (np.round(data / top * INT_RANGE) if top > 0 else np.zeros_like(data)).astype(dtype)

    def run(dtype):
        specs = {slot: [VarSpec(s.name, rounded(s.data, dtype), s.lengths) for s in items]
                 for slot, items in slots.items()}
        outs = prepare(case, Combo("CPU", ""), inputs=specs).forward()
        return {n: (None if v is None else np.array(v)) for n, v in outs.items()}

    try:
        ref = run("float64")
    except Exception:  # noqa: BLE001 - the float kernel refuses integer values: nothing to judge
        return []
    problems = []

    @functools.cache
    def fixed() -> dict:
        """{output: dtype} of the float32 kernel, run once when asked: an output it gives the
        float64 kernel's dtype too has that dtype fixed by an attr (Paddle's out_dtype) or
        set_output_dtype, so the integer kernel must give that dtype as well."""
        try:
            return {n: v.dtype for n, v in run("float32").items() if v is not None}
        except Exception:  # noqa: BLE001 - no float32 verdict: nothing is fixed
            return {}

    for dtype in ints:
        try:
            got = run(dtype)
        except Exception as exc:  # noqa: BLE001
            if op_refused(exc):
                continue        # the integer kernel refuses these values on purpose
            what = exc if isinstance(exc, errors.EnforceNotMet) else f"{type(exc).__name__}: {exc}"
            problems.append(f"op '{case.op_type}' {dtype} kernel on CPU raised on integer "
                            f"inputs: {what}".splitlines()[0])
            continue
        for n, want in ref.items():
            have = got.get(n)
            if want is None or have is None:
                continue
            want_dtype = np.dtype(dtype) if want.dtype == np.float64 else want.dtype
            if have.dtype != want_dtype and have.dtype == want.dtype and \
                    fixed().get(n) == want.dtype:
                want_dtype = want.dtype
            head = f"op '{case.op_type}' {dtype} kernel on CPU (inputs rounded to integers)"
            if have.dtype != want_dtype:
                problems.append(f"{head}: output '{n}' is {have.dtype.name}, expected "
                                f"{want_dtype.name} (the float64 kernel's output follows its "
                                f"input's dtype)")
                break
            if have.shape != want.shape:
                problems.append(f"{head}: output '{n}' has shape {have.shape}, the float64 "
                                f"kernel's {want.shape}")
                break
            with np.errstate(invalid="ignore"):
                integral = np.isfinite(want) & (want == np.round(want)) \
                    if want.dtype.kind == "f" else np.ones(want.shape, bool)
                bad = integral & (have.astype(np.float64) != want.astype(np.float64))
            if bad.any():
                k, idx = first_flagged(bad)
                problems.append(f"{head}: {int(bad.sum())} of {bad.size} elements of '{n}' "
                                f"differ from the float64 kernel on the same integer values; "
                                f"first {fmt_index(n, idx)}: {dtype} kernel "
                                f"{have.reshape(-1)[k].item()!r}, "
                                f"float64 kernel {want.reshape(-1)[k].item()!r}")
                break
    return problems


class DtypesCheck(Check):
    name = NAME
    description = ("float32 and float64 kernels on every place, for the op and its grad op")
    order = 30
    scope = "op"        # a fact of the op's registrations: once per op (its first case)

    def verdict(self, derived, context):
        case = derived.case
        op_types = [case.op_type] + grad_op_types(case)
        results = []
        places: dict[str, list[str]] = {}
        for op_type in op_types:
            if not backends.has_op(op_type):
                continue
            kernels = backends.kernel_places(op_type)     # the run's backend's
            # a float op (float kernels on some place) needs float32 and float64 on every place
            # it has kernels on, and a CPU kernel
            float_op = any(d.startswith("float") for ds in kernels.values() for d in ds)
            if float_op and "CPU" not in kernels:
                places.setdefault("CPU", []).append(
                    f"op '{op_type}' has no CPU kernel (it has kernels on "
                    f"{', '.join(sorted(kernels))} only)")
            for place, dtypes in kernels.items():
                places.setdefault(place, []).extend(
                    f"op '{op_type}' has no {d} kernel on {place} (it has: "
                    f"{', '.join(dtypes) or 'none'})"
                    for d in REQUIRED if float_op and d not in dtypes)
        if not places:
            decl = backends.declared()
            if decl.has_op(case.op_type) and not decl.describe(case.op_type).kernel_less:
                return [fail(NAME, Combo("CPU", ""), case,
                             f"op '{case.op_type}' is an OperatorWithKernel but registers no "
                             f"kernels (a typo in register_kernel's op type?)",
                             kind=MissingKernel.kind)]
            return [self.skipped(case, f"op '{case.op_type}' registers no kernels")]
        int_problems = integer_kernel_problems(case)
        low = {}        # {place: problems} of the float16 / bfloat16 kernels (a usable GPU)
        if has_float_inputs(case) and low_precision_kernels(case.op_type):
            low = judge(case, [p for p in sorted(places) if p in context.selected_places() and
                               (p != "GPU" or not gpu_unavailable_reason())],
                        context.seed, op_types[1:])
        for place in sorted(places):
            problems = places[place] + (int_problems if place == "CPU" else []) + \
                low.get(place, [])
            combo = Combo(place, "")
            if problems:
                results.append(fail(NAME, combo, case, "; ".join(problems)))
            else:
                lows = low_precision_kernels(case.op_type).get(place, []) if place in low else []
                results.append(pass_(NAME, combo, case, "float32 and float64 kernels for " +
                                     ", ".join(t for t in op_types if backends.has_op(t)) +
                                     (f"; {' and '.join(lows)} within the float64 kernel's bounds"
                                      if lows else "")))
        return self.adopt(derived, results, MissingKernel)


CHECK = DtypesCheck()
