"""`explore`: cases derived from each OpTest case inside the op's declared domains (attr
values, input values, shapes, then values drawn by hypothesis), judged against the test's
`reference(inputs, attrs)` NaN-aware, or, without one, setUp re-run under other numpy seeds.
What is derived, the verdicts and the budget: docs/harness.md, "Exploring the declared
contract"."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness import options
from harness.backend import dispatch as backends
from harness.backend.case import as_value, case_from_test, map_inputs, normalize_slots, output_structure
from harness.checks.base import Check, KernelRaised, RawException, WrongValue
from harness.judging.compare import compare
from harness.judging.compare import same_value as _same
from harness.backend.context import Combo, has_float_inputs, op_refused, output_slots, prepare
from harness.selecting.discovery import instantiate
from harness.judging.grad_judge import case_grads, first_gradient_failure, numeric_dtype, told_failure
from harness.inputs.explore import Explored, derive_cases, value_strategy
from harness.inputs.strategies import falsify
from harness.inputs.variants.attr_values import gradients_defined
from harness.reporting.messages import raised
from harness.backend.seam import compile_shapes, proto_of
from harness.optest.methods import run_optest_methods
from harness.options import DEFAULT_EXPLORE, DEFAULT_SEED
from harness.reporting.report import FAIL
from harness.optest.reproduce import takes_inputs_and_attrs, format_optest, shown_optest
from harness.reporting.values import fmt_value
from opkit.framework import errors
from opkit.framework.dtypes import low_precision_of

DEFAULT_BUDGET = DEFAULT_EXPLORE   # derived cases per OpTest case (opkit test --explore N)
GRAD_BUDGET = 3         # of those, how many also get a gradient check
GENERATED = 4           # then, cases drawn by hypothesis over the declared domains (shrunk)
SCREEN_BLOCKS = 4       # blocks per random direction of that gradient screen (fast mode: 16)
MAX_CAUSES = 3          # distinct failure causes reported per OpTest case (_cause)
RESEEDS = 1             # without reference(): setUp re-run under this many other seeds
                        # (one more per 32 of budget: --explore 64 gives 3)


def budget() -> int:
    """The run's budget (--explore N, or OPKIT_EXPLORE: harness.options)."""
    return options.current().explore


def _run_dtype(case) -> str:
    if not has_float_inputs(case):
        return ""
    cpu = backends.declared().kernel_places(case.op_type).get("CPU", ())
    low = low_precision_of(case.inputs)
    if low and low in cpu:
        return low   # a float16 / bfloat16 case runs its own dtype's kernel (its values
                     # at that dtype's range: harness.inputs.explore)
    return numeric_dtype(case) or ""


def _compile_refuses(case) -> bool:
    """Whether compile-time infer_shape refuses the case (an opkit error)."""
    try:
        compile_shapes(case, normalize_slots(case.inputs), output_slots(case, case.op_type), {})
    except Exception as exc:  # noqa: BLE001
        return op_refused(exc)
    return False


def _describe(ex: Explored, case) -> str:
    changed = ", ".join(f"{k}={fmt_value(v)}" for k, v in ex.attrs.items()
                        if (case.attrs or {}).get(k, object()) != v)
    return f"{ex.note}; drawn attrs {changed}" if changed else ex.note


class ExploreCheck(Check):
    name = "explore"
    description = ("derived cases across the declared domains: every attr's values (pairs "
                   "too), NaN/inf/-0.0/halves/negatives/ties/integer extremes, 0-D, size-1 "
                   "and other ranks, judged against reference() (NaN-aware)")
    order = 185

    def applies(self, case, context):
        if budget() == 0:
            return "exploration is off (--explore 0)"
        if getattr(context, "generated", False):
            return "a generated case (fuzz explores its own)"
        proto = proto_of(case.op_type)
        if proto is not None and any(a.name == "seed" for a in proto.attrs):
            return "a random op: derived cases draw other random numbers (see distribution)"
        return None

    def verdict(self, derived, context):
        case = derived.case
        seed = context.seed
        ref = case.reference
        if ref is None or not takes_inputs_and_attrs(ref):
            return self._reseeded(derived, context, seed)
        self._seed = seed
        found, grads_left, judged = None, GRAD_BUDGET, 0
        combo = Combo("CPU", _run_dtype(case))
        own, error = _reference(case, case.inputs, case.attrs or {})
        if not isinstance(own, dict) or not own:
            return [self.skipped(case, "reference() does not compute the case's own inputs "
                                       f"({type(error or own).__name__}): it cannot judge "
                                       "derived cases")]
        failures, causes = [], set()
        for ex in derive_cases(case, seed):
            # after a failure the rest is judged quietly (no reproducer) until another cause
            wg = grads_left > 0 and ex.grads
            verdict = self._judge(derived, ex, combo, seed, wg, quiet=bool(failures))
            if verdict is None:
                continue
            judged += 1
            if verdict == "grads":          # ok, gradients judged
                grads_left -= 1
            if isinstance(verdict, str):
                continue
            if verdict.status != "unconfirmed":
                cause = _cause(ex, verdict)
                if cause not in causes:     # one failure per distinct cause: a refused attr
                    causes.add(cause)       # value does not hide a NaN
                    again = self._judge(derived, ex, combo, seed, wg) if failures else None
                    failures.append(again if hasattr(again, "status") else verdict)
                if len(failures) >= MAX_CAUSES:
                    break
                continue
            found = found or verdict     # harness.judging.unconfirmed: keep exploring; the first is said
        results = failures or ([found] if found else [])
        if not any(r.status == "fail" for r in results):
            drawn = self._drawn(derived, combo, seed)
            if drawn is not None:
                results = [drawn]
        if not results:
            results.append(self.passed(derived, combo, f"{judged} derived cases agree with "
                                                       "reference()"))
        return results

    # -- drawn cases (hypothesis): a failure shrinks --------------------------------------
    def _drawn(self, derived, combo, seed):
        """The failure of the simplest drawn value case hypothesis shrinks to (a
        CheckResult), or None when the GENERATED drawn cases pass."""
        strategy = value_strategy(derived.case)
        if strategy is None:
            return None

        def fails(ex):
            verdict = self._judge(derived, ex, combo, seed, False, quiet=True)
            return None if verdict is None else not isinstance(verdict, str) and \
                verdict.status == "fail"

        from hypothesis.errors import Flaky, Unsatisfiable

        try:
            found = falsify(fails, seed, GENERATED, ex=strategy)
        except (Unsatisfiable, Flaky):   # every draw rejected, or an op that is not repeatable
            return None
        if found is None:
            return None
        verdict = self._judge(derived, found["ex"], combo, seed, False)   # with its reproducer
        return verdict if not isinstance(verdict, str) and verdict is not None else None

    # -- one derived case ------------------------------------------------------------------
    def _judge(self, derived, ex: Explored, combo, seed, with_grads, quiet=False):
        """None (not judged), "ok", "grads" (ok, gradients judged) or a failed CheckResult
        (quiet: without the reproducer, re-run in a fresh process, while shrinking)."""
        self._quiet = quiet
        case = derived.case
        expected, ref_error = _reference(case, ex.inputs, ex.attrs)
        if ref_error is None and (not isinstance(expected, dict) or not expected):
            return None
        if ref_error is None and output_structure(expected) != output_structure(case.outputs):
            return None      # the attr changes the outputs' structure (split's num, ...)
        if ref_error is not None and (ex.kind != "value" or ex.info.get("generated")):
            return None      # the reference does not take this shape or attr value (one
                             # written for the values the test uses), or a drawn value:
                             # nothing judges it
        new = replace(case, inputs=ex.inputs, attrs=ex.attrs,
                      outputs=expected if ref_error is None else {}, reference=None,
                      name=f"{case.name}[explore]")
        if ex.kind == "shape" and _compile_refuses(new):
            return None      # infer_shape does not accept this rank: not in the contract
        try:
            got = _run(new, combo, seed)
            op_error = None
        except Exception as exc:  # noqa: BLE001
            got, op_error = None, exc
        what = _describe(ex, case)
        if ref_error is not None:
            if op_error is None:
                return self._fail(derived, combo, ex, new, f"{what}: reference() raises "
                                  f"{type(ref_error).__name__}: {_first(ref_error)}, so the "
                                  "input is invalid, but the op computed a result instead of "
                                  "refusing it with an opkit error", kind=WrongValue)
            if op_refused(op_error):
                return "ok"
            result = self._fail(derived, combo, ex, new, f"{what}: reference() raises "
                                f"{type(ref_error).__name__}; the op must refuse the input "
                                f"with an opkit error, it raised {raised(op_error)}",
                                kind=RawException)
            from harness.judging.unconfirmed import undeclared_invalid

            return undeclared_invalid(case, ex, result)
        if op_error is not None:
            if op_refused(op_error):
                if ex.kind != "value" and _compile_refuses(new):
                    return None   # infer_shape refuses the attr value for these inputs
                if ex.in_domain and ex.strict:
                    return self._fail(derived, combo, ex, new, f"{what}: the op refuses an "
                                      "input inside its declared domains that reference() "
                                      f"computes: {_first(op_error)}", kind=KernelRaised)
                return None
            if (ex.info.get("other_rank") or ex.info.get("lax")) and \
                    not isinstance(op_error, errors.KernelContractError):
                return None   # infer_shape of many ops does not check the rank: a kernel
                              # written for the case's rank that raises a raw error on
                              # another is not judged (wrong values there are, and outputs
                              # other than infer_shape promised)
            return self._fail(derived, combo, ex, new, f"{what}: the op raised "
                              f"{raised(op_error)} where reference() computes a result",
                              kind=KernelRaised)
        problem = _compare(case, expected, got, combo.dtype)
        if problem:
            if ex.kind in ("attr", "pair", "attr+value") and \
                    not _reference_reads(case, ex, expected):
                return None   # reference() ignores the attr here: it cannot judge the op
            from harness.judging.unconfirmed import (confirm_nonfinite, confirm_reference_domain,
                                         confirm_stacked)

            def rerun(inputs):
                return _run(replace(new, inputs=inputs), combo, seed)

            judged = confirm_reference_domain(self, derived, combo, ex, problem, expected, got) \
                or confirm_stacked(self, derived, combo, ex, problem, got, rerun) \
                or confirm_nonfinite(self, derived, combo, ex, new, what, problem, expected,
                                     got, rerun)
            if judged is not None:
                return judged
            return self._fail(derived, combo, ex, new, f"{what}: {problem}", kind=WrongValue,
                              confirm_check="output")
        if with_grads and case.grad_inputs and _finite_inputs(ex.inputs):
            return self._grads(derived, ex, new, combo, seed) or "grads"
        return "ok"

    def _grads(self, derived, ex, new, combo, seed):
        case = derived.case
        opts = case.options or {}
        if opts.get("user_defined_grads") or not case.grad_outputs or combo.dtype != "float64":
            return None
        if not _dense_gradients(new, combo):
            return None   # no dense gradient for these attrs (is_sparse, is_test)
        try:
            # few blocks per direction: a derived case's wrong gradient is rarely one
            # element among many
            got = case_grads(new, seed=seed, screen=True, fast_blocks=SCREEN_BLOCKS)
        except Exception:  # noqa: BLE001 - the gradient check cannot run here
            return None
        msg = first_gradient_failure(got)
        if msg is None:
            return None
        return self._fail(derived, combo, ex, new, f"{_describe(ex, case)}: gradients, "
                          f"analytic against numeric: {msg}", kind=WrongValue,
                          confirm_check="grad")

    def _fail(self, derived, combo, ex, new, message, kind, confirm_check=None):
        text = message if getattr(self, "_quiet", False) else message + "\n" + _reproducer(
            derived.case, new, confirm_check, getattr(self, "_seed", DEFAULT_SEED))
        return self.failed(derived, combo, text, kind=kind,
                           repro=self.reproduce(derived.base))

    # -- without reference() ---------------------------------------------------------------
    def _reseeded(self, derived, context, seed):
        test = getattr(context, "test", None)
        case = derived.case
        if test is None or getattr(test, "op_type", None) != case.op_type:
            return [self.skipped(case, "no reference(inputs, attrs) and no OpTest to set up "
                                       "again: nothing judges derived cases")]
        dtype = _run_dtype(case)
        judged = 0
        for k in range(1, RESEEDS + budget() // 32 + 1):
            s = seed + 7919 * k
            try:
                again = instantiate(type(test), s)
                new = case_from_test(again)
            except Exception:  # noqa: BLE001 - setUp does not run again
                break
            if _same_inputs(new.inputs, case.inputs):
                return [self.skipped(case, "no reference(inputs, attrs), and setUp draws the "
                                           "same values under other numpy seeds")]
            bad = [r for r in run_optest_methods(again, case.name, s)
                   if r.check in ("output", "grad") and r.status == FAIL]
            judged += 1
            if bad:
                what = told_failure(bad[0], "outputs against the test's own expectation")
                return [self.failed(derived, Combo("CPU", dtype), f"setUp re-run under numpy "
                                    f"seed {s} (new values): {what}", kind=WrongValue)]
        if not judged:
            return [self.skipped(case, "no reference(inputs, attrs), and setUp could not run "
                                       "again")]
        return [self.passed(derived, Combo("CPU", dtype),
                            f"no reference(): setUp re-run under {judged} other numpy seeds "
                            "agrees with itself")]


# -- helpers --------------------------------------------------------------------------------
def _reference(case, inputs, attrs):
    """(outputs, None) of reference() on copies of `inputs`, numpy's warnings off, or (None,
    the exception it raised)."""
    try:
        copies = map_inputs(inputs, lambda s: as_value(
            s, s.data.copy() if isinstance(s.data, np.ndarray) else s.data))
        with np.errstate(all="ignore"):
            return case.reference(copies, dict(attrs)), None
    except Exception as exc:  # noqa: BLE001
        return None, exc


def _cause(ex: Explored, result) -> tuple:
    """What a failure is about: its kind (wrong value, raw error, refusal, ...), what was
    derived (attrs, values, shapes) and whether NaN or inf is involved."""
    nonfinite = any(w in ex.note for w in ("NaN", "inf")) or "NaN" in result.message[:300]
    return result.kind, "attr" if ex.kind in ("pair", "attr+value") else ex.kind, nonfinite


def _first(exc) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def _run(case, combo, seed) -> dict:
    p = prepare(case, combo)
    with np.errstate(all="ignore"):
        p.forward()
    return {n: p.array(n) for n in p.output_names()}


def _compare(case, expected, got, dtype) -> str | None:
    opts = case.options or {}
    skip = set(case.no_check_set or ()) | set(opts.get("no_check_set") or ())
    for slot, specs in normalize_slots(expected).items():
        if slot in skip:
            continue
        for s in specs:
            if s.name in skip or not isinstance(s.data, np.ndarray) or got.get(s.name) is None:
                continue
            want, have = np.asarray(s.data), np.asarray(got[s.name])
            if want.dtype.kind == "f" and have.dtype.kind == "f" and want.dtype != have.dtype \
                    and dtype:
                want = want.astype(have.dtype)
            exact = want.dtype.kind == "b" and have.dtype.kind == "b" or \
                want.dtype.kind in "iu" and have.dtype.kind in "iu"
            if exact and want.shape == have.shape and np.array_equal(want, have):
                continue
            msg, _ = compare(s.name, have, want, dtype or want.dtype.name, opts.get("atol"),
                             opts.get("rtol"), True)
            if msg:
                return msg + _nan_note(have, want)
    return None


def _nan_note(have, want) -> str:
    if have.dtype.kind != "f" or want.dtype.kind != "f" or have.shape != want.shape:
        return ""
    with np.errstate(invalid="ignore"):
        lost = np.isnan(want) & ~np.isnan(have)
        made = np.isnan(have) & ~np.isnan(want)
    if lost.any():
        return f" (reference() has NaN at {int(lost.sum())} element(s) where the op does not: " \
               "NaN dropped)"
    if made.any():
        return f" (the op gives NaN at {int(made.sum())} element(s) where reference() does not)"
    return ""


def _reference_reads(case, ex, expected) -> bool:
    """Whether reference() reads every attr the derived case changed: with that attr at the
    case's value or at another derived value, it gives other outputs on the same inputs
    (else it ignores that attr -- a reference written for the one value the test uses --
    and cannot judge the op's outputs for it)."""
    proto = proto_of(case.op_type)
    base = dict(case.attrs or {})
    for k, v in ex.attrs.items():
        old = base[k] if k in base else getattr(proto.attr(k) if proto else None,
                                                 "default", None)
        if k in base and base[k] == v or old is None or old == v:
            continue
        tries = [old] + [x for x in ex.info.get("alts", {}).get(k, []) if x != v][:3]
        for value in tries:
            other, error = _reference(case, ex.inputs, {**ex.attrs, k: value})
            if error is None and not _same(other, expected):
                break       # it reads k
        else:
            return False
    return True


def _dense_gradients(case, combo) -> bool:
    """harness.inputs.variants.attr_values.gradients_defined, after a forward run."""
    try:
        p = prepare(case, combo)
        p.forward()
    except Exception as exc:  # noqa: BLE001
        return not op_refused(exc)
    return gradients_defined(p, case)


def _finite_inputs(inputs) -> bool:
    return all(np.all(np.isfinite(s.data)) for items in normalize_slots(inputs).values()
               for s in items if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f")


def _same_inputs(a, b) -> bool:
    try:
        xa, xb = ({k: [s.data for s in v] for k, v in normalize_slots(x).items()}
                  for x in (a, b))
        return _same(xa, xb)
    except Exception:  # noqa: BLE001
        return False


def _reproducer(base, new, check, seed) -> str:
    """A ready-to-paste OpTest of the derived case (confirmed in a fresh process when the
    failure is a wrong output or gradient)."""
    case = replace(new, name=base.name, grad_inputs=list(base.grad_inputs) if check == "grad"
                   else [], grad_outputs=list(base.grad_outputs))
    cls = "".join(ch for ch in base.name.split("[")[0].split("::")[-1]
                  if ch.isalnum() or ch == "_") or "TestExplore"
    try:
        text = format_optest(case, cls).replace("self.check_output()",
                                                "self.check_output(equal_nan=True)")
    except Exception:  # noqa: BLE001
        return ""
    note = ("# (a case the op must compute: reference() gives these outputs; run it to see the "
            "op raise or refuse it)" if new.outputs else
            "# (a case the op must refuse: run it to see the op compute or raise)")
    if check is not None:
        from harness.backend.context import grad_op_types
        from harness.optest.reproduce import NOT_REPRODUCED, confirm

        again = confirm([case.op_type] + grad_op_types(case), text, f"{cls}Minimal", check,
                        seed)
        note = {True: "# re-run in a fresh process before printing: it fails there too",
                False: f"# {NOT_REPRODUCED}",
                None: "# (could not be re-run in a fresh process)"}[again]
    return f"minimal case:\n{shown_optest(case, cls, text)}{note}"


CHECK = ExploreCheck()
