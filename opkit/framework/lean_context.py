"""The ExecutionContext of a step of a prepared plan (opkit.framework.plan).

Built once per step, reused by every run of the plan: the step's input and output slots are
bound to their Variables when the plan is made, so `input()` and `set_output()` are a couple
of dict and attribute operations. Everything else a kernel may call is the ExecutionContext's
own method, working against the plan's scope; the per-run state those methods keep (read
arrays, written variables, hooked tensors) is made on first use and dropped when the run ends
(`release`), so a run keeps nothing alive and the next run starts clean.
"""
from __future__ import annotations

import numpy as np

from opkit.framework.context import ExecutionContext
from opkit.framework.tensor import LoDTensor

__all__ = ["LeanContext", "new_tensor"]

_ndarray = np.ndarray
_new = object.__new__


def new_tensor(array, place, lod, ro=None) -> LoDTensor:
    """A LoDTensor holding `array` (a kernel's fresh output), without LoDTensor.__init__."""
    t = _new(LoDTensor)
    t._data = array
    t._lod = lod
    t._place = place
    t._meta = None
    t._no_data_reason = None
    t._alloc = None
    t._ro = ro
    t.name = None
    return t


class LeanContext(ExecutionContext):
    """An ExecutionContext whose slots were resolved once (see the module docstring).

    `bind_in`: input slot -> Variable (single-variable slots); `bind_out`: output slot ->
    [Variable, freeze, lod source Variable or None]. `freeze`: the output is a temporary of
    the run that only kernels read, so a fresh array is made read-only in place instead of
    every reader making a read-only view of it."""

    __slots__ = ("bind_in", "bind_out", "_state", "_dirty", "_scope")

    def __init__(self, op, scope, place, device_context, entry, infer_ctx, dirty: list):
        # the ExecutionContext's per-run dicts are properties here (made on first use)
        self.op = op
        self._scope = scope
        self.place = place
        self.device_context = device_context
        self.xp = device_context.xp
        self._infer = infer_ctx
        self._kernel_type = None
        self.kernel_entry = entry
        self.enable_inplace = False
        self.bind_in: dict = {}
        self.bind_out: dict = {}
        self._state = None
        self._dirty = dirty

    # -- the per-run state of the generic methods ----------------------------------------
    def _get_state(self):
        state = self._state
        if state is None:
            # written, _tensors, _read_slots, _arrays, hooked
            state = self._state = [{}, {}, set(), {}, None]
            self._dirty.append(self)
        return state

    @property
    def scope(self):
        # a kernel reaching into the scope may hand out stored arrays: no freezing this run
        self._get_state()
        return self._scope

    written = property(lambda self: self._get_state()[0])
    _tensors = property(lambda self: self._get_state()[1])
    _read_slots = property(lambda self: self._get_state()[2])
    _arrays = property(lambda self: self._get_state()[3])

    def _get_hooked(self):
        return self._get_state()[4]

    def _set_hooked(self, value):
        self._get_state()[4] = value

    hooked = property(_get_hooked, _set_hooked)

    def release(self) -> None:
        """End of a run: forget what the generic methods kept."""
        state = self._state
        self._state = None
        if state is not None and state[4]:
            for tensor in state[4]:
                tensor._alloc = None

    # -- the fast methods ------------------------------------------------------------------
    def attr(self, name: str):
        try:
            return self.op.attrs[name]
        except KeyError:
            return ExecutionContext.attr(self, name)

    def input(self, name: str):
        try:
            tensor = self.bind_in[name]._value
            data = tensor._data
            ro = tensor._ro
        except (KeyError, AttributeError):
            return ExecutionContext.input(self, name)
        if ro is not None and ro[0] is data:
            return ro[1]
        if data.__class__ is _ndarray:
            view = data.view()
            view.setflags(False)  # positional: numpy parses a keyword ~1 us slower
            tensor._ro = (data, view)
            return view
        return ExecutionContext.input(self, name)

    def set_output(self, name: str, array, lod=None) -> None:
        bound = self.bind_out.get(name)
        if bound is None or lod is not None or array.__class__ is not _ndarray:
            ExecutionContext.set_output(self, name, array, lod)
            return
        var, freeze, src = bound
        if freeze and self._state is None:
            # only a kernel that went through none of the generic accessors (which hand out
            # the stored arrays themselves) has made `array` itself: only then may it be
            # frozen in place
            array.setflags(False)  # positional: numpy parses a keyword ~1 us slower
            ro = (array, array)
        else:
            ro = None
        t = _new(LoDTensor)  # new_tensor(), inlined: this is the hottest line of a plan
        t._data = array
        if src is not None:
            src_lod = src._value._lod
            t._lod = [list(level) for level in src_lod] if src_lod else []
        else:
            t._lod = []
        t._place = self.place
        t._meta = t._no_data_reason = t._alloc = t.name = None
        t._ro = ro
        var._value = t
