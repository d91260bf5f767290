"""`dtypes`: float32 and float64 kernels exist on every place where the op, and each of its
grad ops, registers kernels."""
from __future__ import annotations

from harness.checks._support import CheckContext, Combo, fail, grad_op_types, pass_, result
from harness.report import SKIP

NAME = "dtypes"
REQUIRED = ("float32", "float64")


def missing_dtypes(op_type: str) -> dict[str, list[str]]:
    """{place: [missing float dtypes]} for the places where `op_type` has kernels."""
    from opkit.registry import op_info

    out = {}
    for place, dtypes in op_info(op_type).kernel_places().items():
        if not any(d.startswith("float") for d in dtypes):
            continue  # an op with only integer/bool kernels on that place
        missing = [d for d in REQUIRED if d not in dtypes]
        if missing:
            out[place] = missing
    return out


def check(case, context: CheckContext) -> list:
    from opkit.registry import has_op, op_info

    op_types = [case.op_type] + grad_op_types(case)
    results = []
    places: dict[str, list[str]] = {}
    for op_type in op_types:
        if not has_op(op_type):
            continue
        for place, dtypes in op_info(op_type).kernel_places().items():
            places.setdefault(place, [])
            if not any(d.startswith("float") for d in dtypes):
                continue
            for d in REQUIRED:
                if d not in dtypes:
                    places[place].append(f"op '{op_type}' has no {d} kernel on {place} "
                                         f"(it has: {', '.join(dtypes)})")
    if not places:
        return [result(NAME, SKIP, None, case, f"op '{case.op_type}' registers no kernels")]
    for place in sorted(places):
        problems = places[place]
        combo = Combo(place, "")
        if problems:
            results.append(fail(NAME, combo, case, "; ".join(problems)))
        else:
            results.append(pass_(NAME, combo, case, "float32 and float64 kernels for " +
                                 ", ".join(t for t in op_types if has_op(t))))
    return results
