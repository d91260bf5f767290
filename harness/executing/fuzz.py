"""`opkit test OP --fuzz N`: property-based cases drawn with hypothesis (docs/harness.md,
"Fuzzing": what is drawn, what is judged, what is rejected rather than failed)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
from hypothesis import strategies as st

from harness.backend import dispatch as backends
from harness.reporting.error_text import first_line
from harness.judging.grad_judge import check_case as grad_case
from harness.judging.output_judge import check_case as output_case
from harness.backend.case import Case, case_from_test, output_structure
from harness.backend.context import (CheckContext, Combo, grad_op_types, op_refused, prepare,
                             run_forward_backward)
from harness.selecting.discovery import instantiate, seed_all
from harness.inputs import strategies as hs
from harness.inputs.variants import derive
from harness.optest.methods import record_optest_arguments
from harness.options import DEFAULT_FUZZ, DEFAULT_SEED, selected_dtypes  # noqa: F401, I001 - DEFAULT_FUZZ re-exported
from harness.checks.catalog import get_check
from harness.reporting.report import FAIL, PASS, SKIP, CheckResult
from harness.optest.reproduce import (NOT_REPRODUCED, takes_inputs_and_attrs, confirm, format_optest,
                               shown_optest)
from harness.spec import knob  # noqa: I001

__all__ = ["fuzz_op", "fuzz_test", "format_optest"]

FUZZ_VARIANT_CHECKS = ("layout", "empty", "extremal")   # the variants applied to each case

                   # (`--fuzz 0`: none, `--fuzz N`: N); see docs/harness.md, "Fuzzing"
REJECT_LIMIT = 25  # draws refused in a row before a class's fuzzing gives up (skip, with why)


def _semantic_context(case: Case, context: CheckContext) -> CheckContext:
    """Where the op has a float64 CPU kernel: the context that judges a generated case's
    outputs and gradients against its reference in float64 only. The OpTest's float32
    tolerance was set for the author's case; a generated case can be worse conditioned
    (a batch with a large mean and a small spread), and there float32 is judged by
    `precision` instead: against the float64 kernel, within a bound from float32's epsilon
    and the case's own conditioning."""
    if "float64" in backends.declared().kernel_places(case.op_type).get("CPU", ()):
        return replace(context, dtypes=("float64",))
    return context


def _run_case_checks(case: Case, context: CheckContext, with_grad: bool) -> list[CheckResult]:
    semantic = _semantic_context(case, context)
    results = list(output_case(case, semantic))
    if with_grad:
        results += grad_case(case, semantic)
    results += get_check("mutation")(case, context)
    if not any(r.status == FAIL for r in results):
        for name in FUZZ_VARIANT_CHECKS + (("precision",) if semantic is not context else ()):
            results += get_check(name)(case, context)
    return results


def _op_refuses(case: Case) -> bool:
    """True when the op refuses the drawn case on purpose (a typed opkit error, not External):
    the case is rejected, not a failure. Typed, never a message search."""
    try:
        run_forward_backward(prepare(case, Combo("CPU", "")), case)
    except Exception as exc:  # noqa: BLE001
        return op_refused(exc)
    return False


def fuzz_test(cls, n: int, seed: int = DEFAULT_SEED, timeout=None) -> list[CheckResult]:
    """Fuzz one OpTest class: [a `fuzz` CheckResult]."""
    name = f"fuzz:{cls.__name__}"

    def result(status, message, place="", dtype="", kind=""):
        return [CheckResult("fuzz", status, place, dtype, name, message, kind=kind)]

    test = instantiate(cls, seed)
    reference = knob(test, "reference")
    if not callable(reference):
        return result(SKIP, f"{cls.__name__} defines no reference(inputs, attrs)")
    if not takes_inputs_and_attrs(reference):
        return result(SKIP, f"{cls.__name__}.reference does not take (inputs, attrs): it "
                            "cannot compute a generated case's outputs")
    # the test's own check_grad arguments (recorded by OpTest when its methods ran)
    record_optest_arguments(test, cls.__name__)
    base = case_from_test(test)
    with_grad = bool(base.grad_inputs)
    proto = backends.proto(test.op_type)
    # the Case's attrs: an OpTest need not set `self.attrs` (most of Paddle's do not)
    attrs_strategy = st.just(dict(base.attrs or {}))
    if proto is not None and proto.attrs:
        attrs_strategy = st.one_of(attrs_strategy, hs.attrs_for(proto, dict(base.attrs or {})))
    stats = {"ran": 0, "rejected": 0}
    last_failure: dict = {}
    # not the OpTest's user_defined_grads: arrays of its own shapes
    options = {k: v for k, v in (base.options or {}).items() if k != "user_defined_grads"}

    def fails(inputs, attrs):
        if stats["rejected"] >= REJECT_LIMIT and not stats["ran"]:
            return False     # the draws keep being rejected: give up (reported as skip below)
        try:
            outputs = reference(inputs, attrs)
        except Exception:
            stats["rejected"] += 1
            return None
        case = Case(name=name, op_type=test.op_type, inputs=inputs, attrs=attrs,
                    outputs=outputs, reference=reference, no_check_set=base.no_check_set,
                    grad_inputs=list(base.grad_inputs), grad_outputs=list(base.grad_outputs),
                    no_grad_set=base.no_grad_set, options=dict(options))
        # rejected, not failed: an attr draw that changes the case's outputs (split's
        # num/sections, ...), outside the OpTest's own case structure; or the op refuses it
        if output_structure(outputs) != output_structure(base.outputs) or _op_refuses(case):
            stats["rejected"] += 1
            return None
        context = CheckContext(seed=seed, places=("CPU",), timeout=None, generated=True)
        results = _run_case_checks(case, context, with_grad)
        failed = [r for r in results if r.status == FAIL]
        # a drawn point on a kink (relu at 0, clip at its bounds) is judged by the grad
        # check's one-sided test (harness.judging.one_sided): no filter here
        stats["ran"] += 1
        if failed:
            last_failure["case"], last_failure["results"] = case, failed
        return bool(failed)

    seed_all(seed)
    try:
        hs.falsify(fails, seed, n, inputs=hs.case_inputs(test.inputs),
                   attrs=attrs_strategy)
    except Exception as exc:  # hypothesis errors (Unsatisfiable, ...) or an unexpected one
        if "case" not in last_failure:
            text = first_line(str(exc))
            return result(SKIP if "Unsatisfiable" in type(exc).__name__ else FAIL,
                          f"{type(exc).__name__}: {text}")
    if "case" in last_failure:
        _cut(last_failure["case"], fails)
    what = f"a generated case (seed {seed})"
    if "case" not in last_failure and stats["ran"]:
        edge = _edge_cases(base, seed, with_grad)
        if edge is not None:
            last_failure["case"], last_failure["results"] = edge
            what = f"the {edge[0].name.split('[')[-1][:-1]} case cut out of the OpTest's inputs"
    if "case" in last_failure:
        case, failed = last_failure["case"], last_failure["results"]
        first = failed[0]
        text = format_optest(case, cls.__name__)
        again = confirm([case.op_type] + grad_op_types(case), text, f"{cls.__name__}Minimal",
                        first.check, seed, verifier="harness.executing.in_process:verify_reproducer")
        note = {True: "# re-run in a fresh process before printing: it fails there too",
                False: f"# {NOT_REPRODUCED}",
                None: "# (could not be re-run in a fresh process)"}[again]
        msg = (f"{first.check} failed on {what}: {first.message}\n"
               f"minimal case:\n{shown_optest(case, cls.__name__, text)}\n{note}")
        return result(FAIL, msg, first.place, first.dtype, first.kind)
    if not stats["ran"]:
        return result(SKIP, f"no generated case could run: {stats['rejected']} draws in a row "
                            "were refused by reference() (it raised, e.g. it does not take "
                            "LoD inputs), by the op (a typed error), or changed the case's "
                            "output structure")
    text = (f"{stats['ran']} generated cases passed output{', grad' if with_grad else ''}, "
            f"mutation, layout, empty, extremal and precision ({stats['rejected']} rejected)")
    judged = _semantic_context(base, CheckContext()).dtypes
    if not judged:
        return result(PASS, text, place="CPU")
    # values judged against reference() in float64 only: a pass of the other dtypes (their
    # precision against the float64 kernel) is no pass of their values (the table's `pass*`)
    others = [d for d in backends.declared().kernel_places(base.op_type).get("CPU", ()) if d not in judged
              and d in selected_dtypes()]
    values = "output values" + (", gradient values" if with_grad else "")
    return [CheckResult("fuzz", PASS, "CPU", d, name, text) for d in judged] + \
        [CheckResult("fuzz", PASS, "CPU", d, name, f"{text}; {values} judged against "
                     "reference() in float64 only", not_judged=values) for d in others]


CUT_TRIES = 8   # after hypothesis's shrinking: at most this many more runs cutting sizes


def _cut(case: Case, fails) -> None:
    """Shrink a failing case past what the strategy draws (each size within 2 of the
    test's): every axis of one size, in every dense input at once, cut to 1, 2 or half, kept
    when the case still fails (`fails` records the last failing case). LoD inputs are left
    as they are (their lengths hold the rows)."""
    if any(isinstance(v, (tuple, list)) for v in case.inputs.values()):
        return
    inputs, tries = dict(case.inputs), 0
    sizes = sorted({d for v in inputs.values() if isinstance(v, np.ndarray) for d in v.shape},
                   reverse=True)
    for size in sizes:
        for new in sorted({1, 2, size // 2}):
            if not 0 < new < size or tries >= CUT_TRIES:
                continue
            tries += 1
            cut = {slot: v[tuple(slice(0, new) if d == size else slice(None) for d in v.shape)]
                   if isinstance(v, np.ndarray) else v for slot, v in inputs.items()}
            if fails(cut, dict(case.attrs or {})):
                inputs = cut
                break


def _edge_cases(base: Case, seed: int, with_grad: bool):
    """The OpTest's case cut to edge shapes (harness.inputs.variants.shapes: a batch of 1 and odd
    sizes; a size-1 broadcast dim), judged in float64 against reference(): outputs, and
    gradients when the OpTest checks them. (case, failed results) of the first failure, or
    None. Run after the random draws passed, whatever N is."""
    context = CheckContext(seed=seed, places=("CPU",), timeout=None, generated=True)
    got = derive("edge_shapes", base, context)
    for d in (got if isinstance(got, list) else []):
        case = replace(d.case, source="")
        if _op_refuses(case):
            continue
        semantic = _semantic_context(case, context)
        results = list(output_case(case, semantic))
        if with_grad and not any(r.status == FAIL for r in results):
            results += grad_case(case, semantic)
        failed = [r for r in results if r.status == FAIL]
        if failed:
            failed[0].message = f"{d.note}: {failed[0].message}"
            return case, failed
    return None


def fuzz_op(op_type: str, classes, n: int, seed: int = DEFAULT_SEED, timeout=None) -> list:
    """Fuzz every OpTest class of an op (the first one that has a reference, and each after
    it): a list of `fuzz` CheckResults."""
    results = []
    for cls in classes:
        try:
            results.extend(fuzz_test(cls, n, seed, timeout))
        except Exception as exc:  # noqa: BLE001 - one class's setUp costs only that class
            first = first_line(str(exc))
            results.append(CheckResult(
                "fuzz", SKIP, "", "", f"fuzz:{cls.__name__}",
                f"{cls.__name__} cannot be set up ({type(exc).__name__}: {first}): nothing "
                "to fuzz (its own checks report the error)"))
    if not results:
        results.append(CheckResult("fuzz", SKIP, "", "", f"fuzz:{op_type}", "no OpTest"))
    return results
