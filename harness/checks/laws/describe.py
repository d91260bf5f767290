"""`describe` (law 1 of issue 36): the compile-time dtype, shape and lod_level of every
output equal the run-time tensor's, on the case and on each case with one declared attr value
changed (docs/harness.md, "Laws every op obeys"). Bug class: an infer_shape that never declares
an integer or bool output's dtype, forgets share_lod / set_lod_level, or whose compile-time
branch ignores an attr the run-time branch honours."""
from __future__ import annotations

import numpy as np

from harness.checks.laws import shared as laws
from harness.checks.base import Check, WrongShape
from harness.reporting.messages import raised

MAX_ATTR_VARIANTS = 6


class DescribeCheck(Check):
    name = "describe"
    description = "compile-time dtype/shape/lod_level of every output == the run-time tensor"
    order = 151

    def verdict(self, derived, context):
        case = derived.case
        combo = laws.numeric_combo(case)
        plans = [(case, "the case")] + [(laws.with_case(case, attrs=attrs), note) for attrs, note
                                        in laws.attr_alternatives(case, MAX_ATTR_VARIANTS)]
        judged = 0
        for c, what in plans:
            try:
                prepared, outs = laws.run(c, combo)
            except Exception:  # noqa: BLE001 - refused or raising: other checks judge it
                continue
            try:
                described = laws.compile_description(c, combo)
            except TypeError as exc:
                return [self.skipped(case, str(exc))]
            except Exception as exc:  # noqa: BLE001
                if c is case:
                    continue       # compile time refusing the case: `infer_shape` judges it
                if laws.refused(exc):
                    continue       # a declared value refused at compile time and run: fine
                return [self.failed(derived, combo, f"with {what}: the kernel runs, but "
                                    f"compile-time infer_shape raised {raised(exc)}",
                                    kind=WrongShape)]
            judged += 1
            for name, (dtype, shape, lod_level) in described.items():
                arr = outs.get(name)
                if arr is None:
                    continue
                problem = _disagree(dtype, shape, lod_level, arr,
                                    len(prepared.lod_lengths(name) or []))
                if problem:
                    return [self.failed(derived, combo, f"with {what}: output {name}: "
                                        f"{problem}", kind=WrongShape)]
        if not judged:
            return [self.skipped(case, "the case does not run on CPU")]
        return [self.passed(derived, combo, f"{judged} cases: every output as described")]


def _disagree(dtype, shape, lod_level, arr, run_lod) -> str | None:
    run_dtype = np.asarray(arr).dtype.name
    if dtype is not None and np.dtype(dtype).name != run_dtype:
        return (f"the program describes it as {np.dtype(dtype).name}, the kernel produces "
                f"{run_dtype} (infer_shape must set_output_dtype what the kernel outputs)")
    if shape is not None:
        run = list(np.shape(arr))
        if len(shape) != len(run) or any(c >= 0 and c != r for c, r in zip(shape, run)):
            return (f"the program describes shape {shape}, the kernel produces {run} (all "
                    f"input dims known)")
    if lod_level != run_lod:
        return (f"the program describes lod_level {lod_level}, the kernel produces a LoD of "
                f"depth {run_lod} (infer_shape must share_lod / set_lod_level)")
    return None


CHECK = DescribeCheck()
