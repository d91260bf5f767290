"""`coincidences` (law 2 of issue 36): relations the case's inputs happen to satisfy (equal
dims, unique or sorted ids, rows summing to 1, equal sequence lengths, every size below the
block sizes kernels switch at), each broken alone inside the contract and judged as
`explore` judges: docs/harness.md, "Laws every op obeys".

Bug class: a W loop bounded by H, infer_shape multiplying a dim by itself, `out[ids] += upd`
losing duplicates, segment sums over runs of sorted ids, soft-label gradients assuming rows
sum to 1, sequence kernels assuming equal lengths, per-block scans without a carry.
"""
from __future__ import annotations

import numpy as np

from harness.backend import dispatch as backends
from harness.checks.laws import shared as laws
from harness.backend.case import as_value, map_inputs, normalize_slots
from harness.checks.base import Check, KernelRaised, WrongValue
from harness.backend.context import case_inputs, output_slots
from harness.judging.grad_judge import case_grads, first_gradient_failure
from harness.reporting.messages import raised
from opkit.framework.dtypes import is_float

MAX_DERIVED = 6               # per case (10 with OPKIT_LAWS_DEEP=1)
GRAD_BUDGET = 1               # derived cases with a gradient check (2 deep)
GRAD_MAX_ELEMENTS = 2048      # a derived case larger than this gets no gradient check
MAX_ELEMENTS = 300_000        # no block-size case past this many elements in one input


def blocks() -> tuple:
    return (1025, 4097, 65537) if laws.deep() else (1025,)


class CoincidencesCheck(Check):
    name = "coincidences"
    description = ("relations the case happens to satisfy (equal dims, sorted/unique ids, rows "
                   "summing to 1, equal lengths, small sizes) broken inside the contract")
    order = 153
    notes_on_pass = True          # `opkit test -v` prints the relations found and broken

    def verdict(self, derived, context):
        case = derived.case
        if case.reference is None:
            return [self.skipped(case, "no reference(): a derived case has nothing to be "
                                 "judged against")]
        if (case.options or {}).get("user_defined_grads"):
            return [self.skipped(case, "user-defined gradients")]
        proto = backends.proto(case.op_type)
        if "seed" in (case.attrs or {}) or any(a.name == "seed" for a in
                                               getattr(proto, "attrs", []) or []):
            return [self.skipped(case, "a random op (see `distribution`)")]
        combo = laws.numeric_combo(case)
        try:
            want = laws.reference(case, combo)
            _, got = laws.run(case, combo)
        except Exception:  # noqa: BLE001 - the case itself: `output` judges it
            return [self.skipped(case, "the case itself does not run against reference()")]
        if laws.compare_to_reference(case, combo, got, want):
            return [self.skipped(case, "the case itself disagrees with reference(): see "
                                 "`output`")]
        plans = derive(case)
        if not plans:
            return [self.skipped(case, "no coincidence found in the case's inputs")]
        found = sorted({p[1] for p in plans})
        broken, grads = [], 0
        budget, grad_budget = (10, 2) if laws.deep() else (MAX_DERIVED, GRAD_BUDGET)
        for new, relation, note in plans[:budget]:
            try:
                want = laws.reference(new, combo)
            except laws.ReferenceRaised:
                continue           # outside what the test defines
            try:          # the declaring backend's compile time (its infer_shape)
                backends.declared().compile_shapes(new, case_inputs(new, combo.dtype),
                                                   output_slots(new, new.op_type), {})
            except Exception:  # noqa: BLE001 - compile time refuses it: outside the contract
                continue
            try:
                _, got = laws.run(new, combo)
            except Exception as exc:  # noqa: BLE001
                if laws.refused(exc):
                    continue
                return [self.failed(derived, combo, f"{relation} broken ({note}): the op "
                                    f"raised {raised(exc)} where reference() computes a "
                                    f"result", kind=KernelRaised)]
            problem = laws.compare_to_reference(new, combo, got, want)
            if problem:
                return [self.failed(derived, combo, f"{relation} broken ({note}): {problem}",
                                    kind=WrongValue)]
            if case.grad_inputs and grads < grad_budget and combo.dtype == "float64" and \
                    _small(new, case.grad_inputs):
                grads += 1
                bad = _grad_problem(new, context)
                if bad:
                    return [self.failed(derived, combo, f"{relation} broken ({note}): "
                                        f"gradients, analytic against numeric: {bad}",
                                        kind=WrongValue)]
            broken.append(f"{relation} ({note})")
        if not broken:
            return [self.skipped(case, f"found {', '.join(found)}; no derived case inside the "
                                 "contract (reference() or the op refuses them)")]
        return [self.passed(derived, combo, f"found: {', '.join(found)}; broken and judged: "
                            f"{'; '.join(broken)}")]


def _small(case, names) -> bool:
    sizes = {s.name: s.data.size for ss in normalize_slots(case.inputs).values() for s in ss
             if isinstance(s.data, np.ndarray)}
    return all(sizes.get(n, 0) <= GRAD_MAX_ELEMENTS for n in names)


def _grad_problem(case, context) -> str | None:
    try:
        got = case_grads(case, seed=getattr(context, "seed", None) or 0)
    except Exception:  # noqa: BLE001 - the gradient check cannot run here
        return None
    return first_gradient_failure(got)


# -- finding and breaking relations ------------------------------------------------------------
def derive(case) -> list:
    """[(derived case, relation, note)], in the order they are judged: each kind of relation
    takes its turn, so a small budget still covers every kind."""
    specs = {s.name: s for ss in normalize_slots(case.inputs).values() for s in ss
             if isinstance(s.data, np.ndarray)}
    kinds = [list(find(case, specs)) for find in (_equal_dims, _unique_ids, _sorted_ids,
                                                  _rows_sum_to_one, _equal_lengths,
                                                  _below_blocks)]
    return [k[i] for i in range(max(map(len, kinds))) for k in kinds if i < len(k)]   # by turns


def _replace(case, changes: dict):
    """The case with the variables in `changes` ({name: (array, lengths or None)}) replaced."""
    def fn(spec):
        if spec.name not in changes:
            return as_value(spec)
        data, lengths = changes[spec.name]
        return (data, lengths) if lengths else data

    return laws.with_case(case, inputs=map_inputs(case.inputs, fn))


def _grow(x: np.ndarray, axis: int, new: int) -> np.ndarray:
    """`x` with `axis` grown to `new`: the first d slices as they are, the rest the input's
    own slices in reverse order (values the op already accepts). For float data the added
    values are drawn inside the range of the input's own (a declared interval domain still
    holds) instead of copied: copies would add ties, whose order (top_k's indices, argmax)
    no contract fixes."""
    d = x.shape[axis]
    idx = np.arange(new)
    idx = np.where(idx < d, idx, (d - 1) - (idx - d) % d)
    out = np.take(x, idx, axis=axis)
    finite = x[np.isfinite(x)] if is_float(x.dtype) and x.size else np.zeros(0)
    if finite.size and finite.min() < finite.max():
        lo, hi = float(finite.min()), float(finite.max())
        added = [slice(None)] * x.ndim
        added[axis] = slice(d, None)
        shape = out[tuple(added)].shape
        rng = np.random.default_rng(new * 7919 + x.size)
        out[tuple(added)] = rng.uniform(lo, hi, shape).astype(x.dtype)
    return out


def _equal_dims(case, specs):
    occ: dict[int, list] = {}
    for n, s in specs.items():
        for ax, d in enumerate(s.data.shape):
            if d >= 2 and not (ax == 0 and s.lengths):
                occ.setdefault(d, []).append((n, ax))
    for d, where in sorted(occ.items()):
        if len(where) < 2:
            continue
        for n, ax in where:
            s = specs[n]
            if s.data.size * 2 > MAX_ELEMENTS:
                continue
            others = ", ".join(f"{m} dim {a}" for m, a in where if (m, a) != (n, ax))
            yield (_replace(case, {n: (_grow(s.data, ax, 2 * d + 1), s.lengths)}),
                   f"equal dims of size {d}",
                   f"{n} dim {ax} grown to {2 * d + 1}; {others} kept at {d}")


def _ints(specs):
    return {n: s for n, s in specs.items() if s.data.dtype.kind in "iu" and s.data.size >= 2}


def _unique_ids(case, specs):
    for n, s in _ints(specs).items():
        flat = s.data.reshape(-1)
        if len(np.unique(flat)) == flat.size:
            new = flat.copy()
            new[1] = new[0]
            yield (_replace(case, {n: (new.reshape(s.data.shape), s.lengths)}),
                   f"{n}'s values all different",
                   f"{n}: a duplicate ({n}[1] = {n}[0] = {int(flat[0])})")


def _sorted_ids(case, specs):
    for n, s in _ints(specs).items():
        flat = s.data.reshape(-1)
        if flat.size >= 3 and np.all(flat[1:] >= flat[:-1]) and flat[0] != flat[-1]:
            order = np.empty(flat.size, dtype=np.int64)
            order[0::2] = np.arange((flat.size + 1) // 2)
            order[1::2] = flat.size - 1 - np.arange(flat.size // 2)
            yield (_replace(case, {n: (flat[order].reshape(s.data.shape), s.lengths)}),
                   f"{n} sorted", f"{n} interleaved: {flat[order][:6].tolist()}...")


def _rows_sum_to_one(case, specs):
    for n, s in specs.items():
        x = s.data
        if x.dtype.kind == "f" and x.ndim >= 1 and x.shape[-1] >= 2 and x.size and \
                np.all(np.abs(x.sum(axis=-1) - 1.0) <= 1e-6):
            scale = np.where(np.arange(x.size // x.shape[-1]) % 2 == 0, 0.5, 1.5)
            new = x * scale.reshape(x.shape[:-1] + (1,))
            yield (_replace(case, {n: (new, s.lengths)}), f"{n}'s rows sum to 1",
                   f"{n}'s rows scaled by 0.5 and 1.5 alternately")


def _equal_lengths(case, specs):
    for n, s in specs.items():
        last = list(s.lengths[-1]) if s.lengths else []
        if len(last) >= 2 and len(set(last)) == 1 and last[0] >= 1:
            new = [list(level) for level in s.lengths]
            new[-1][0] += 1
            new[-1][1] -= 1
            yield (_replace(case, {n: (s.data, new)}), f"{n}'s sequences all of length "
                   f"{last[0]}", f"{n}'s lengths {new[-1]}")


def _below_blocks(case, specs):
    first = next((s for s in specs.values() if s.data.dtype.kind == "f" and s.data.ndim
                  and s.data.shape[-1] >= 1), None)
    if first is None or any(d >= blocks()[0] for s in specs.values() for d in s.data.shape):
        return
    d = first.data.shape[-1]
    for b in blocks():
        changes = {}
        for n, s in specs.items():
            x = s.data
            if x.ndim and x.shape[-1] == d and not (x.ndim == 1 and s.lengths):
                if x.size // max(d, 1) * b > MAX_ELEMENTS:
                    changes = {}
                    break
                changes[n] = (_grow(x, x.ndim - 1, b), s.lengths)
        if changes:
            yield (_replace(case, changes), f"every size below {b - 1}",
                   f"last axis of size {d} grown to {b} in {', '.join(changes)}")


CHECK = CoincidencesCheck()
