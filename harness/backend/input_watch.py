"""Kernel hooks that watch a kernel's inputs (the `mutation` check, and `output` naming the
input a kernel wrote to): a content hash of every input before and after each kernel; the
kernel rerun with writable copies to see which input changed; the kernel rerun with the
inputs' own buffers locked to find the line that writes."""
from __future__ import annotations

import contextlib
import hashlib

import numpy as np

from harness.backend.context import (CheckContext, Combo, Hooks, grad_op_types, prepare, rel,
                             run_forward_backward, user_line)
from opkit.framework.device import to_host
from opkit.framework.tensor import LoDTensor, SelectedRows


def _fingerprint(value):
    if isinstance(value, SelectedRows):
        return (tuple(value.rows), value.height, _fingerprint(value.value))
    if not isinstance(value, LoDTensor) or value.buffer is None:
        return None
    data = np.ascontiguousarray(to_host(value.buffer))
    digest = hashlib.blake2b(data.tobytes(), digest_size=16).hexdigest()
    return (data.shape, str(data.dtype), digest, tuple(tuple(level) for level in value.lod))


def _inputs(op, ctx):
    """(slot, name, variable, its buffer) of every input of `op` (None: not there)."""
    for slot, names in op.inputs.items():
        for n in names:
            var = ctx.scope.find_var(n)
            yield slot, n, var, getattr(var.value(), "buffer", None) if var is not None else None


class HashHooks(Hooks):
    """Fingerprint every input of every kernel before and after it runs."""

    def __init__(self):
        self.before_fp = {}
        self.changed = []       # (op_type, slot, var, what)

    def before_kernel(self, op, ctx):
        self.before_fp = {(slot, n): _fingerprint(var.value())
                          for slot, n, var, _ in _inputs(op, ctx) if var is not None}

    def after_kernel(self, op, ctx):
        inplace = {op.output(o) for o in op.info.inplace.values()} if ctx.enable_inplace else ()
        for (slot, n), fp in self.before_fp.items():
            if fp is None or n in inplace or n in op.output_arg_names():
                continue
            var = ctx.scope.find_var(n)
            now = _fingerprint(var.value()) if var is not None else None
            if now != fp:
                what = "its LoD" if now is not None and now[:3] == fp[:3] else "its data"
                self.changed.append((op.type, slot, n, what))


class UnlockedHooks(Hooks):
    """Give the kernel writable copies of its CPU inputs and see which ones it changes."""

    def __init__(self, op_type):
        self.op_type = op_type
        self.copies = {}
        self.written = []

    def before_kernel(self, op, ctx):
        if op.type != self.op_type:
            return
        self.copies = {}
        for slot, n, _, data in _inputs(op, ctx):
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
        for _, _, _, data in _inputs(op, ctx):
            if isinstance(data, np.ndarray):
                data.flags.writeable = False


def read_only_error(exc):
    """numpy's read-only error in `exc`'s chain (at most 10 deep), or None."""
    for _ in range(10):
        if exc is None or isinstance(exc, ValueError) and "read-only" in str(exc):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def where(exc) -> str:
    where = user_line(exc)
    return f" at {rel(where[0])}:{where[1]} ({where[2]})" if where else ""


def run_watched(case, combo, hooks, context):
    prepared = prepare(case, combo)
    return run_forward_backward(prepared, case, hooks=hooks, seed=context.seed)


def find_written_input(case, combo, op_type, context):
    hooks = UnlockedHooks(op_type)
    with contextlib.suppress(Exception):
        run_watched(case, Combo("CPU", combo.dtype), hooks, context)
    return hooks.written


def find_line(case, combo, context):
    try:
        run_watched(case, Combo("CPU", combo.dtype), LockedHooks(), context)
    except Exception as exc:
        if read_only_error(exc) is not None:
            return where(exc)
    return ""


def describe_read_only_write(case, dtype: str, exc: BaseException):
    """When `exc` is numpy's read-only error from a kernel writing to an input: one line
    naming the op, the input and the kernel line (for check_output under pytest too); else
    None."""
    if read_only_error(exc) is None:
        return None
    ctx = CheckContext(places=("CPU",))
    written = []
    for op_type in [case.op_type] + grad_op_types(case):
        written = find_written_input(case, Combo("CPU", dtype), op_type, ctx)
        if written:
            break
    names = ", ".join(f"Input({slot}) variable '{n}'" for slot, n in written) or "an input"
    return (f"the kernel wrote to {names}, which kernels must not change (inputs are "
            f"read-only){where(exc)}")
