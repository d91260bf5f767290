"""The Executor: runs a block of a Program in a Scope on a Place."""
from __future__ import annotations

import numpy as np

from opkit.framework import errors
from opkit.framework.block_values import check_lod_levels, new_value as _new_value
from opkit.framework.device import is_device_array, to_device, to_host
from opkit.framework.place import to_place
from opkit.framework.plan import MAX_PLANS, Plan, plan_key, snapshot
from opkit.framework.program import Program, default_main_program
from opkit.framework.scope import Scope, Variable, global_scope
from opkit.framework.tensor import LoDTensor, LoDTensorArray, SelectedRows

__all__ = ["Executor", "run_block", "create_block_variables"]


class _Prepared:
    """A block made ready to run many times: operators made once, variables classified, and
    per op the outputs whose compile-time lod_level the run-time LoD must agree with."""

    def __init__(self, block):
        self.version = block.program.version
        self.ops = [desc.op for desc in block.ops]
        self.persistable = [v for v in block.vars.values() if v.persistable]
        self.local = [v for v in block.vars.values() if not v.persistable]
        self.lod_checks = []
        for desc in block.ops:
            levels = []
            for name in desc.output_arg_names():
                vd = block._find_var_recursive(name)
                if vd is not None and vd.lod_level > 0 and vd.type == "lod_tensor":
                    levels.append((name, vd.lod_level))
            self.lod_checks.append(levels)
        # feed name -> (shape, dtype, persistable) of a plain host array accepted before: a
        # feed of the same shape and dtype needs none of the checks again
        self.feeds_seen: dict = {}
        self.plans: dict = {}  # plan_key(feed, fetch_list) -> Plan (opkit.framework.plan)
        # keys run once: the second plain run of a key records its plan (a program fed a
        # new shape every run never pays for recording)
        self.keys_seen: set = set()


def create_variables(prepared: _Prepared, outer: Scope, local: Scope) -> None:
    """Persistable variables live in the outer scope and are made once; temporaries are made
    anew in the run's scope."""
    for desc in prepared.persistable:
        if outer.find_var(desc.name) is None:
            outer.var(desc.name).set_value(_new_value(desc))
    # a LoDTensor variable starts empty (no value): the op that writes it makes its tensor,
    # and reading it before that is the "not initialized" error naming op and variable
    variables = local._vars
    for desc in prepared.local:
        var = Variable(desc.name)
        if desc.type != "lod_tensor":
            var._value = _new_value(desc)
        variables[desc.name] = var


def create_block_variables(block, outer: Scope, local: Scope,
                           cache: dict | None = None) -> None:
    """Public seam for control-flow ops: make the variables declared in `block`, the
    persistable ones in `outer` (when missing there) and the others anew in `local` (e.g. a
    step scope made by `outer.new_scope()`), as `Executor.run` does for the global block.
    `cache` (a dict the caller keeps) saves preparing the block again on the next call."""
    create_variables(_prepare(block, cache), outer, local)


def run_block(block, scope: Scope, place, cache: dict | None = None, **options) -> None:
    """Run the ops of `block` in `scope` (variables must exist already)."""
    prepared = _prepare(block, cache)
    for op in prepared.ops:
        op.run(scope, place, **options)


def _prepare(block, cache: dict | None) -> _Prepared:
    if cache is None:
        return _Prepared(block)
    key = (id(block.program), block.idx)
    prepared = cache.get(key)
    if prepared is None or prepared.version != block.program.version:
        prepared = _Prepared(block)
        cache[key] = prepared
    return prepared


class Executor:
    """`Executor(place).run(program, feed, fetch_list)`: feeds in, fetched values out."""

    def __init__(self, place=None, enable_inplace: bool = False):
        from opkit.framework.place import CPUPlace

        self.place = to_place(place) if place is not None else CPUPlace()
        self.enable_inplace = enable_inplace
        self._cache: dict = {}

    def close(self) -> None:
        self._cache.clear()

    def run(self, program: Program | None = None, feed=None, fetch_list=None,
            scope: Scope | None = None, return_numpy: bool = True):
        program = program if program is not None else default_main_program()
        if not isinstance(program, Program):
            raise errors.InvalidArgument("Executor.run: program must be a Program, got %s",
                                         type(program).__name__)
        outer = scope if scope is not None else global_scope()
        block = program.global_block()
        prepared = _prepare(block, self._cache)
        record = None
        if not self.enable_inplace and self.place.kind == "CPU":
            key = plan_key(feed, fetch_list)
            if key is not None:
                plan = prepared.plans.get(key)
                if plan is not None:
                    fetched = plan.run(self, outer, feed, return_numpy)
                    if fetched is not None:
                        return fetched
                    record = []  # this plain run records what a plan for its key needs
                elif key in prepared.keys_seen:
                    record = []
                else:
                    if len(prepared.keys_seen) >= 64:
                        prepared.keys_seen.clear()
                    prepared.keys_seen.add(key)
        local = outer.new_scope()
        try:
            create_variables(prepared, outer, local)
            if feed:
                seen = prepared.feeds_seen
                for name, value in feed.items():
                    known = seen.get(name)
                    if known is not None and value.__class__ is np.ndarray and \
                            value.shape == known[0] and value.dtype == known[1]:
                        tensor = LoDTensor()
                        tensor.set(value)
                        (outer if known[2] else local).var(name)._value = tensor
                    else:
                        self._feed(block, outer, local, name, value, seen)
            place = self.place
            options = {"enable_inplace": True} if self.enable_inplace else {}
            op = None
            try:
                for op, levels in zip(prepared.ops, prepared.lod_checks):
                    op.run_impl(local, place, **options)
                    if levels:
                        check_lod_levels(op, levels, local)
                    if record is not None:
                        record.append(snapshot(op, local))
            except Exception as exc:
                raise op.error_in_run(exc) from exc
            if record is not None:
                if len(prepared.plans) >= MAX_PLANS:
                    prepared.plans.clear()
                prepared.plans[key] = Plan(prepared, block, place, key, record)
            return [self._fetch(local, item, return_numpy) for item in (fetch_list or [])]
        finally:
            outer.drop_kids()

    # -- feed and fetch -------------------------------------------------------------------
    def _feed(self, block, outer: Scope, local: Scope, name: str, value,
              seen: dict | None = None) -> None:
        plain = value.__class__ is np.ndarray
        desc = block.vars.get(name)
        if desc is None:
            raise errors.NotFound("feed '%s' is not a variable of the program's global block",
                                  name)
        lengths = None
        if isinstance(value, LoDTensor):
            tensor = value
        else:
            if isinstance(value, tuple) and len(value) == 2:
                value, lengths = value
            if not is_device_array(value):
                value = np.asarray(value)
            tensor = LoDTensor(value)
            if lengths is not None:
                try:
                    tensor.set_recursive_sequence_lengths(lengths)
                except errors.EnforceNotMet as exc:
                    raise errors.InvalidArgument("feed '%s': bad sequence lengths %s: %s", name,
                                                 lengths, exc.raw_message) from None
        data = tensor.data
        if desc.dtype is not None and np.dtype(desc.dtype) != data.dtype:
            raise errors.InvalidArgument(
                "feed '%s' is %s but the variable is declared %s; cast it with "
                ".astype('%s')", name, data.dtype, desc.dtype, desc.dtype)
        if desc.shape is not None:
            shape = tuple(data.shape)
            if len(shape) != len(desc.shape) or any(d >= 0 and d != s
                                                    for d, s in zip(desc.shape, shape)):
                raise errors.InvalidArgument("feed '%s' has shape %s but the variable is "
                                             "declared %s (-1: any size)", name, list(shape),
                                             desc.shape)
        if desc.lod_level and len(tensor.lod) != desc.lod_level:
            if not tensor.lod:
                raise errors.InvalidArgument(
                    "feed '%s' has no LoD but the variable is declared with lod_level=%d: feed "
                    "(array, recursive_sequence_lengths), e.g. (x, [[2, 0, 3]])", name,
                    desc.lod_level)
            raise errors.InvalidArgument(
                "feed '%s' has %d LoD level(s) but the variable is declared with lod_level=%d",
                name, len(tensor.lod), desc.lod_level)
        if tensor.place != self.place and self.place.kind == "GPU":
            tensor = LoDTensor(to_device(data, self.place), tensor.lod, self.place)
        var = (outer if desc.persistable else local).var(name)
        var.set_value(tensor)
        if plain and seen is not None and self.place.kind == "CPU" and not tensor.lod:
            seen[name] = (data.shape, data.dtype, bool(desc.persistable))

    def _fetch(self, scope: Scope, item, return_numpy: bool):
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if name is None:
            raise errors.InvalidArgument("fetch_list items must be variables or names, got %r",
                                         item)
        var = scope.find_var(name)
        if var is None or not var.is_initialized():
            raise errors.NotFound("fetch '%s': the variable was not computed by the program "
                                  "(is it an output of an op that ran?)", name)
        value = var._value
        if value.__class__ is LoDTensor and return_numpy and \
                value._data.__class__ is np.ndarray:  # the common case
            return value._data
        if isinstance(value, SelectedRows):
            dense = to_host(value.to_dense())
            return dense if return_numpy else value
        if isinstance(value, LoDTensorArray):
            return [t.numpy() for t in value] if return_numpy else value
        if not isinstance(value, LoDTensor):
            return value
        if return_numpy:
            return np.asarray(to_host(value.data))
        return LoDTensor(to_host(value.data), value.lod)
