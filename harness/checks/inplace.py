"""`inplace`: for every declared inplace pair (of the op or its grad ops), a run with
`enable_inplace=True` -- where `output_tensor(out).mutable_data(...)` hands out the input's
buffer -- matches the out-of-place run bitwise. Ops that use `set_output` simply produce the
same result."""
from __future__ import annotations

from harness.checks._support import (CheckContext, Hooks, combos, fail, first_difference,
                                     fmt_index, grad_op_types, has_grad, pass_, prepare,
                                     run_forward_backward)
from harness.checks.aliasing import shares_memory
from harness.report import SKIP, CheckResult
from opkit.framework.grad_maker import GRAD_SUFFIX
from harness.values import fmt_value

NAME = "inplace"


class ReuseHooks(Hooks):
    """Which declared pairs really shared a buffer after the kernel."""

    def __init__(self):
        super().__init__()
        self.reused, self.own = set(), set()

    def before_kernel(self, op, ctx):
        self.inputs = {}
        for i, o in op.info.inplace.items():
            n = op.input(i)
            var = ctx.scope.find_var(n) if n else None
            self.inputs[(i, o)] = getattr(var.value(), "_data", None) if var else None

    def after_kernel(self, op, ctx):
        for (i, o), data in self.inputs.items():
            n = op.output(o)
            var = ctx.scope.find_var(n) if n else None
            out = getattr(var.value(), "_data", None) if var else None
            (self.reused if shares_memory(out, data) else self.own).add(f"{op.type}:{i}->{o}")


def _compare(ref: dict, got: dict, names) -> str | None:
    for name in names:
        diff = first_difference(ref.get(name), got.get(name))
        if diff is None:
            continue
        if isinstance(diff, str):
            return f"{name}: {diff}"
        idx, a, b, ulps = diff
        return (f"{fmt_index(name, idx)}: out-of-place {fmt_value(a)}, in-place {fmt_value(b)} ({ulps} ULP): the "
                f"kernel reads an input element after overwriting it")
    return None


def check(case, context: CheckContext) -> list:
    from opkit.registry import has_op, op_info

    fwd_pairs = op_info(case.op_type).inplace
    grad_types = [t for t in grad_op_types(case) if has_op(t) and op_info(t).inplace]
    if not fwd_pairs and not grad_types:
        return [CheckResult(NAME, SKIP, "", "", case.name,
                            f"op '{case.op_type}' declares no inplace pairs")]
    runnable, results = combos(case, context, NAME)
    for combo in runnable:
        try:
            ref = run_forward_backward(prepare(case, combo), case, seed=context.seed)
            problems, hooks = [], ReuseHooks()
            outputs = [n for n in ref if not n.endswith(GRAD_SUFFIX)]
            grads = [n for n in ref if n.endswith(GRAD_SUFFIX)]
            if fwd_pairs:   # the forward in place; only its outputs are compared (the input
                prepared = prepare(case, combo, enable_inplace=True)   # buffer is consumed)
                got = run_forward_backward(prepared, case, backward=False, hooks=hooks)
                p = _compare(ref, got, outputs)
                if p:
                    problems.append(f"op '{case.op_type}' with inplace "
                                    f"{dict(fwd_pairs)}: {p}")
            if grad_types and has_grad(case.op_type):
                prepared = prepare(case, combo)
                prepared.forward()
                prepared.enable_inplace = True      # only the grad ops run in place
                got = run_forward_backward(prepared, case, hooks=hooks, seed=context.seed,
                                           run_forward=False)
                p = _compare(ref, got, grads)
                if p:
                    problems.append(f"grad ops {', '.join(grad_types)} with inplace: {p}")
        except Exception as exc:
            results.append(fail(NAME, combo, case, "the op raised before the check could "
                                f"finish: {str(exc).splitlines()[0]}"))
            continue
        if problems:
            results.append(fail(NAME, combo, case, "; ".join(problems)))
        else:
            how = []
            if hooks.reused:
                how.append("buffer reused: " + ", ".join(sorted(hooks.reused)))
            if hooks.own - hooks.reused:
                how.append("own buffer (set_output): " + ", ".join(sorted(hooks.own -
                                                                         hooks.reused)))
            results.append(pass_(NAME, combo, case, "; ".join(how)))
    return results


# registration (harness.checks.registry.CHECK_MODULES): the function above as a Check
from harness.checks.base import FunctionCheck  # noqa: E402

CHECK = FunctionCheck(NAME, check, order=90, description="declared inplace pairs give the "
                      "same results when buffers are reused")
