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
        kernels = op_info(op_type).kernel_places()
        # a float op (float kernels on some place) needs float32 and float64 on every place
        # it has kernels on, and a CPU kernel
        float_op = any(d.startswith("float") for ds in kernels.values() for d in ds)
        if float_op and "CPU" not in kernels:
            places.setdefault("CPU", []).append(
                f"op '{op_type}' has no CPU kernel (it has kernels on "
                f"{', '.join(sorted(kernels))} only)")
        for place, dtypes in kernels.items():
            places.setdefault(place, [])
            if not float_op:
                continue
            for d in REQUIRED:
                if d not in dtypes:
                    places[place].append(f"op '{op_type}' has no {d} kernel on {place} "
                                         f"(it has: {', '.join(dtypes) or 'none'})")
    if not places:
        from opkit.framework.operator import OperatorWithKernel

        if has_op(case.op_type) and issubclass(op_info(case.op_type).op_class,
                                               OperatorWithKernel):
            return [fail(NAME, Combo("CPU", ""), case,
                         f"op '{case.op_type}' is an OperatorWithKernel but registers no "
                         f"kernels (a typo in register_kernel's op type?)")]
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
