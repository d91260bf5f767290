"""`double_grad`: second-order gradients (a grad op's own grad maker) against numeric ones,
float64 on CPU; docs/harness.md, "`double_grad`" (total derivatives included)."""
from __future__ import annotations

import numpy as np

from harness.backend.dispatch import kernel_places
from harness.backend.case import VarSpec, normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.numeric_gradient import NumericEngine
from harness.backend.seam import Combo, consumed_outputs, has_grad, make, make_cotangents
from harness.judging.output_judge import expected_outputs, first_line, prepare_case
from harness.judging.second_order import RENAMED, judge_composed, judge_exact, judge_fast, shown_name
from opkit.framework.context import EMPTY_VAR_NAME

NAME = "double_grad"
CPU64 = Combo("CPU", "float64")


def grad_op_function(fwd, gop):
    """A prepared op (harness.backend.seam.make: the run's backend) running grad op `gop` alone on the
    values the first-order backward gave it in `fwd` (variables renamed), or a string: why
    it cannot be made."""
    specs = {}
    for slot, names in gop.inputs.items():
        items = []
        for n in names:
            value = None if n == EMPTY_VAR_NAME else fwd.value(n)
            if value is None:
                continue
            if not hasattr(value, "recursive_sequence_lengths"):   # not a (LoD) tensor
                return f"grad op '{gop.type}' reads {type(value).__name__} '{n}'"
            if not value.is_initialized():
                continue
            items.append(VarSpec(n.replace("@GRAD", RENAMED), np.array(fwd.array(n)),
                                 fwd.lod_lengths(n) or None))
        if items:
            specs[slot] = items
    outputs = {slot: [n.replace("@GRAD", RENAMED) for n in names if n != EMPTY_VAR_NAME]
               for slot, names in gop.outputs.items()}
    outputs = {k: v for k, v in outputs.items() if v}
    return make(gop.type, specs, gop.attrs, outputs, fwd.place)


def non_differentiable(fwd) -> frozenset:
    """The forward inputs the op's grad maker gives no gradient for even with nothing in the
    no_grad_set (pow's FactorTensor, scale's ScaleTensor, indices, labels): the grad op
    reads them as constants, so no second-order gradient is asked of them either."""
    try:
        made = {n[: -len("@GRAD")] for op in fwd.grad_ops(()) for names in op.outputs.values()
                for n in names if n.endswith("@GRAD")}
    except Exception:  # noqa: BLE001 - the maker refusing: nothing known, nothing left out
        return frozenset()
    return frozenset(n for n in fwd.input_names() if n not in made)


def _float64_cpu(op_type: str) -> bool:
    """Whether the run's backend has a float64 CPU kernel for the op type."""
    return "float64" in kernel_places(op_type).get("CPU", [])


class DoubleGradCheck(Check):
    name = NAME
    description = ("second-order gradients: a grad op's own grad maker against the numeric "
                   "derivative of the grad op (float64)")
    order = 22
    needs = ("grad_ops",)
    needs_float = True

    def applies(self, case, context):
        if not case.grad_inputs:
            return "the case names no gradients"
        if not has_grad(case.op_type):
            return "the op registers no grad maker"
        if not _float64_cpu(case.op_type):
            return "the op has no float64 CPU kernel"
        return None

    def verdict(self, derived, context):
        case = derived.case
        seed = context.seed
        no_grad = tuple(case.no_grad_set or ())
        try:
            fwd = prepare_case(case, "CPU", "float64", normalize_slots(expected_outputs(case)))
            gops = fwd.grad_ops(no_grad)
        except Exception as exc:  # noqa: BLE001 - the output and grad checks report it
            return [self.skipped(case, f"the first-order run raised {first_line(exc)}")]
        with_maker = [g for g in gops if has_grad(g.type)]
        if not with_maker:
            names = ", ".join(sorted({g.type for g in gops})) or "none"
            return [self.skipped(case, f"no grad op registers a grad maker of its own "
                                       f"(grad ops: {names})")]
        try:
            outs = fwd.forward()
            cot = make_cotangents(outs, consumed_outputs(fwd, no_grad), seed=seed)
            fwd.backward(cot, list(case.grad_inputs), no_grad)
        except Exception as exc:  # noqa: BLE001
            return [self.skipped(case, f"the first-order backward raised {first_line(exc)}")]
        fixed = non_differentiable(fwd)
        return [r for gop in with_maker for r in self._check_grad_op(derived, fwd, gop, seed,
                                                                      fixed)]

    def _check_grad_op(self, derived, fwd, gop, seed, fixed):
        case = derived.case
        where = f"grad op '{gop.type}'"
        if not _float64_cpu(gop.type):
            return [self.skipped(derived.base, f"{where} has no float64 CPU kernel", CPU64)]
        g = grad_op_function(fwd, gop)
        if isinstance(g, str):
            return [self.skipped(derived.base, g, CPU64)]
        delta = float((case.options or {}).get("numeric_grad_delta", 0.005))
        try:
            gouts = g.forward()
            cot2 = make_cotangents(gouts, [n for n, v in gouts.items() if v is not None],
                                   seed=seed + 1)
            engine = NumericEngine(g, cot2, delta, seed=seed)
            # a no_need_buffer input's data is never read (the no_need_buffer check holds the
            # grad kernel to that): its gradient is zero by construction, not worth the runs
            unread = {v.name for slot in (g.info.no_need_buffer or [])
                      for v in g.inputs.get(slot, [])}
            wrt = [n for n in engine.base if n not in unread and engine.base[n].size and
                   n not in fixed]
        except Exception as exc:  # noqa: BLE001
            return [self.failed(derived, None, f"{where} raised {first_line(exc)} when run "
                                f"on its own", kind=WrongValue)]
        if not cot2 or not wrt:
            return [self.skipped(derived.base, f"{where} has no float input or output to "
                                 "differentiate", CPU64)]
        try:
            analytic = g.backward(cot2, wrt)
            double = ", ".join(sorted({o.type for o in g.grad_ops()}))
        except Exception as exc:  # noqa: BLE001
            return [self.failed(derived, CPU64, f"{where}: its grad maker's ops raised "
                                f"{first_line(exc)}", kind=WrongValue)]
        problems, worst = [], 0.0
        for name in wrt:
            ana = analytic.get(name)
            missing = ana is None
            shape = engine.base[name].shape
            ana = np.zeros(shape) if missing else np.asarray(ana, dtype=np.float64)
            if ana.shape != shape:
                problems.append(f"gradient of {shown_name(name)} has shape {ana.shape}, expected "
                                f"{shape}")
                continue
            try:
                msg, w = judge_exact(engine, name, ana)
                if msg is False:     # many colours: the randomized directional check
                    msg, w = judge_fast(engine, name, ana)
            except Exception as exc:  # noqa: BLE001
                problems.append(f"numeric derivative in {shown_name(name)} raised "
                                f"{first_line(exc)}")
                continue
            worst = max(worst, w)
            if msg:
                if missing:
                    msg += (f" (the grad maker of '{gop.type}' gives no gradient of "
                            f"{shown_name(name)}: taken as zero)")
                problems.append(msg)
        if problems and any(n in set(fwd.output_names()) and analytic.get(n) is None
                            for n in wrt):
            # the maker gives no gradient of a forward output it reads (elu_grad's Out,
            # batch_norm_grad's SavedMean): its gradients may be total derivatives through
            # the forward op, judged so with the forward outputs recomputed
            try:
                composed = judge_composed(fwd, g, cot2, analytic, fixed)
            except Exception as exc:  # noqa: BLE001 - not judged that way: the first verdict
                composed = f"raised {first_line(exc)}"
            if composed is None:
                outs = sorted(n for n in wrt if n in set(fwd.output_names()))
                return [self.passed(derived, CPU64, f"{where} -> {double or 'no ops'}: total "
                                    f"derivatives with {', '.join(outs)} recomputed by the "
                                    "forward op", worst)]
            if composed:
                problems.append(f"with the forward outputs recomputed: {composed}")
        if problems:
            return [self.failed(derived, CPU64, f"{where} (double grad ops: {double or 'none'}): "
                                f"second-order gradients w.r.t. its inputs: "
                                + "; ".join(problems), kind=WrongValue, worst=worst)]
        return [self.passed(derived, CPU64, f"{where} -> {double or 'no ops'}: "
                            f"{', '.join(shown_name(n) for n in wrt)}", worst)]


CHECK = DoubleGradCheck()
