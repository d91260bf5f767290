"""The checks on Paddle's kernels: which apply as they are, which cannot (and why), and the
Paddle backend's own way to make three findings (`mutation`, `dtypes`, `describe`).

Every check not named in `CANNOT_APPLY` or `REPLACED` runs unchanged through the seam
(harness.backend.seam.make): output, grad, determinism, lod, empty, extremal, kinks,
repeated_input, infer_shape, precision, ownership, attrs, state, grad_outputs,
distribution, explore, double_grad (a grad op run on its own: opkit_paddle.backend.grad_op),
concurrency (threads each with its own op, scope and executor; Paddle's kernels run at once,
without opkit's line-by-line lockstep, which needs kernel hooks).
"""
from __future__ import annotations

from opkit_paddle.backend import env as paddle_env
from harness.backend.case import attr_float_dtype
from harness.checks.base import Check, InputWritten, MissingKernel, WrongShape
from harness.backend.context import has_float_inputs
from harness.reporting.messages import raised
from harness.backend.seam import has_grad, prepare, refusal, run_forward_backward

__all__ = ["CANNOT_APPLY", "REPLACED", "override", "MutationReadBack", "PaddleDtypes",
           "PaddleDescribe"]

_HOOKS = ("it watches each kernel call through opkit's kernel hooks; Paddle's executor "
          "has none")
CANNOT_APPLY = {
    "aliasing": _HOOKS + " (and fetched outputs are copies, so no output can alias a feed)",
    "no_need_buffer": _HOOKS,
    "declared_inputs": _HOOKS,
    "inplace": "it runs opkit's executor with its inplace pass on; Paddle's inplace pass "
               "is not reachable through a one-op program",
    "layout": "Paddle's feed copies every input into a contiguous tensor, so a "
              "non-contiguous input never reaches the kernel",
    "places": "the Paddle backend runs Paddle's CPU kernels only",
    "sbp": "SBP signatures are opkit declarations; Paddle's ops declare none",
    "plan": "it checks opkit's executor's prepared-plan path",
    "sparse": "the Paddle backend feeds dense tensors only (no SelectedRows)",
}


def override(name: str):
    if name in CANNOT_APPLY:
        return f"cannot apply to Paddle's kernels: {CANNOT_APPLY[name]}"
    if name in REPLACED:
        return REPLACED[name]
    return None


class MutationReadBack(Check):
    """`mutation` on Paddle's kernels: every input fetched back after the forward and the
    backward run must equal (bytes and LoD) what was fed."""

    name = "mutation"
    description = "no kernel wrote to its inputs (fed inputs read back after the run)"
    order = 40
    needs_float = False

    def verdict(self, derived, context):
        case = derived.case
        runnable, skips = self.plan(derived, context)
        yield from skips
        for combo in runnable:
            try:
                p = prepare(case, combo)
                p.read_back = True
                p.forward()
                seen = [("forward", n, w) for n, w in p.mutated]
                if has_grad(case.op_type) and case.grad_inputs:
                    run_forward_backward(p, case, seed=context.seed, run_forward=False)
                    seen += [("backward", n, w) for n, w in p.mutated]
            except Exception as exc:  # noqa: BLE001 - the op failing is output's finding
                why = refusal(exc)
                yield self.skipped(case, f"the op raised ({why or raised(exc)}): see output",
                                   combo)
                continue
            if seen:
                where, name, what = seen[0]
                yield self.failed(derived, combo, f"the {where} run of Paddle's "
                                  f"'{case.op_type}' changed {what} of input '{name}'",
                                  kind=InputWritten)
            else:
                yield self.passed(derived, combo)


class PaddleDtypes(Check):
    """`dtypes` on Paddle: CPU float32 and float64 kernels for the op and its grad op."""

    name = "dtypes"
    description = "Paddle registers float32 and float64 CPU kernels for the op and grad op"
    order = 30
    scope = "op"
    needs_float = False     # a float input, or a dtype attr picking the float kernel

    def applies(self, case, context):
        if not has_float_inputs(case) and attr_float_dtype(case) is None:
            return "the case has no float input and no float dtype attr"
        return None

    def verdict(self, derived, context):
        case = derived.case
        types = [case.op_type]
        if has_grad(case.op_type):
            types.append(case.op_type + "_grad")
        missing = []
        for t in types:
            have = paddle_env.cpu_kernel_dtypes(t)
            if not paddle_env.listed(t):
                continue        # kernels registered under another name: output and grad
                                # run the op in both dtypes and say so if one is missing
            missing += [f"{t} {d}" for d in ("float32", "float64") if d not in have]
        if missing:
            yield self.failed(derived, None, "Paddle registers no CPU kernel for "
                              + ", ".join(missing), kind=MissingKernel)
        else:
            yield self.passed(derived, None, ", ".join(types) + ": float32 and float64")


class PaddleDescribe(Check):
    """`describe` on Paddle's kernels: the dtype and shape Paddle's compile-time infer_shape
    (InferMeta) writes into the backend's one-op program equal the tensor the kernel gives.
    0-D and [1] are one shape here (the Fluid 1.8 bridge); lod_level is not judged."""

    name = "describe"
    description = "Paddle's compile-time dtype and shape of every output == the kernel's"
    order = 151

    def verdict(self, derived, context):
        import numpy as np

        from harness.checks.laws import shared as laws
        from harness.backend.case import normalize_slots

        case = derived.case
        combo = laws.numeric_combo(case)
        try:
            p = prepare(case, combo)
            with np.errstate(all="ignore"):
                p.forward()
        except Exception as exc:  # noqa: BLE001 - the op failing is output's finding
            yield self.skipped(case, f"the op raised ({refusal(exc) or raised(exc)}): see "
                                     "output", combo)
            return
        judged = 0
        # with LoD inputs compile time cannot know the rows (they count sequences): dtype only
        lod = any(s.lengths for ss in normalize_slots(case.inputs).values() for s in ss)
        # nor the values of a tensor that stands in for an attr (ShapeTensor, reshape2's
        # Shape): compile time has the attr, the kernel the tensor's values
        lod = lod or any(k in ("Shape", "OutSize") or k.endswith(("Tensor", "TensorList"))
                         for k in case.inputs)
        for name in p.output_names():
            desc, arr = p.var_desc(name), p.array(name)
            if desc is None or arr is None or name.endswith("XShape"):
                continue
            judged += 1
            problem = _described(desc if not lod else (None,) + tuple(desc[1:]),
                                 np.asarray(arr))
            if problem:
                yield self.failed(derived, combo, f"output {name}: {problem}", kind=WrongShape)
                return
        if judged:
            yield self.passed(derived, combo, f"{judged} outputs as described")
        else:
            yield self.skipped(case, "no output with a compile-time description", combo)


def _described(desc, arr) -> str | None:
    import numpy as np

    shape, dtype, _ = desc
    try:
        want = np.dtype(dtype).name
    except TypeError:
        want = None      # a dtype numpy does not name
    if want == "bfloat16":
        want = None      # fetched as uint16 or float32 by Paddle's Python layer
    if want == "bool":
        want = None      # the dtype of a VarDesc no one set (the backend creates outputs
                         # without one; a legacy op without dtype inference leaves it)
    if want is not None and arr.size and want != arr.dtype.name:
        return (f"Paddle's compile-time infer_shape describes it as {want}, the kernel "
                f"produces {arr.dtype.name}")
    run = list(arr.shape)
    if shape is not None and not list(shape) and arr.size != 1:
        return None      # [] for an output infer_shape leaves undeclared (batch_norm's
                         # SavedMean with is_test): nothing described
    if shape is not None and [d for d in shape if d != 1] != [d for d in run if d != 1] \
            and not (len(shape) == len(run) and all(c < 0 or c == r
                                                     for c, r in zip(shape, run))):
        return (f"Paddle's compile-time infer_shape describes shape {list(shape)}, the kernel "
                f"produces {run} (every input dim known)")
    return None


REPLACED = {"mutation": MutationReadBack(), "dtypes": PaddleDtypes(),
            "describe": PaddleDescribe()}
