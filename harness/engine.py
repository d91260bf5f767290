"""THE engine every check runs an op through: prepare, run forward and backward, and tell
"the op refused" from "the kernel failed".

- `prepare(case, combo)`: a PreparedOp (harness.runner) of the case on a place and float
  dtype, fed fresh copies of the inputs (or the `inputs` given). The output slots are the
  expected ones plus every non-duplicable, non-dispensable output of the proto.
- `run_forward_backward(prepared, case)`: forward and, when the case differentiates (or
  `wrt` names variables) and the op has a gradient, backward with a seeded cotangent (or the
  `cot` given): {name: array, 'X@GRAD': array}.
- `op_refused(exc)` / `refusal(exc)`: the ONE decision whether an exception is the op
  refusing its inputs on purpose: a typed opkit error (`opkit.framework.errors`), not
  `External` (a raw numpy/Python error wrapped) and not a `KernelContractError` (the
  framework catching a kernel that broke its declared contract). Types only: no message
  search, no stack-frame names.
- `raised(exc)` / `describe_error(exc)`: one line naming the error and the kernel line.
"""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass

import numpy as np

from harness.options import DEFAULT_SEED
from harness.runner import PreparedOp, VarSpec, cast_floats, make_cotangents, normalize_slots
from opkit.framework.grad_maker import grad_var_name

__all__ = ["Combo", "place_object", "gpu_unavailable_reason", "output_slots", "case_inputs",
           "prepare", "has_grad", "grad_wrt", "grad_outputs", "run_forward_backward",
           "op_refused", "refusal", "raised", "describe_error", "user_line", "rel"]


@dataclass
class Combo:
    place: str          # "CPU" | "GPU"
    dtype: str          # "float32" | "float64" | "" (a case without float inputs)


def place_object(kind: str):
    from opkit.framework.place import CPUPlace, CUDAPlace

    return CPUPlace() if kind == "CPU" else CUDAPlace(0)


def gpu_unavailable_reason() -> str | None:
    """Why the GPU place cannot run here (None: it can)."""
    from harness.settings import place_unavailable_reason

    return place_unavailable_reason("GPU")


# -- preparing ----------------------------------------------------------------------------
def output_slots(case, op_type: str | None = None, expected: dict | None = None) -> dict:
    """{slot: [names]}: the expected outputs (default: the case's) plus every output the
    proto declares that is neither duplicable nor dispensable (an optional output the case
    does not name is not asked for)."""
    from opkit.registry import op_info

    if expected is None:
        expected = normalize_slots(case.outputs)
    slots = {slot: [s.name for s in specs] for slot, specs in expected.items()}
    proto = op_info(op_type or case.op_type).proto
    if proto is not None:
        for vp in proto.outputs:
            if vp.name not in slots and not vp.duplicable and not vp.dispensable:
                slots[vp.name] = [vp.name]
    return slots


def case_inputs(case, dtype: str) -> dict:
    """The case's inputs as VarSpecs: float arrays cast to `dtype`; always fresh copies
    (`cast_floats`' casts are copies already: only the arrays it passed through are copied)."""
    given = normalize_slots(case.inputs)
    cast = cast_floats(given, dtype) if dtype else given
    return {slot: [VarSpec(c.name, c.data.copy() if isinstance(c.data, np.ndarray) and
                           c.data is g.data else c.data, c.lengths)
                   for c, g in zip(items, given[slot])] for slot, items in cast.items()}


def prepare(case, combo: Combo, enable_inplace: bool = False, expected: dict | None = None,
            inputs: dict | None = None) -> PreparedOp:
    """A PreparedOp of the case on the combo's place and dtype, fed with fresh copies of the
    case's inputs (or with `inputs`, {slot: [VarSpec]}, as given)."""
    from harness.backends import make_op

    return make_op(case.op_type, inputs if inputs is not None else
                   case_inputs(case, combo.dtype), case.attrs,
                   output_slots(case, case.op_type, expected), place_object(combo.place),
                   enable_inplace=enable_inplace)


# -- running ------------------------------------------------------------------------------
def has_grad(op_type: str) -> bool:
    from harness.backends import has_grad as backend_has_grad

    return backend_has_grad(op_type)


def grad_wrt(case, prepared: PreparedOp) -> list[str]:
    """The variables to differentiate: the case's grad_inputs, else every float input."""
    if case.grad_inputs:
        return list(case.grad_inputs)
    out = []
    for specs in prepared.inputs.values():
        for s in specs:
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f" and \
                    s.name not in (case.no_grad_set or ()):
                out.append(s.name)
    return out


def grad_outputs(case, outputs: dict) -> list[str]:
    if case.grad_outputs:
        return list(case.grad_outputs)
    return [n for n, v in outputs.items() if v is not None and v.dtype.kind == "f"]


def run_forward_backward(prepared: PreparedOp, case, hooks=None, backward: bool = True,
                         seed: int = DEFAULT_SEED, fwd_hooks=None, run_forward: bool = True,
                         wrt=None, cot: dict | None = None) -> dict:
    """THE forward+backward of the harness: {name: array} of every output and every input
    gradient (keys 'X@GRAD').

    Backward runs when the op has a gradient and there is something to differentiate: `wrt`
    (names) when given, else the case's grad_inputs (only what the test checks gradients
    of). The cotangent is `cot` ({output: array}) when given, else a seeded random one over
    the case's grad outputs; it is cast to each output's dtype. `run_forward=False`: the
    forward has already run; only the backward runs."""
    if run_forward:
        outs = prepared.forward(hooks=fwd_hooks if fwd_hooks is not None else hooks)
    else:
        outs = {n: prepared.array(n) for n in prepared.output_names()}
    result = {n: (None if v is None else v.copy()) for n, v in outs.items()}
    if not backward or not has_grad(case.op_type):
        return result
    if wrt is None:
        if not case.grad_inputs:
            return result
        wrt = grad_wrt(case, prepared)
    wrt = list(wrt)
    if not wrt:
        return result
    if cot is None:
        cot = make_cotangents(outs, grad_outputs(case, outs), seed=seed)
    cot = {n: c.astype(outs[n].dtype) for n, c in cot.items()   # float32 runs
           if outs.get(n) is not None}
    for n, g in prepared.backward(cot, wrt, tuple(case.no_grad_set or ()),
                                  hooks=hooks).items():
        result[grad_var_name(n)] = None if g is None else np.array(g, copy=True)
    return result


# -- the op refused, or the kernel failed --------------------------------------------------
def op_refused(exc: BaseException) -> bool:
    """True when the op refuses its inputs or attrs on purpose: a typed opkit error from attr
    checks, infer_shape or a kernel's own validation. Not `External` (a raw numpy/Python
    error the framework wrapped) and not `KernelContractError` (the framework's check of a
    kernel's outputs against infer_shape: a kernel giving other shapes than promised is a
    bug). Decided by the exception's type only."""
    from opkit.framework import errors

    return isinstance(exc, errors.EnforceNotMet) and \
        not isinstance(exc, (errors.External, errors.KernelContractError))


def refusal(exc: BaseException) -> str | None:
    """The message when `exc` is the op refusing on purpose (op_refused) with a non-empty
    message, else None."""
    if op_refused(exc) and (getattr(exc, "raw_message", "") or "").strip():
        return str(exc)
    return None


def raised(exc: BaseException) -> str:
    """One line: the innermost error's type and message, and the kernel file:line it came
    from."""
    inner, seen = exc, {id(exc)}
    while inner.__cause__ is not None and id(inner.__cause__) not in seen:   # (a re-raised
        inner = inner.__cause__                                              # error is its
        seen.add(id(inner))                                                  # own cause)
    text = describe_error(exc)
    kind = type(inner).__name__
    return text if inner is exc or text.startswith(f"{kind}:") else f"{kind}: {text}"


def skip_prefixes() -> tuple:
    """Folders whose frames are not user code: numpy, cupy, opkit's framework, the harness
    package itself and the standard library."""
    import sys
    import sysconfig

    import opkit.framework

    harness_dir = os.path.dirname(os.path.abspath(__file__))   # this package: no `import harness`
    dirs = [os.path.dirname(np.__file__), os.path.dirname(opkit.framework.__file__),
            harness_dir, sysconfig.get_paths().get("stdlib", "")]
    hyp = sys.modules.get("hypothesis")
    if hyp is None:
        try:
            import hypothesis as hyp
        except ImportError:
            hyp = None
    if hyp is not None and getattr(hyp, "__file__", None):
        dirs.append(os.path.dirname(hyp.__file__))
    cp = sys.modules.get("cupy")
    if cp is not None and getattr(cp, "__file__", None):
        dirs.append(os.path.dirname(cp.__file__))
    return tuple(os.path.realpath(d) + os.sep for d in dirs if d)


def user_line(exc: BaseException):
    """(file, line, source) of the innermost frame of `exc` (or of the error it wraps) that is
    user code: the kernel or a helper it called, not numpy, cupy or the framework."""
    chain = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    skip = skip_prefixes()
    for e in reversed(chain):            # the innermost error first
        found = None
        for frame in traceback.extract_tb(e.__traceback__):
            fname = frame.filename
            if fname.startswith("<") or os.path.realpath(fname).startswith(skip):
                continue
            found = frame
        if found is not None:
            return found.filename, found.lineno, (found.line or "").strip()
    return None


def rel(path: str) -> str:
    try:
        r = os.path.relpath(path)
        return r if not r.startswith("..") else path
    except ValueError:
        return path


def describe_error(exc: BaseException) -> str:
    """One line: the error's kind (once) and message and, when it came from user code,
    where."""
    from opkit.framework.errors import one_line

    msg = one_line(exc)
    where = user_line(exc)
    if where:
        msg += f" (at {rel(where[0])}:{where[1]}: {where[2]})"
    return msg
