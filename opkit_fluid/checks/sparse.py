"""`sparse`: an op fed a SelectedRows with duplicate and unsorted rows gives the outputs and
gradients of its merged dense equivalent (docs/harness.md, "Execution-mode checks")."""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from harness.backend.case import VarSpec, case_inputs, normalize_slots
from harness.checks.base import Check, Mismatch
from harness.judging.compare import compare_runs
from harness.checks.modes import error_line, first_line, kernel_line
from harness.backend.seam import make, output_slots, place_object, run_forward_backward
from harness.spec import knob  # noqa: I001
from opkit.framework.device import to_host
from opkit.framework.tensor import SelectedRows

MODE = "SelectedRows with duplicate, unsorted rows"


def sparse_slots(case, context) -> list[str]:
    named = list((case.options or {}).get("sparse_inputs", ()) or ())
    test = getattr(context, "test", None)
    named += list(knob(test, "opkit_sparse_inputs") or ())
    for slot, specs in normalize_slots(case.inputs).items():
        if any(isinstance(s.data, SelectedRows) for s in specs):
            named.append(slot)
    return list(dict.fromkeys(named))


def duplicate_rows(dense: np.ndarray, seed: int):
    """(rows, values, dense equivalent): every row but one, about half of them twice (each
    copy half the row), shuffled until unsorted."""
    rng = np.random.default_rng(seed)
    height = dense.shape[0]
    keep = list(range(height))
    if height >= 3:
        keep.remove(int(rng.integers(height)))
    twice = set(rng.choice(keep, size=max(1, len(keep) // 2), replace=False).tolist())
    entries = []
    for r in keep:
        if r in twice:      # a row given twice: two halves
            entries += [(r, dense[r] * 0.5), (r, dense[r] * 0.5)]
        else:
            entries.append((r, dense[r]))
    order = rng.permutation(len(entries))
    if list(order) == sorted(order):
        order = order[::-1]
    rows = [entries[i][0] for i in order]
    values = np.stack([entries[i][1] for i in order]).astype(dense.dtype)
    equivalent = np.zeros_like(dense)
    equivalent[keep] = dense[keep]
    return rows, values, equivalent


class SparseCheck(Check):
    name = "sparse"
    description = ("a SelectedRows input with duplicate, unsorted rows gives the outputs and "
                   "gradients of its merged dense equivalent")
    order = 195
    needs = ("selected_rows",)

    def applies(self, case, context):
        if not sparse_slots(case, context):
            return (f"{case.name} feeds no SelectedRows (an OpTest names the slots that may "
                    "take one in opkit_sparse_inputs)")
        return None

    def verdict(self, derived, context):
        case, seed = derived.case, context.seed
        slots = sparse_slots(case, context)

        def dense(combo):
            feeds = _feeds(case, combo, slots, seed)
            return _run(case, combo, feeds.dense, seed, feeds.names), feeds

        def judge(base, got, combo):
            want, feeds = base
            problem = compare_runs(want, got, combo.dtype, "the merged dense equivalent")
            if problem:
                return (f"{MODE} ({'; '.join(feeds.fed)}): {problem} -- "
                        f"{kernel_line(case.op_type, combo.dtype, combo.place)} must sum "
                        "duplicate rows before applying them", Mismatch)
            return None

        def raised(exc, combo):
            fed = _feeds(case, combo, slots, seed).fed
            return f"{MODE} ({'; '.join(fed)}): the op raised {first_line(exc)}{error_line(exc)}"

        return self.compare_each(
            derived, context, base=dense,
            base_skip=lambda exc: str(exc) if isinstance(exc, _NoSparseFeed) else
            "the case itself raises",
            variant=lambda combo, base: _run(case, combo, base[1].sparse, seed, base[1].names),
            variant_takes_base=True, compare=judge, raised_message=raised,
            passed_message=lambda base, got, combo: "; ".join(base[1].fed))


class _NoSparseFeed(Exception):
    """No slot of the case can be fed as a SelectedRows on this combo (a skip)."""


@dataclass
class _Feeds:
    dense: dict         # the input specs with each sparse slot's merged dense equivalent
    sparse: dict        # ... with each sparse slot's SelectedRows
    fed: list           # what was fed as a SelectedRows, for the messages
    names: set          # the variables fed as SelectedRows


def _feeds(case, combo, slots, seed) -> _Feeds:
    """The dense and the SelectedRows feeds of the case on `combo` (the last variable of each
    sparse slot); raises _NoSparseFeed when no slot can take one."""
    dense_specs, sparse_specs = case_inputs(case, combo.dtype), case_inputs(case, combo.dtype)
    fed, unusable = [], None
    for slot in slots:
        if slot not in dense_specs:
            continue
        spec = dense_specs[slot][-1]      # the last variable of the slot
        data = spec.data
        if isinstance(data, SelectedRows):
            data = np.asarray(data.to_dense())
            if combo.dtype and data.dtype.kind == "f":
                data = data.astype(combo.dtype)
        if not isinstance(data, np.ndarray) or data.ndim < 1 or data.shape[0] < 2 \
                or data.dtype.kind != "f" or spec.lengths:
            unusable = f"Input({slot}) is no float tensor of 2 rows or more"
            continue
        rows, values, equivalent = duplicate_rows(data, seed)
        dense_specs[slot][-1] = VarSpec(spec.name, equivalent)
        sparse_specs[slot][-1] = VarSpec(spec.name, SelectedRows(rows, data.shape[0], values))
        fed.append(f"{slot} ({spec.name}): rows {rows}")
    if not fed:
        raise _NoSparseFeed(unusable or "no sparse input")
    names = {s.name for specs in sparse_specs.values() for s in specs
             if isinstance(s.data, SelectedRows)}
    return _Feeds(dense_specs, sparse_specs, fed, names)


def _run(case, combo, specs, seed, sparse_names) -> dict:
    """The op on `specs`: outputs (SelectedRows as dense arrays) and the case's gradients of
    dense inputs."""
    prepared = make(case.op_type, specs, case.attrs, output_slots(case, case.op_type),
                    place_object(combo.place))
    grad_inputs = [n for n in (case.grad_inputs or ()) if n not in sparse_names]
    result = run_forward_backward(prepared, replace(case, grad_inputs=grad_inputs), seed=seed)
    for name in prepared.output_names():
        value = prepared.value(name)
        if isinstance(value, SelectedRows):
            result[name] = np.asarray(to_host(value.to_dense()))
    return result


CHECK = SparseCheck()
