"""`repeated_input`: one variable passed to two input slots, or twice in a duplicable slot,
gives the outputs of distinct copies and the summed gradient (docs/harness.md, "Input
variants")."""
from __future__ import annotations

import numpy as np

from harness.backend.case import VarSpec, case_inputs
from harness.checks.base import Check, Mismatch
from harness.judging.compare import compare
from harness.backend.seam import prepare, run_forward_backward
from harness.options import DEFAULT_SEED
from opkit.framework.grad_maker import grad_var_name


class RepeatedInputCheck(Check):
    name = "repeated_input"
    description = "one variable in two slots gives distinct copies' outputs, summed gradients"
    order = 160
    variants = ("repeated_input",)
    needs_float = True

    def verdict(self, derived, context):
        return self.compare_each(
            derived, context,
            base=lambda combo: _run(derived, combo, context, shared=False),
            variant=lambda combo: _run(derived, combo, context, shared=True),
            compare=_compare, base_skip="the case itself raises", refused="pass")


def _compare(distinct, shared, combo):
    for name, want in distinct.items():
        got = shared.get(name)
        if want is None or got is None or np.asarray(want).dtype.kind != "f":
            continue
        msg, _ = compare(name, got, want, combo.dtype, None, None, True)
        if msg:
            return msg.replace("expected", "distinct copies gave"), Mismatch
    return None


def _run(derived, combo, context, shared: bool) -> dict:
    """Outputs and the gradient of the first aliased variable (summed over both places when
    `shared` is False: what the shared variable's gradient must equal)."""
    case = derived.case
    sa, ia, sb, ib = derived.info["alias"]
    specs = case_inputs(case, combo.dtype)
    first, second = specs[sa][ia], specs[sb][ib]
    if shared:
        specs[sb][ib] = VarSpec(first.name, first.data, first.lengths)
    else:
        name = second.name if second.name != first.name else second.name + "@copy"
        specs[sb][ib] = VarSpec(name, first.data.copy(), first.lengths)
    wrt = [first.name] if shared else [first.name, specs[sb][ib].name]
    if not case.grad_inputs or first.name in (case.no_grad_set or ()):
        wrt = []
    result = run_forward_backward(prepare(case, combo, inputs=specs), case, wrt=wrt,
                                  seed=getattr(context, "seed", DEFAULT_SEED))
    g = [result.pop(grad_var_name(n), None) for n in wrt]
    if wrt and all(x is not None for x in g):
        total = g[0].astype(np.float64) if shared else \
            g[0].astype(np.float64) + g[1].astype(np.float64)
        result[grad_var_name(first.name)] = total.astype(g[0].dtype)
    return result


CHECK = RepeatedInputCheck()
