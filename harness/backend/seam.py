"""THE seam to the op under test: the only maker of a prepared op (`make` / `prepare`:
made once, run many times), THE forward+backward (`run_forward_backward`, with a seeded
cotangent), the cached plain run of a case (`run`), and THE decision whether an exception
is the op refusing its input on purpose (`op_refused` / `refusal`, the run's backend's
rule). Every backend's prepared op implements harness.backend.contract.PreparedOp
(harness.backend.dispatch, `--backend`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from harness.backend.dispatch import compile_shapes as backend_shapes
from harness.backend.dispatch import grad_key, has_grad, plugin, selected  # the run's backend's
from harness.backend.case import VarSpec, case_attrs, case_inputs, normalize_slots
from harness.backend.contract import PreparedOp
from harness.options import DEFAULT_SEED, place_unavailable_reason
from opkit.framework.dtypes import is_float
from opkit.framework.grad_maker import GRAD_SUFFIX
from opkit.framework.place import CPUPlace, CUDAPlace

__all__ = ["Combo", "PreparedOp", "make", "prepare",
           "place_object", "gpu_unavailable_reason", "output_slots", "has_grad", "grad_wrt",
           "grad_outputs", "run_forward_backward", "run", "make_cotangents", "op_refused",
           "refusal", "proto_of", "consumed_outputs", "compile_shapes"]

@dataclass
class Combo:
    place: str          # "CPU" | "GPU"
    dtype: str          # "float32" | "float64" | "" (a case without float inputs)


def place_object(kind: str):
    return CPUPlace() if kind == "CPU" else CUDAPlace(0)


def gpu_unavailable_reason() -> str | None:
    """Why the GPU place cannot run here (None: it can)."""
    return place_unavailable_reason("GPU")


# -- preparing ----------------------------------------------------------------------------
def output_slots(case, op_type: str | None = None, expected: dict | None = None) -> dict:
    """{slot: [names]}: the expected outputs (default: the case's) plus every output the
    proto declares that is neither duplicable nor dispensable (an optional output the case
    does not name is not asked for)."""
    if expected is None:
        expected = normalize_slots(case.outputs)
    slots = {slot: [s.name for s in specs] for slot, specs in expected.items()}
    proto = proto_of(op_type or case.op_type)
    if proto is not None:
        for vp in proto.outputs:
            if vp.name not in slots and not vp.duplicable and not vp.dispensable:
                slots[vp.name] = [vp.name]
    return slots


def prepare(case, combo: Combo, enable_inplace: bool = False, expected: dict | None = None,
            inputs: dict | None = None):
    """A PreparedOp of the case on the combo's place and dtype, fed with fresh copies of the
    case's inputs (or with `inputs`, {slot: [VarSpec]}, as given); a case whose dtype attr
    selects its float kernel (no float input: fill_constant) gets the attr set to the
    combo's dtype (harness.backend.case.case_attrs)."""
    return make(case.op_type, inputs if inputs is not None else case_inputs(case, combo.dtype),
                case_attrs(case, combo.dtype), output_slots(case, case.op_type, expected),
                place_object(combo.place), enable_inplace=enable_inplace)


# -- running ------------------------------------------------------------------------------
def grad_wrt(case, prepared: PreparedOp) -> list[str]:
    """The variables to differentiate: the case's grad_inputs, else every float input."""
    if case.grad_inputs:
        return list(case.grad_inputs)
    return [s.name for specs in prepared.inputs.values() for s in specs
            if isinstance(s.data, np.ndarray) and is_float(s.data.dtype) and
            s.name not in (case.no_grad_set or ())]


def grad_outputs(case, outputs: dict) -> list[str]:
    if case.grad_outputs:
        return list(case.grad_outputs)
    return [n for n, v in outputs.items() if v is not None and is_float(v.dtype)]


def run_forward_backward(prepared: PreparedOp, case, hooks=None, backward: bool = True,
                         seed: int = DEFAULT_SEED, fwd_hooks=None, run_forward: bool = True,
                         wrt=None, cot: dict | None = None, move_outputs=None) -> dict:
    """THE forward+backward of the harness: {name: array} of every output and every input
    gradient (keys 'X@GRAD').

    Backward runs when the op has a gradient and there is something to differentiate: `wrt`
    (names) when given, else the case's grad_inputs (only what the test checks gradients
    of). The cotangent is `cot` ({output: array}) when given, else a seeded random one over
    the case's grad outputs; it is cast to each output's dtype. `run_forward=False`: the
    forward has already run; only the backward runs. `move_outputs` ({output: array} ->
    {output: array}): the grad ops read these forward outputs instead of the forward's."""
    if run_forward and backward and hooks is None and fwd_hooks is None and \
            move_outputs is None and has_grad(case.op_type) and \
            list(case.grad_inputs if wrt is None else wrt):
        # contract.PreparedOp.forward_backward: forward then backward, or one run of the
        # forward op and its grad ops where the backend can (the Paddle one)
        wrt = list(case.grad_inputs if wrt is None else wrt)
        outs, grads = prepared.forward_backward(
            lambda outs: _run_cotangents(case, outs, cot, seed), wrt,
            tuple(case.no_grad_set or ()))
        result = {n: (None if v is None else v.copy()) for n, v in outs.items()}
        for n, g in grads.items():
            result[grad_key(n)] = None if g is None else np.array(g, copy=True)
        return result
    if run_forward:
        outs = prepared.forward(hooks=fwd_hooks if fwd_hooks is not None else hooks)
    else:
        outs = {n: prepared.array(n) for n in prepared.output_names()}
    result = {n: (None if v is None else v.copy()) for n, v in outs.items()}
    if not backward or not has_grad(case.op_type):
        return result
    wrt = list(case.grad_inputs if wrt is None else wrt)
    if not wrt:
        return result
    cot = _run_cotangents(case, outs, cot, seed)
    moved = {"forward_outputs": move_outputs(outs)} if move_outputs else {}
    for n, g in prepared.backward(cot, wrt, tuple(case.no_grad_set or ()),
                                  hooks=hooks, **moved).items():
        result[grad_key(n)] = None if g is None else np.array(g, copy=True)
    return result


def _run_cotangents(case, outs: dict, cot: dict | None, seed: int) -> dict:
    """The cotangents of run_forward_backward: `cot`, else the seeded random ones over the
    case's grad outputs, cast to each output's dtype (float32 runs). Depends on the outputs'
    shapes and dtypes only (a backend may draw them before its run)."""
    drawn = cot is None        # fresh copies: cast without another copy
    if drawn:
        cot = make_cotangents(outs, grad_outputs(case, outs), seed=seed)
    return {n: c.astype(outs[n].dtype, copy=not drawn) for n, c in cot.items()
            if outs.get(n) is not None}


def run(case, combo, context, transform=None, backward: bool = True) -> dict:
    """{name: array} of the case on the combo (`transform(name, array)`: the inputs fed
    instead). The plain run (no transform) is cached in `context.cache`, failure included:
    several variant checks compare against it."""
    cache = getattr(context, "cache", None) if transform is None else None
    key = ("run", id(case), combo.place, combo.dtype, backward)
    if cache is None or key not in cache:
        try:
            prepared = prepare(case, combo)
            for specs in prepared.inputs.values() if transform is not None else ():
                for s in specs:
                    if isinstance(s.data, np.ndarray):
                        new = transform(s.name, s.data)
                        if new is not s.data:
                            prepared.set_input(s.name, new, s.lod)
            got = run_forward_backward(prepared, case, backward=backward,
                                       seed=getattr(context, "seed", DEFAULT_SEED))
        except Exception as exc:
            got = exc
        if cache is not None:
            cache[key] = got
    else:
        got = cache[key]
    if isinstance(got, BaseException):
        raise got
    return got


# -- the op refused, or the kernel failed --------------------------------------------------
def op_refused(exc: BaseException) -> bool:
    """True when the op refuses its inputs or attrs on purpose, by the run's backend's rule
    (harness.backend.contract.Backend.refused; opkit's: a typed opkit error from attr
    checks, infer_shape or a kernel's own validation, not `External` nor
    `KernelContractError`). Decided by the exception's type only."""
    return plugin(selected()).refused(exc)


def refusal(exc: BaseException) -> str | None:
    """The message when `exc` is the op refusing on purpose (op_refused) with a non-empty
    message, else None."""
    return plugin(selected()).refusal_message(exc)


# -- the maker: which implementation runs the op -------------------------------------------
def make(op_type: str, inputs: dict[str, list[VarSpec]], attrs: dict | None,
         output_slots: dict[str, list[str]] | None = None, place=None,
         enable_inplace: bool = False, backend: str | None = None):
    """THE maker of a prepared op: the run's backend's (`Options.backend`, `opkit test
    --backend paddle`: harness.backend.dispatch), or `backend`'s."""
    return plugin(backend or selected()).make(op_type, inputs, attrs, output_slots, place,
                                              enable_inplace=enable_inplace)


_SIGNS = np.array([-1.0, 1.0])


def make_cotangents(outputs: dict[str, np.ndarray], names, seed: int = DEFAULT_SEED) -> dict:
    """A fixed random cotangent per output (not ones: a mean loss hides softmax's gradient)."""
    wanted = [(n, tuple(v.shape), v.dtype.str) for n in names
              if (v := outputs.get(n)) is not None and v.dtype.kind == "f"]
    # the same draws for the same (seed, names, shapes, dtypes): drawn once per process
    # (small outputs only: the cache must not hold large arrays), each caller gets copies
    key = (int(seed), tuple(wanted))
    if sum(math.prod(w[1]) for w in wanted) > _CACHED_COTANGENT_SIZE:
        return dict(zip((w[0] for w in wanted), _cotangent_draws.__wrapped__(*key)))
    return {n: a.copy() for n, a in zip((w[0] for w in wanted), _cotangent_draws(*key))}


_CACHED_COTANGENT_SIZE = 65536


@functools.lru_cache(maxsize=512)
def _cotangent_draws(seed: int, wanted: tuple) -> tuple:
    rng = np.random.default_rng(seed)
    out = []
    for _, shape, dtype in wanted:
        # = rng.uniform(...) * rng.choice([-1.0, 1.0], shape), the same draws, bit for bit
        # (choice draws integers(0, 2)), without choice's own overhead
        cot = rng.uniform(0.5, 1.5, shape) * _SIGNS[rng.integers(0, 2, shape)]
        out.append(cot.astype(np.dtype(dtype)))
    return tuple(out)


def compile_shapes(case, specs, outs: dict, unknown: dict) -> dict:
    """{output name: compile-time shape or None} after infer_shape of the op in a fresh
    Program whose inputs have the case's shapes with the dims in `unknown` set to -1 (the
    selected backend's own compile-time shapes: harness.backend.dispatch)."""
    return backend_shapes(case, specs, outs, unknown)


def consumed_outputs(prepared, no_grad_set=()) -> list[str]:
    """The forward outputs whose gradient (`Out@GRAD`) the op's grad ops read."""
    outs = set(prepared.output_names())
    read = (n[: -len(GRAD_SUFFIX)] for op in prepared.grad_ops(no_grad_set)
            for names in op.inputs.values() for n in names if n.endswith(GRAD_SUFFIX))
    return list(dict.fromkeys(n for n in read if n in outs))


def proto_of(op_type: str):
    """The op's OpProto as the run's declaring backend gives it (harness.backend.dispatch.proto),
    or None (an unknown op, or one without a proto, declares nothing)."""
    from harness.backend import dispatch as backends

    return backends.proto(op_type)
