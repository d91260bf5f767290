"""What the law checks of issue 36 (`describe`, `every_grad`, `refusals`, `coincidences`,
`trace`; docs/harness.md, "Laws every op obeys") share, so they never import each other."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import as_value, case_inputs, normalize_slots
from harness.judging.compare import compare, first_flagged
from harness.inputs.explore import explorable_attrs
from harness.backend.seam import Combo, PreparedOp, output_slots, prepare, refusal
from harness.options import current
from opkit.framework.program import Program

__all__ = ["deep", "numeric_combo", "run", "reference", "with_case", "compare_to_reference",
           "compile_description", "attr_alternatives", "float_inputs", "refused",
           "ReferenceRaised"]


def deep() -> bool:
    """`OPKIT_LAWS_DEEP=1`: the law checks' larger budget (trace's memory growth, the block
    sizes 4096 and 65536, more derived cases), off by default for `opkit test`'s time."""
    return current().laws_deep


class ReferenceRaised(Exception):
    """The test's reference() raised on a derived case: the case is outside what the test
    defines (not judged)."""


def numeric_combo(case) -> Combo:
    """The CPU combo the laws judge on: float64 when the op has a float64 CPU kernel and the
    case has float inputs, else float32, else the inputs as given."""
    has_float = bool(float_inputs(normalize_slots(case.inputs)))
    dtypes = backends.declared().kernel_places(case.op_type).get("CPU") or ()
    return Combo("CPU", next((d for d in ("float64", "float32") if has_float and d in dtypes),
                             ""))


def with_case(case, inputs=None, attrs=None, name_suffix: str = ""):
    """A copy of `case` with other inputs and/or attrs (expected outputs dropped: a derived
    case is judged against reference())."""
    return replace(case, inputs=case.inputs if inputs is None else inputs,
                   attrs=dict(case.attrs if attrs is None else attrs),
                   name=case.name + name_suffix)


def run(case, combo: Combo, expected: dict | None = None) -> tuple[PreparedOp, dict]:
    """(prepared op, {output name: array}) of one forward run on `combo`."""
    prepared = prepare(case, combo, expected=expected)
    return prepared, prepared.forward()


def reference(case, combo: Combo) -> dict:
    """The test's reference(inputs, attrs) on the case's inputs cast to the combo's dtype:
    {slot: [VarSpec]}. ReferenceRaised when it raises; None when the case has none."""
    if case.reference is None:
        return None
    given = {slot: [(s.name, as_value(s)) for s in specs] if isinstance(case.inputs[slot], list)
             else as_value(specs[0]) for slot, specs in case_inputs(case, combo.dtype).items()}
    try:
        want = case.reference(given, dict(case.attrs or {}))
    except Exception as exc:  # noqa: BLE001 - the reference rejects the derived case
        raise ReferenceRaised(f"{type(exc).__name__}: {exc}") from exc
    return normalize_slots(want)


def compare_to_reference(case, combo: Combo, outs: dict, want: dict) -> str | None:
    """None when every output the reference gives agrees with the run (NaN-aware), else the
    first disagreement (output, index, both values)."""
    opts = case.options or {}
    for s in (s for specs in want.values() for s in specs):
        have, w = outs.get(s.name), np.asarray(s.data)
        if s.name in (case.no_check_set or ()) or have is None or w.dtype.kind not in "fiub":
            continue
        if w.dtype.kind == "f":
            msg, _ = compare(s.name, have, w, combo.dtype or w.dtype.name, opts.get("atol"),
                             opts.get("rtol"), True)
            if msg:
                return msg
        elif not np.array_equal(have, w):
            return f"output '{s.name}' (compared exactly): {_first_unequal(np.asarray(have), w)}"
    return None


def _first_unequal(h, w) -> str:
    if h.shape != w.shape:
        return f"shape {list(h.shape)}, expected {list(w.shape)}"
    bad = h != w
    k, idx = first_flagged(bad)
    return (f"{int(bad.sum())} of {h.size} elements differ; first at "
            f"[{', '.join(map(str, idx))}]: actual {h.reshape(-1)[k].item()!r}, "
            f"expected {w.reshape(-1)[k].item()!r}")


def float_inputs(specs: dict) -> dict:
    return {s.name: s for ss in specs.values() for s in ss
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f"}


def compile_description(case, combo: Combo, expected: dict | None = None) -> dict:
    """{output name: (dtype name or None, shape list or None, lod_level)} after the op is
    appended to a fresh Program whose input variables describe the case's inputs exactly
    (full shapes, dtypes after the combo's cast, lod_level = the LoD's depth)."""
    block = Program().global_block()
    specs = case_inputs(case, combo.dtype)
    for ss in specs.values():
        for s in ss:
            if not isinstance(s.data, np.ndarray):
                raise TypeError(f"input {s.name} is not a tensor")
            block.create_var(name=s.name, shape=list(s.data.shape), dtype=s.data.dtype.name,
                             lod_level=len(s.lengths or []))
    outs = output_slots(case, case.op_type, expected)
    ins = {slot: [s.name for s in ss] for slot, ss in specs.items()}
    block.append_op(case.op_type, inputs=ins, outputs=outs, attrs=dict(case.attrs or {}))
    made = {n: block.var(n) for names in outs.values() for n in names}
    return {n: (v.dtype, None if v.shape is None else list(v.shape), v.lod_level)
            for n, v in made.items()}


def attr_alternatives(case, limit: int = 6) -> list[tuple[dict, str]]:
    """[(attrs, note)]: the case's attrs with ONE attr at another value the op declares it
    accepts -- a bool flipped, each other value of a declared value set or dtype set. Extra,
    generated and seed attrs are left alone."""
    out = []
    attrs = dict(case.attrs or {})
    for a, v in explorable_attrs(backends.proto(case.op_type), attrs, skip=("seed",)):
        if a.type == "bool" and isinstance(v, (bool, np.bool_)):
            others = [not bool(v)]
        elif a.domain is not None and a.domain.kind in ("set", "dtype"):
            others = [x for x in a.domain.values if x != v]
        else:
            others = []
        for x in others:
            out.append(({**attrs, a.name: x}, f"attr {a.name} = {x!r} (the case: {v!r})"))
    return out[:limit]


def refused(exc: BaseException) -> bool:
    """The op refused on purpose (a typed opkit error with a message)."""
    return refusal(exc) is not None
