"""Prepared plans: a block turned into a flat list of steps for one feed signature.

`Executor.run` keeps one plan per (fetch names, feed names, shapes and dtypes) of a prepared
block. A plan is made from a plain run that passed (every op verified: infer_shape, kernel
choice, output dims and dtypes, LoD levels) and recorded what each op saw and produced. It
then runs the same feed signature without any of those checks for the steps whose input
signature is known to be the verified one:

* a step is *trusted* when it is an op with a kernel, verified on the CPU, and each input is
  fed (the feed signature is the plan's key), a variable from outside the block (checked
  against the verified signature at the start of every run), or the output of an earlier
  trusted step whose signature is deterministic: infer_shape declared complete dims, the
  dtype was declared or is the kernel's, the LoD level is the shared one (or none);
* a trusted step calls its kernel with a LeanContext bound once to its variables;
* any other step runs as in the plain path (`op.run_impl`: per-op signature check, verified
  again when its inputs change, the LoD level check).

Variables of the block live in the plan's own scope, made once and emptied after every run,
so nothing of a run stays alive but what it fetched and the persistable variables.
Temporaries that only trusted kernels read are made read-only in place when produced (a
kernel writing into its input still raises numpy's read-only error); a fed array, a fetched
value, a persistable variable is handed to kernels as a read-only view, as in the plain path.
"""
from __future__ import annotations

import numpy as np

from opkit.framework.block_values import check_lod_levels, new_value
from opkit.framework.context import EMPTY_VAR_NAME
from opkit.framework.lean_context import LeanContext, new_tensor
from opkit.framework.operator import OperatorWithKernel
from opkit.framework.scope import Scope, Variable
from opkit.framework.tensor import LoDTensor

__all__ = ["Plan", "plan_key", "snapshot", "MAX_PLANS"]

MAX_PLANS = 8  # per prepared block; more feed signatures start the cache anew
_ndarray = np.ndarray


def plan_key(feed, fetch_list):
    """The fetch names, None, then name, shape and dtype of each feed (one flat tuple: cheap
    to hash); None when the run cannot use a plan (a feed that is not a plain numpy array:
    LoD, LoDTensor, device array, list...)."""
    key = []
    for item in fetch_list or ():
        name = item if item.__class__ is str else getattr(item, "name", None)
        if name.__class__ is not str:
            return None
        key.append(name)
    key.append(None)
    if feed:
        for name, value in feed.items():
            if value.__class__ is not _ndarray:
                return None
            key += (name, value.shape, value.dtype)
    return tuple(key)


def _split_key(key):
    """(fetch names, feed names) of a plan_key."""
    sep = key.index(None)
    return key[:sep], key[sep + 1::3]


def _signature(value):
    if value.__class__ is LoDTensor and value._data.__class__ is _ndarray:
        return value._data.shape, value._data.dtype, len(value._lod)
    return None


def snapshot(op, scope):
    """What the plain run of `op` left for making a plan: its verified state and the
    signature of each output it wrote."""
    outs = {}
    for name in op.output_arg_names():
        var = scope.find_var(name)
        outs[name] = _signature(var._value) if var is not None else None
    return getattr(op, "_verified", None), outs


def _deterministic(name, sig, verified, in_levels) -> bool:
    """Whether output `name` of a trusted step has the same signature on every run with
    the step's verified input signature."""
    if sig is None:
        return False
    infer, entry = verified[3], verified[4]
    dims = infer.expected_dims.get(name)
    if dims is None or any(d < 0 for d in dims) or tuple(dims) != sig[0]:
        return False
    declared = infer.expected_dtypes.get(name)
    if declared is not None:
        if sig[1] != declared:
            return False
    elif sig[1] != entry.np_dtype:
        return False
    src = infer.lod_sources.get(name)
    level = in_levels.get(src, 0) if src is not None else 0
    return sig[2] == level


class Plan:
    """The steps of one block for one feed signature (see the module docstring)."""

    def __init__(self, prepared, block, place, key, record):
        from opkit.framework.device import DeviceContextPool

        self.busy = False
        self.place = place
        self.fetch_names, feed_names = _split_key(key)
        self.scope = Scope()
        variables = self.scope._vars
        local = {}
        self.fresh_values = []  # (Variable, VarDesc) of the non-LoDTensor locals
        for desc in prepared.local:
            var = Variable(desc.name)
            variables[desc.name] = var
            local[desc.name] = var
            if desc.type != "lod_tensor":
                self.fresh_values.append((var, desc))
        self.local_vars = list(local.values())
        self.n_vars = len(variables)
        # feeds: (name, local Variable or None for a persistable one)
        self.feeds = []
        fed = set()
        for name in feed_names:
            desc = block.vars[name]
            self.feeds.append((name, None if desc.persistable else local[name]))
            fed.add(name)

        writers: dict = {}
        readers: dict = {}
        for i, op in enumerate(prepared.ops):
            for name in op.output_arg_names():
                writers.setdefault(name, []).append(i)
            for name in op.input_arg_names():
                readers.setdefault(name, []).append(i)

        determined = set(fed)  # names whose current signature is known
        written = set()
        # external name -> [verified signature or None, [(bindings dict, slot, index)]]
        self.externals: dict = {}
        self._dirty: list = []
        cpu = DeviceContextPool.instance().get(place)
        steps = []
        trusted_at = set()
        for i, (op, levels) in enumerate(zip(prepared.ops, prepared.lod_checks)):
            verified, outs = record[i]
            trusted = isinstance(op, OperatorWithKernel) and verified is not None and \
                place.kind == "CPU" and verified[6] == place and verified[4].place == "CPU" \
                and not verified[2]
            in_levels = {}
            if trusted:
                for (_, name), sig in zip(op._input_list, verified[0]):
                    in_levels[name] = sig[2]
                    if name in determined:
                        continue
                    if name not in local and name not in written:
                        self.externals.setdefault(name, [sig, []])
                        if self.externals[name][0] != sig:
                            trusted = False
                        continue
                    trusted = False
            for name in op.output_arg_names():
                written.add(name)
                if trusted and len(writers[name]) == 1 and name not in fed and \
                        _deterministic(name, outs.get(name), verified, in_levels):
                    determined.add(name)
                else:
                    determined.discard(name)
            if not trusted:
                steps.append((op, None, None, levels))
                continue
            trusted_at.add(i)
            ctx = LeanContext(op, self.scope, place, verified[5] or cpu, verified[4],
                              verified[3], self._dirty)
            steps.append((op, verified[4].fn, ctx, None))
        self.steps = steps
        # every step trusted (the common case): one tight loop over (kernel, context)
        self.calls = [(fn, ctx) for _, fn, ctx, _ in steps] \
            if all(fn is not None for _, fn, _, _ in steps) else None
        # bind the trusted steps' single-variable slots
        for i in sorted(trusted_at):
            op, _, ctx, _ = steps[i]
            for slot, names in op._in_present.items():
                if len(names) == 1:
                    self._bind(ctx.bind_in, slot, names[0], local)
            infer = ctx._infer
            for slot, names in op.outputs.items():
                if len(names) != 1 or names[0] == EMPTY_VAR_NAME:
                    continue
                name = names[0]
                freeze = name in local and name not in fed and name not in self.fetch_names \
                    and len(writers[name]) == 1 and \
                    all(r in trusted_at for r in readers.get(name, ()))
                src = infer.lod_sources.get(name)
                entry = [None, freeze, None]
                ctx.bind_out[slot] = entry
                self._bind(entry, 0, name, local)
                if src is not None:
                    self._bind(entry, 2, src, local)
        self.externals = [(name, sig, refs) for name, (sig, refs) in self.externals.items()]
        self.persistable_names = [desc.name for desc in prepared.persistable]
        # fetched: (name, the local Variable, or None: looked up in the run's scope)
        self.fetches = [(name, local.get(name)) for name in self.fetch_names]

    def _bind(self, container, slot, name, local) -> None:
        """container[slot] = the Variable `name`: a local one now, one from outside the block
        at the start of every run (and None again after it)."""
        var = local.get(name)
        if var is not None:
            container[slot] = var
            return
        container[slot] = None
        self.externals.setdefault(name, [None, []])[1].append((container, slot))

    # -- running ------------------------------------------------------------------------
    def run(self, executor, outer: Scope, feed, return_numpy: bool):
        """The fetched values, or None when this run cannot take the plan (a variable from
        outside the block is missing or has another signature than the verified one): the
        caller then runs the plain path."""
        if self.busy:
            return None
        find = outer.find_var
        for name in self.persistable_names:
            if find(name) is None:
                return None  # the plain path creates it (and makes a new plan)
        found = None
        if self.externals:
            found = []
            for name, sig, refs in self.externals:
                var = find(name)
                if var is None:
                    return None
                found.append((var, refs))
                if sig is not None:
                    value = var._value
                    if value.__class__ is not LoDTensor:
                        return None
                    data = value._data
                    if data.__class__ is not _ndarray or data.shape != sig[0] or \
                            data.dtype != sig[1] or len(value._lod) != sig[2]:
                        return None
        self.busy = True
        scope = self.scope
        scope.parent = outer
        place = self.place
        try:
            if found:
                for var, refs in found:
                    for container, slot in refs:
                        container[slot] = var
            for name, var in self.feeds:
                if var is None:
                    var = outer.var(name)
                var._value = new_tensor(feed[name], place, [])
            if self.fresh_values:
                for var, desc in self.fresh_values:
                    var._value = new_value(desc)
            calls = self.calls
            if calls is not None:
                ctx = None
                try:
                    for fn, ctx in calls:
                        fn(ctx)
                except Exception as exc:
                    raise ctx.op.error_in_run(exc) from exc
            else:
                op = None
                try:
                    for op, fn, ctx, levels in self.steps:
                        if fn is not None:
                            fn(ctx)
                        else:
                            op.run_impl(scope, place)
                            if levels:
                                check_lod_levels(op, levels, scope)
                except Exception as exc:
                    raise op.error_in_run(exc) from exc
            out = []
            for name, var in self.fetches:
                value = var._value if var is not None else None
                if value.__class__ is LoDTensor and return_numpy and \
                        value._data.__class__ is _ndarray:
                    out.append(value._data)
                else:
                    out.append(executor._fetch(scope, name, return_numpy))
            return out
        finally:  # forget the run: nothing of it stays alive
            if self._dirty:
                for ctx in self._dirty:
                    ctx.release()
                self._dirty.clear()
            for var in self.local_vars:
                var._value = None
            scope = self.scope
            if len(scope._vars) != self.n_vars:  # an op made variables of its own: drop them
                keep = {v.name: v for v in self.local_vars}
                scope._vars.clear()
                scope._vars.update(keep)
            for _, _, refs in self.externals:
                for container, slot in refs:
                    container[slot] = None
            if scope._kids:
                scope.drop_kids()
            if outer._kids:  # as the plain path, which runs in a child scope of `outer`
                outer.drop_kids()
            scope.parent = None
            self.busy = False
