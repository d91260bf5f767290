"""What the runtime checks share: the check context, places x dtypes to run, fresh prepared
ops, forward+backward runs, kernel hooks, bitwise comparison and ULP distances."""
from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field

import numpy as np

from harness import settings
from harness.report import FAIL, PASS, SKIP, CheckResult
from harness.runner import PreparedOp, cast_floats, make_cotangents, normalize_slots
from opkit.framework.grad_maker import grad_var_name

__all__ = ["CheckContext", "Combo", "combos", "prepare", "run_forward_backward", "Hooks",
           "result", "first_difference", "ulp_distance", "describe_error", "user_line",
           "grad_op_types", "grad_wrt", "place_object", "gpu_unavailable_reason"]


@dataclass
class CheckContext:
    """What a check gets beside the Case: the run's options."""

    seed: int = 2024
    places: tuple | None = None        # None: harness.settings.selected_places()
    dtypes: tuple | None = None        # None: harness.settings.selected_dtypes()
    runs: int = 3                      # determinism: number of runs
    timeout: float | None = None       # seconds per check (enforced by harness.run)
    test: object = None                # the OpTest instance the case came from, if any
    fuzz: int = 0                      # --fuzz N
    cache: dict = field(default_factory=dict)  # per-case scratch shared by checks
    hash_seeds: str = "off"            # determinism across processes: "own" pair of fresh
                                       # processes per op (the pytest items), "batch" (the
                                       # run's one pair does it: opkit test), "off"
    op_level: tuple = ()               # checks that run once per op in their own task
                                       # (harness.run.plan): the case's run skips them
    generated: bool = False            # a fuzz-generated case (harness.fuzz): checks may
                                       # leave out what the OpTest's own case already proved

    def selected_places(self) -> tuple:
        return tuple(self.places) if self.places is not None else settings.selected_places()

    def selected_dtypes(self) -> tuple:
        return tuple(self.dtypes) if self.dtypes is not None else settings.selected_dtypes()


def op_refused(exc: BaseException) -> bool:
    """True when the op refuses its inputs or attrs on purpose: a typed opkit error (not
    External, which wraps a raw numpy/Python error) from attr checks, infer_shape or a
    kernel's own validation. Not the framework's check of a kernel's outputs against
    infer_shape (`_check_outputs`): a kernel giving other shapes than promised is a bug.
    Decided by types and the raising frame, never by the message."""
    from opkit.framework import errors

    if not isinstance(exc, errors.EnforceNotMet) or isinstance(exc, errors.External):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_code.co_name == "_check_outputs":
            return False
        tb = tb.tb_next
    return True


def gpu_unavailable_reason() -> str | None:
    from opkit.framework.place import cupy_unavailable_reason

    if os.environ.get("OPKIT_NO_GPU"):
        return "OPKIT_NO_GPU is set"
    return cupy_unavailable_reason()


def place_object(kind: str):
    from opkit.framework.place import CPUPlace, CUDAPlace

    return CPUPlace() if kind == "CPU" else CUDAPlace(0)


@dataclass
class Combo:
    place: str          # "CPU" | "GPU"
    dtype: str          # "float32" | "float64" | "" (a case without float inputs)


def _has_float_inputs(case) -> bool:
    for specs in normalize_slots(case.inputs).values():
        for s in specs:
            if isinstance(s.data, np.ndarray) and s.data.dtype.kind == "f":
                return True
    return False


def combos(case, ctx: CheckContext, check: str, op_type: str | None = None):
    """THE place x dtype planner of the harness: (runnable combos, skip results).

    Every selected place with a kernel x every float dtype (float32, float64) with a kernel
    there that is selected; dtype "" = inputs as given (no float inputs, or no float kernels).
    A GPU that is selected but unusable, a place whose kernels have none of the selected
    dtypes, and an op with no kernel on any selected place each give a skip with the reason."""
    from opkit.registry import op_info

    kernel_places = op_info(op_type or case.op_type).kernel_places()
    places = ctx.selected_places()
    dtypes = ctx.selected_dtypes()
    has_float = _has_float_inputs(case)
    runnable, skips = [], []
    for place in places:
        kernel_dtypes = kernel_places.get(place)
        if not kernel_dtypes:
            continue
        if place == "GPU":
            reason = gpu_unavailable_reason()
            if reason:
                skips.append(CheckResult(check, SKIP, "GPU", "", case.name,
                                         f"GPU not usable: {reason}"))
                continue
        floats = [d for d in ("float32", "float64") if d in kernel_dtypes]
        if not has_float or not floats:
            runnable.append(Combo(place, ""))
            continue
        picked = [d for d in floats if d in dtypes]
        if not picked:
            skips.append(CheckResult(check, SKIP, place, "", case.name,
                                     f"no {place} kernel for the selected dtypes "
                                     f"({', '.join(dtypes)})"))
        runnable.extend(Combo(place, d) for d in picked)
    if not runnable and not skips:
        skips.append(CheckResult(check, SKIP, "", "", case.name,
                                 f"op '{case.op_type}' has no kernel on the selected places"))
    return runnable, skips


def output_slots(case, op_type: str) -> dict:
    from opkit.registry import op_info

    proto = op_info(op_type).proto
    slots = {slot: [s.name for s in specs] for slot, specs in normalize_slots(case.outputs).items()}
    if proto is not None:
        for vp in proto.outputs:
            if vp.name not in slots and not vp.duplicable:
                slots[vp.name] = [vp.name]
    return slots


def case_inputs(case, dtype: str):
    """The case's inputs as VarSpecs: float arrays cast to `dtype`; always fresh copies."""
    from harness.runner import VarSpec

    specs = normalize_slots(case.inputs)
    if dtype:
        specs = cast_floats(specs, dtype)
    return {slot: [VarSpec(s.name, s.data.copy() if isinstance(s.data, np.ndarray) else s.data,
                           s.lengths) for s in items] for slot, items in specs.items()}


def prepare(case, combo: Combo, enable_inplace: bool = False) -> PreparedOp:
    """A PreparedOp of the case on the combo's place and dtype, fed with fresh copies."""
    return PreparedOp(case.op_type, case_inputs(case, combo.dtype), case.attrs,
                      output_slots(case, case.op_type), place_object(combo.place),
                      enable_inplace=enable_inplace)


def refeed(prepared: PreparedOp, case, combo: Combo) -> None:
    """Fresh copies of the case's inputs into the prepared op's scope."""
    for specs in case_inputs(case, combo.dtype).values():
        for s in specs:
            prepared.set_input(s.name, s.data, s.lod)


def has_grad(op_type: str) -> bool:
    from opkit.registry import op_info

    return op_info(op_type).grad_maker is not None


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
                         seed: int = 2024, fwd_hooks=None, run_forward: bool = True) -> dict:
    """Run forward (and backward when the op has a gradient): {name: array} of every
    output and every input gradient (keys 'X@GRAD'). `run_forward=False`: the forward has
    already run; only the backward runs."""
    if run_forward:
        outs = prepared.forward(hooks=fwd_hooks if fwd_hooks is not None else hooks)
    else:
        outs = {n: prepared.array(n) for n in prepared.output_names()}
    result = {n: (None if v is None else v.copy()) for n, v in outs.items()}
    if backward and case.grad_inputs and has_grad(case.op_type):
        wrt = grad_wrt(case, prepared)     # only what the test checks gradients of
        if wrt:
            cot = make_cotangents(outs, grad_outputs(case, outs), seed=seed)
            cot = {n: c.astype(outs[n].dtype) for n, c in cot.items()}  # float32 runs
            for n, g in prepared.backward(cot, wrt, tuple(case.no_grad_set or ()),
                                          hooks=hooks).items():
                result[grad_var_name(n)] = None if g is None else np.array(g, copy=True)
    return result


def grad_op_types(case) -> list[str]:
    """The types of the grad ops the op's grad maker makes for this case ([] without)."""
    if not has_grad(case.op_type):
        return []
    try:
        prepared = prepare(case, Combo("CPU", ""))
        return sorted({op.type for op in prepared.grad_ops(tuple(case.no_grad_set or ()))})
    except Exception:
        return [case.op_type + "_grad"]


class Hooks:
    """Kernel hooks for OperatorWithKernel.run_impl; calls every callback given."""

    def __init__(self, before=None, after=None):
        self.before = before
        self.after = after

    def before_kernel(self, op, ctx):
        if self.before is not None:
            self.before(op, ctx)

    def after_kernel(self, op, ctx):
        if self.after is not None:
            self.after(op, ctx)


def result(check: str, status: str, combo: Combo | None, case, message: str = "",
           worst_error: float | None = None) -> CheckResult:
    return CheckResult(check, status, combo.place if combo else "", combo.dtype if combo else "",
                       case.name, message, worst_error)


def pass_(check, combo, case, message=""):
    return result(check, PASS, combo, case, message)


def fail(check, combo, case, message, worst_error=None):
    return result(check, FAIL, combo, case, message, worst_error)


# -- comparisons --------------------------------------------------------------------------
def _int_view(a: np.ndarray) -> np.ndarray:
    return a.view({2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize])


def ulp_distance(a, b) -> int:
    """Units in the last place between two floats of the same dtype (0 when bitwise equal)."""
    a = np.asarray(a)
    b = np.asarray(b, dtype=a.dtype)
    if a.dtype.kind != "f":
        return abs(int(a) - int(b))
    bits = a.dtype.itemsize * 8

    def ordered(x):
        i = int(_int_view(np.array([x], dtype=a.dtype))[0])
        return i if i >= 0 else -(1 << (bits - 1)) - i

    return abs(ordered(a.item()) - ordered(b.item()))


def first_difference(a, b):
    """None when `a` and `b` are bitwise identical, else (index, a_value, b_value, ulps) or a
    string for shape/dtype mismatches."""
    if a is None or b is None:
        return None if a is None and b is None else "one run produced no value"
    a, b = np.asarray(a), np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return f"shape/dtype differ: {a.shape} {a.dtype} vs {b.shape} {b.dtype}"
    if a.tobytes() == b.tobytes():
        return None
    if a.dtype.kind in "fiub" and a.dtype.itemsize in (1, 2, 4, 8):
        av = a.view(f"u{a.dtype.itemsize}") if a.ndim else a.reshape(1).view(f"u{a.dtype.itemsize}")
        bv = b.view(f"u{b.dtype.itemsize}") if b.ndim else b.reshape(1).view(f"u{b.dtype.itemsize}")
        flat = np.flatnonzero(av.reshape(-1) != bv.reshape(-1))
        k = int(flat[0])
        idx = np.unravel_index(k, a.shape) if a.ndim else ()
        x, y = a.reshape(-1)[k], b.reshape(-1)[k]
        ulps = ulp_distance(x, y) if a.dtype.kind == "f" else abs(int(x) - int(y))
        return (tuple(int(i) for i in idx), x.item(), y.item(), ulps)
    return "contents differ"


def fmt_index(name: str, idx) -> str:
    return f"{name}[{', '.join(str(i) for i in idx)}]" if idx else name


# -- errors -------------------------------------------------------------------------------
def _skip_prefixes() -> tuple:
    """Folders whose frames are not user code: numpy, cupy, opkit's framework, the harness
    package itself and the standard library."""
    import sysconfig

    import opkit.framework

    harness_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))   # no cycle
    dirs = [os.path.dirname(np.__file__), os.path.dirname(opkit.framework.__file__),
            harness_dir, sysconfig.get_paths().get("stdlib", "")]
    try:
        import hypothesis

        dirs.append(os.path.dirname(hypothesis.__file__))
    except ImportError:
        pass
    import sys

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
    skip = _skip_prefixes()
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
