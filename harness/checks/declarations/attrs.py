"""`attrs`: running an op leaves its attributes (and its grad ops') as they were, and
other accepted attr values (variant `attr_values`) give correct results: docs/harness.md,
"`attrs`"."""
from __future__ import annotations

import copy
import functools
from dataclasses import replace

import numpy as np

from harness.backend.dispatch import cannot
from harness.backend.case import normalize_slots
from harness.checks.base import Check, WrongValue
from harness.judging.compare import same_value
from harness.backend.context import Combo, has_grad, prepare, run_forward_backward
from harness.judging.grad_judge import case_grads, numeric_dtype, told_failure
from harness.judging.output_judge import case_outputs
from harness.reporting.report import FAIL
from harness.reporting.values import fmt_value


def deep_equal(a, b) -> bool:
    """Equal in type and value, recursively (lists vs tuples differ; NaN equals NaN)."""
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.dtype == b.dtype
                and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(deep_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return a is b


def attr_snapshot(value):
    """A deep copy of an attr value; a value that cannot be copied (Paddle's Scalar attrs
    refuse to pickle, and deepcopy pickles) is kept as the same object, inside copied
    lists, tuples and dicts, so the comparison falls back to its == (or identity)."""
    if isinstance(value, dict):
        return {k: attr_snapshot(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and type(value) in (list, tuple):
        return type(value)(attr_snapshot(v) for v in value)
    try:
        return copy.deepcopy(value)
    except Exception:  # noqa: BLE001 - TypeError "cannot pickle", copy.Error, ...
        return value


def fresh_attrs(case, context):
    """The OpTest's attrs from a fresh setUp (None when there is no test to set up again)."""
    test = getattr(context, "test", None)
    if test is None or getattr(test, "op_type", None) != case.op_type:
        return None
    try:
        from harness.selecting.discovery import seed_all

        again = type(test)("runTest") if hasattr(type(test), "runTest") else type(test)()
        seed_all(context.seed)
        again.setUp()
        attrs = dict(getattr(again, "attrs", {}) or {})
        # the test's own methods may set its attrs (Paddle's cumprod test loops over `dim`):
        # recorded only (no kernel runs), a change there is the test's, not a kernel's
        from harness.optest.methods import record_optest_arguments

        record_optest_arguments(again, type(test).__name__, context.seed)
        if _changed(attrs, dict(getattr(again, "attrs", {}) or {})):
            return None
    except Exception:  # noqa: BLE001
        return None
    return attrs if attrs.keys() == dict(case.attrs or {}).keys() else None


def _changed(before: dict, after: dict):
    for k in sorted(set(before) | set(after)):
        if k not in after or k not in before or not deep_equal(before[k], after[k]):
            return k, before.get(k, "<absent>"), after.get(k, "<absent>")
    return None


def _edited(case, combo, fresh, seed):
    """Run the case (forward, then backward) on `combo`: None, or (which attr a kernel
    edited in place -- before and after, and which kernel --, WrongValue)."""
    if fresh is not None:
        earlier = _changed(fresh, dict(case.attrs or {}))
        if earlier:
            k, was, now = earlier
            return (f"attr '{k}' of the case is {fmt_value(now)} after earlier runs in this "
                    f"process; the test set it to {fmt_value(was)}: a kernel edits its "
                    "attributes in place", WrongValue)
    given = attr_snapshot(fresh if fresh is not None else dict(case.attrs or {}))
    p = prepare(replace(case, attrs=given), combo)
    snapshot = attr_snapshot(dict(p.held_attrs()))
    given_snapshot = attr_snapshot(given)
    grad_ops = p.grad_ops(tuple(case.no_grad_set or ())) \
        if case.grad_inputs and has_grad(case.op_type) and cannot("grad_ops") is None \
        else []
    grad_snapshots = [attr_snapshot(dict(g.attrs)) for g in grad_ops]
    backward = functools.partial(run_forward_backward, p, case, seed=seed, run_forward=False)
    for kernel, run in (("the forward kernel", p.forward), ("the grad kernels", backward)):
        run()
        pairs = [("the op's", snapshot, dict(p.held_attrs())),
                 ("the caller's attrs dict:", given_snapshot, given)]
        pairs += [(f"grad op '{g.type}':", snap, dict(g.attrs))
                  for g, snap in zip(grad_ops, grad_snapshots)]
        for who, before, after in pairs:
            diff = _changed(before, after)
            if diff:
                k, was, now = diff
                return (f"{who} attr '{k}' was {fmt_value(was)} and is {fmt_value(now)} after "
                        f"{kernel} ran: a kernel edits its attributes in place", WrongValue)
    return None


class AttrsCheck(Check):
    name = "attrs"
    description = ("the op's attributes (lists included) are identical after a run; other "
                   "attr values (flipped bools, other axis spellings) give correct results")
    order = 175
    variants = ("case", "attr_values")

    def verdict(self, derived, context):
        if derived.variant == "attr_values":
            return self._other_value(derived, context)

        fresh = fresh_attrs(derived.base, context) if derived.variant == "case" else None
        # the run under test is the op's own; what it is compared with is its attrs before
        return self.compare_each(
            derived, context,
            variant=lambda combo: _edited(derived.case, combo, fresh, context.seed),
            compare=lambda _, problem, combo: problem,
            raised_prefix="the op raised before the check could finish: ")

    def _other_value(self, derived, context):
        """The case with one attr at another accepted value (harness.inputs.variants.attr_values):
        outputs against the test's reference(), gradients analytic against numeric, on CPU
        in float64 (float32 without a float64 kernel)."""
        case = derived.case
        dtype = numeric_dtype(case)
        dtypes = (dtype,) if dtype else None
        repro = self.reproduce(derived.base)
        expected = None
        if case.reference is not None:
            try:
                expected = case.reference(case.inputs, case.attrs) or None
            except Exception:  # noqa: BLE001 - the reference does not define this value
                pass
        if expected and not derived.info.get("same_meaning") and \
                not _reference_reads(derived.base, expected):
            # reference() gives the same outputs for the other value: it does not read this
            # attr (a test whose reference hard-codes the one value it uses), or the value
            # changes nothing on these inputs. Either way it cannot judge the op's outputs:
            # judging them would fail a correct op. The gradients are still judged.
            expected = None
        case = replace(case, outputs=expected or {}, reference=None)
        results = (case_outputs(case, ("CPU",), dtypes) if expected and normalize_slots(expected)
                   else [])
        judged_outputs = any(r.check == "output" for r in results)
        if case.grad_inputs and derived.info.get("grads", True) and \
                not (judged_outputs and derived.info.get("kind") == "bool") and \
                not (case.options or {}).get("user_defined_grads") and case.grad_outputs:
            results += case_grads(case, seed=context.seed, dtypes=dtypes, screen=True)
        out = []
        for r in results:
            combo = Combo(r.place or "CPU", r.dtype)
            if r.status == FAIL:
                what = told_failure(r, "outputs against reference()")
                out.append(self.failed(derived, combo, what, kind=WrongValue, repro=repro))
            elif r.status == "pass":
                out.append(self.passed(derived, combo))
        return out


def _reference_reads(base, expected) -> bool:
    """Whether the test's reference() gives other outputs for the base case's attrs than
    `expected` (its outputs for the other attr value); True when that cannot be told."""
    try:
        before = base.reference(base.inputs, base.attrs)
    except Exception:  # noqa: BLE001 - unknown: judge as before
        return True
    return not same_value(before, expected)


CHECK = AttrsCheck()
