"""`infer_shape`: compile-time shape inference with unknown (-1) dimensions agrees with the
run-time shapes (docs/harness.md, "Input variants")."""
from __future__ import annotations

import numpy as np

from harness.backend.case import normalize_slots
from harness.checks.base import Check, Derived, WrongShape
from harness.reporting.messages import raised
from harness.backend.seam import Combo, compile_shapes, output_slots, prepare, refusal as opkit_refusal

MAX_VARIANTS = 24


class InferShapeCheck(Check):
    name = "infer_shape"
    description = "compile-time infer_shape with -1 dims agrees with the run-time dims"
    order = 150
    needs = ("compile_shapes",)

    def verdict(self, derived: Derived, context):
        case = derived.case
        specs = normalize_slots(case.inputs)
        arrays = {s.name: s for ss in specs.values() for s in ss}
        if any(not isinstance(s.data, np.ndarray) for s in arrays.values()):
            return [self.skipped(case, "an input is not a tensor (LoDTensorArray, ...)")]
        try:
            prepared = prepare(case, Combo("CPU", ""))
            prepared.forward()
        except Exception:  # noqa: BLE001 - the case itself failing is `output`'s business
            return [self.skipped(case, "the case itself raises at run time")]
        runtime = {n: prepared.array(n) for n in prepared.output_names()}
        outs = output_slots(case, case.op_type)
        plans = [("leading dimension unknown", {n: 0 for n, s in arrays.items()
                                                if s.data.ndim >= 1})]
        plans += [(f"{n} dim {j} unknown", {n: j}) for n, s in arrays.items()
                  for j in range(1, s.data.ndim)]
        plans = [p for p in plans if p[1]][:MAX_VARIANTS]
        if not plans:
            return [self.skipped(case, "no input has a dimension")]
        for what, unknown in plans:
            try:
                shapes = compile_shapes(case, specs, outs, unknown)
            except Exception as exc:  # noqa: BLE001
                # a dim unknown in one input while a sibling that must match keeps it
                # known (mul's K in X but not in Y): infer_shape may refuse to compare
                # them; the same dim unknown in every input that has that size is the
                # consistent program, and judged instead
                consistent = _consistent(arrays, unknown) if opkit_refusal(exc) else None
                try:
                    if consistent is None:
                        raise exc
                    shapes = compile_shapes(case, specs, outs, consistent)
                    what += " (and every dim of that size in the other inputs)"
                except Exception as exc2:  # noqa: BLE001
                    return [self.failed(derived, None, f"with {what}: compile-time infer_shape "
                                        f"raised {opkit_refusal(exc2) or raised(exc2)}",
                                        kind=WrongShape)]
            for name, shape in shapes.items():
                arr = runtime.get(name)
                if shape is None or arr is None:
                    continue
                problem = _disagree(list(shape), list(arr.shape))
                if problem:
                    return [self.failed(derived, None, f"with {what}: output {name}: "
                                        f"compile-time shape {list(shape)}, run-time shape "
                                        f"{list(arr.shape)}: {problem}", kind=WrongShape)]
        return [self.passed(derived, None, f"{len(plans)} compile-time variants agree")]


def _consistent(arrays: dict, unknown: dict):
    """`unknown` ({input: dim}) widened to {input: [dims]}: every dim of every other input
    whose size equals an unknown dim's size; None when that adds nothing."""
    sizes = {arrays[n].data.shape[j] for n, j in unknown.items()
             if n in arrays and j < arrays[n].data.ndim}
    out = {n: [j] for n, j in unknown.items()}
    added = False
    for n, s in arrays.items():
        for j, d in enumerate(s.data.shape):
            if d in sizes and j not in out.get(n, []):
                out.setdefault(n, []).append(j)
                added = True
    return out if added else None


def _disagree(compiled: list, run: list) -> str | None:
    if len(compiled) != len(run):
        return f"rank {len(compiled)} vs {len(run)}"
    for i, (c, r) in enumerate(zip(compiled, run)):
        if c == -1 or c == r:
            continue
        if c < 0:
            return f"dim {i} is {c}: an unknown dim must stay exactly -1"
        return f"dim {i} is {c}, the run gives {r}"
    return None


CHECK = InferShapeCheck()
