"""`mutation`: no kernel (forward or grad) writes to any of its inputs.

Two nets:
- on CPU the framework hands kernels read-only views; a write raises ValueError, which the
  framework wraps as External. The check names the op, the input (found by rerunning the
  kernel with writable copies of its inputs and seeing which one changed) and the line (from
  the ValueError's traceback: the kernel, or the helper function it called);
- on every place, a content hash (data and LoD) of every input before and after each kernel
  catches writes that bypass the read-only flag (`x.base`, `np.frombuffer`, cupy arrays).
  The line is then found by rerunning the CPU kernel with the inputs' own buffers locked.
"""
from __future__ import annotations

from harness.options import DEFAULT_SEED  # noqa: I001

import hashlib

import numpy as np

from harness.checks.base import Check, InputWritten
from harness.checks.support import (CheckContext, Combo, Hooks, combos, fail, grad_op_types,
                                     pass_, prepare,
                                     rel, run_forward_backward, user_line)

NAME = "mutation"


def _fingerprint(value):
    from opkit.framework.device import to_host
    from opkit.framework.tensor import LoDTensor, SelectedRows

    if isinstance(value, SelectedRows):
        return (tuple(value.rows), value.height, _fingerprint(value.value))
    if not isinstance(value, LoDTensor) or value.buffer is None:
        return None
    data = np.ascontiguousarray(to_host(value.buffer))
    digest = hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()
    return (data.shape, str(data.dtype), digest, tuple(tuple(level) for level in value.lod))


class HashHooks(Hooks):
    """Fingerprint every input of every kernel before and after it runs."""

    def __init__(self):
        super().__init__()
        self.before_fp = {}
        self.changed = []       # (op_type, slot, var, what)

    def before_kernel(self, op, ctx):
        self.before_fp = {}
        for slot, names in op.inputs.items():
            for n in names:
                var = ctx.scope.find_var(n)
                if var is not None:
                    self.before_fp[(slot, n)] = _fingerprint(var.value())

    def after_kernel(self, op, ctx):
        inplace_outs = {op.output(o) for i, o in op.info.inplace.items()} \
            if ctx.enable_inplace else set()
        for (slot, n), fp in self.before_fp.items():
            if fp is None or n in inplace_outs or n in op.output_arg_names():
                continue
            var = ctx.scope.find_var(n)
            now = _fingerprint(var.value()) if var is not None else None
            if now != fp:
                what = "its LoD" if now is not None and now[:3] == fp[:3] else "its data"
                self.changed.append((op.type, slot, n, what))


class UnlockedHooks(Hooks):
    """Give the kernel writable copies of its CPU inputs and see which ones it changes."""

    def __init__(self, op_type):
        super().__init__()
        self.op_type = op_type
        self.copies = {}
        self.written = []

    def before_kernel(self, op, ctx):
        if op.type != self.op_type:
            return
        self.copies = {}
        for slot, names in op.inputs.items():
            for n in names:
                var = ctx.scope.find_var(n)
                value = var.value() if var is not None else None
                data = getattr(value, "buffer", None)
                if isinstance(data, np.ndarray):
                    copy = np.array(data, copy=True)
                    ctx.override_input(n, copy)    # what ctx.input(slot) will hand out
                    self.copies[(slot, n)] = (copy, data.copy())

    def after_kernel(self, op, ctx):
        if op.type != self.op_type:
            return
        for (slot, n), (copy, orig) in self.copies.items():
            if copy.tobytes() != orig.tobytes():
                self.written.append((slot, n))


class LockedHooks(Hooks):
    """Make the inputs' own buffers read-only, so a write through `.base` raises."""

    def before_kernel(self, op, ctx):
        for names in op.inputs.values():
            for n in names:
                var = ctx.scope.find_var(n)
                data = getattr(var.value(), "buffer", None) if var is not None else None
                if isinstance(data, np.ndarray):
                    data.flags.writeable = False


def _read_only_error(exc):
    e = exc
    seen = 0
    while e is not None and seen < 10:
        if isinstance(e, ValueError) and "read-only" in str(e):
            return e
        e = e.__cause__ or e.__context__
        seen += 1
    return None


def _where(exc) -> str:
    where = user_line(exc)
    return f" at {rel(where[0])}:{where[1]} ({where[2]})" if where else ""


def _run(case, combo, hooks, context):
    prepared = prepare(case, combo)
    return run_forward_backward(prepared, case, hooks=hooks, seed=context.seed)


def _find_written_input(case, combo, op_type, context):
    hooks = UnlockedHooks(op_type)
    try:
        _run(case, Combo("CPU", combo.dtype), hooks, context)
    except Exception:
        pass
    return hooks.written


def _find_line(case, combo, context):
    try:
        _run(case, Combo("CPU", combo.dtype), LockedHooks(), context)
    except Exception as exc:
        if _read_only_error(exc) is not None:
            return _where(exc)
    return ""


def describe_read_only_write(case, dtype: str, exc: BaseException, seed: int = DEFAULT_SEED):
    """When `exc` is numpy's read-only error from a kernel writing to an input: one line
    naming the op, the input and the kernel line (for check_output under pytest too); else
    None."""
    if _read_only_error(exc) is None:
        return None
    ctx = CheckContext(seed=seed, places=("CPU",))
    written = []
    for op_type in [case.op_type] + grad_op_types(case):
        written = _find_written_input(case, Combo("CPU", dtype), op_type, ctx)
        if written:
            break
    names = ", ".join(f"Input({slot}) variable '{n}'" for slot, n in written) or "an input"
    return (f"the kernel wrote to {names}, which kernels must not change (inputs are "
            f"read-only){_where(exc)}")


def check_case(case, context: CheckContext) -> list:
    runnable, results = combos(case, context, NAME)
    for combo in runnable:
        hooks = HashHooks()
        try:
            _run(case, combo, hooks, context)
        except Exception as exc:
            ro = _read_only_error(exc)
            op_type = getattr(exc, "op_type", None) or case.op_type
            if ro is None:
                results.append(fail(NAME, combo, case, f"op '{op_type}' raised before the "
                                    f"check could finish: {str(exc).splitlines()[0]}", kind="kernel-raised"))
                continue
            written = _find_written_input(case, combo, op_type, context)
            which = ", ".join(f"Input({s}) variable '{n}'" for s, n in written) or "an input"
            results.append(fail(NAME, combo, case, f"kernel of op '{op_type}' wrote to {which} "
                                f"(inputs are read-only){_where(exc)}"))
            continue
        if hooks.changed:
            line = _find_line(case, combo, context) if "CPU" in \
                __import__("opkit").registry.op_info(case.op_type).kernel_places() else ""
            parts = [f"kernel of op '{t}' changed {what} of Input({s}) variable '{n}'"
                     for t, s, n, what in dict.fromkeys(hooks.changed)]
            results.append(fail(NAME, combo, case, "; ".join(parts) +
                                " (bypassing the read-only view)" + line))
        else:
            results.append(pass_(NAME, combo, case))
    return results


class MutationCheck(Check):
    name = NAME
    description = "no kernel wrote to any of its inputs"
    order = 40
    variants = ("case", "default_attrs")   # the case and its all-default-attrs variant

    def verdict(self, derived, context):
        return self.adopt(derived, check_case(derived.case, context), InputWritten)


CHECK = MutationCheck()
check = CHECK       # callable(case, context), as before
