"""`empty`: a zero-size batch (and each other dim cut to 0) runs and gives correctly shaped
empty outputs and gradients, or the op refuses it with an opkit error (docs/harness.md, "Input variants"). Where the case
spells its output shape (an int-list attr or an integer input whose first value is the batch
size: reshape2's `shape` [10, 0, 3, -1]) the output's leading dimension is the user's: the
output must then be zero-size with the same rank."""
from __future__ import annotations

import numpy as np

from harness.backend.case import normalize_slots
from harness.checks.base import Check, RawException, WrongShape
from harness.judging.unconfirmed import confirm_raw
from harness.backend.seam import Combo, compile_shapes, output_slots, run as run_case
from harness.reporting.report import FAIL
from opkit.framework.grad_maker import GRAD_SUFFIX


DIVIDES = ("ZeroDivisionError", "FloatingPointError")


class EmptyCheck(Check):
    name = "empty"
    description = "a zero-size batch gives empty outputs and gradients, or an opkit error"
    order = 120
    variants = ("empty",)
    needs_float = True

    def verdict(self, derived, context):
        results = confirm_raw(derived, self.compare_each(
            derived, context,
            base=lambda combo: run_case(derived.base, combo, context),
            variant=lambda combo: run_case(derived.case, combo, context),
            compare=lambda base, got, combo: _compare(derived, base, got),
            base_skip="the case itself raises", refused="pass",
            raised_prefix="raised a raw exception instead of running or refusing with an "
                          "opkit error: ", raised_kind=RawException))
        if derived.info.get("batch") is not None:
            return results
        # a non-batch dim cut to 0 (0 classes, an empty window) may be outside the op's
        # contract: a raw exception there is not judged, except a division by the size (a
        # native kernel's SIGFPE); a crash, a hang, wrong shapes are
        return [self.skipped(derived.base, f"{derived.note}: the kernel raised a raw "
                             "exception (not judged on a non-batch dim)",
                             Combo(r.place, r.dtype))
                if r.status == FAIL and r.kind == "raw-exception" and not any(
                    w in r.message for w in DIVIDES) else r for r in results]


def _compare(derived, base, got):
    """None, or (the problem, WrongShape): every output and gradient of the zero-size run
    has the shape it must have."""
    case, batch = derived.case, derived.info["batch"]
    specs = normalize_slots(case.inputs)
    inputs = {s.name: s.data for ss in specs.values() for s in ss}
    lod = any(s.lengths for ss in specs.values() for s in ss)
    spelled = _spells_batch(case, specs, batch)
    compiled = {} if lod else _compiled_shapes(case, specs)   # LoD: rows count sequences
    for name, value in got.items():
        want = base.get(name)
        if value is None or want is None:
            continue
        known = compiled.get(name)
        shape = None
        if name.endswith(GRAD_SUFFIX):
            src = inputs.get(name[:-5])
            shape = None if src is None else src.shape
        elif known is not None and all(d >= 0 for d in known):
            # the op's own compile-time infer_shape on the zero-size inputs: which
            # output dim the zero lands in (transpose moves it), exactly
            shape = tuple(known)
        elif want.ndim and want.shape[0] == batch and not lod:
            # (with LoD inputs the output rows may count sequences, which stay)
            if not spelled:
                shape = (0,) + want.shape[1:]
            elif value.ndim != want.ndim or value.size != 0:   # else the spelled shape's
                return (f"{name}: shape {tuple(value.shape)}, expected a zero-size shape of "
                        f"rank {want.ndim} (its shape for the non-empty case was "
                        f"{tuple(want.shape)})", WrongShape)
        if shape is not None and tuple(value.shape) != tuple(shape):
            return (f"{name}: shape {tuple(value.shape)}, expected {tuple(shape)} (its shape "
                    f"for the non-empty case was {tuple(want.shape)})", WrongShape)
    return None


def _spells_batch(case, specs, batch: int) -> bool:
    """The case spells an output shape starting with the batch size: an int-list attr, or
    an integer input slot (its tensors' values joined), whose first value is `batch`."""
    for v in dict(case.attrs or {}).values():
        if isinstance(v, (list, tuple)) and v and all(
                isinstance(e, (int, np.integer)) and not isinstance(e, bool) for e in v) \
                and int(v[0]) == batch:
            return True
    for ss in specs.values():
        vals = [np.asarray(s.data).reshape(-1) for s in ss if s.data is not None
                and np.asarray(s.data).dtype.kind in "iu"]
        if vals and len(vals) == len(ss):
            joined = np.concatenate(vals)
            if joined.size and int(joined[0]) == batch:
                return True
    return False


def _compiled_shapes(case, specs) -> dict:
    """{output: compile-time dims} of the case (no dim unknown); {} when infer_shape cannot
    say (it raises, or a dim stays -1)."""
    try:
        return {n: d for n, d in compile_shapes(case, specs, output_slots(case, case.op_type),
                                                {}).items() if d is not None}
    except Exception:  # noqa: BLE001 - no compile-time answer: the run-time rule applies
        return {}


CHECK = EmptyCheck()
