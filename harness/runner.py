"""Prepare one op once and run it many times: the engine under every harness check.

A case is what an OpTest's setUp gives: op_type, inputs, attrs, outputs, in Paddle's
format (slot -> array, `(array, recursive_sequence_lengths)`, or `[(name, array), ...]`
for a duplicable slot). `PreparedOp` builds the scope, the forward operator and the grad
operators once; `forward()` and `backward()` then only swap data and run.
"""
from __future__ import annotations

from harness.options import DEFAULT_SEED  # noqa: I001

from dataclasses import dataclass

import functools

import numpy as np

from opkit.framework import errors
from opkit.framework.backward import sum_duplicates
from opkit.framework.device import to_host
from opkit.framework.dtypes import is_float
from opkit.framework.grad_maker import grad_var_name
from opkit.framework.operator import create_op
from opkit.framework.place import CPUPlace
from opkit.framework.registry import op_info
from opkit.framework.scope import Scope
from opkit.framework.tensor import LoDTensor, LoDTensorArray, lengths_to_offsets
from opkit.framework.grad_maker import GRAD_SUFFIX

__all__ = ["VarSpec", "normalize_slots", "map_inputs", "as_value", "PreparedOp", "cast_floats", "make_cotangents",
           "FLOAT_DTYPES"]

FLOAT_DTYPES = ("float32", "float64")


@dataclass
class VarSpec:
    """One variable of a case: its name, data and LoD (length based)."""

    name: str
    data: object  # ndarray, or another value (SelectedRows, ...) passed through
    lengths: list | None = None

    @property
    def lod(self) -> list:
        return lengths_to_offsets(self.lengths) if self.lengths else []


def normalize_slots(slots: dict | None) -> dict[str, list[VarSpec]]:
    """Paddle's OpTest input/output format -> {slot: [VarSpec, ...]} (absent slots dropped)."""
    out: dict[str, list[VarSpec]] = {}
    for slot, value in (slots or {}).items():
        if value is None:
            continue
        if isinstance(value, list) and not isinstance(value, LoDTensorArray):
            # duplicable: [(name, array or (array, lengths)), ...]
            specs = []
            for item in value:
                if not (isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str)):
                    raise errors.InvalidArgument(
                        "slot '%s': a duplicable slot is a list of (name, array) pairs, got %r",
                        slot, type(item).__name__)
                name, data = item
                specs.append(_spec(name, data))
            out[slot] = specs
        else:
            out[slot] = [_spec(slot, value)]
    return out


def map_inputs(inputs: dict, fn) -> dict:
    """`inputs` (Paddle's OpTest format) with every variable replaced by `fn(spec)`: an
    array, or `(array, recursive_sequence_lengths)`. Absent slots are kept; a duplicable slot
    stays a list of (name, value) pairs. The inverse of `normalize_slots`, for variants."""
    specs = normalize_slots(inputs)
    out = {}
    for slot, value in inputs.items():
        items = specs.get(slot)
        if items is None:
            out[slot] = value
            continue
        new = [(s.name, fn(s)) for s in items]
        out[slot] = new if isinstance(value, list) else new[0][1]
    return out


def as_value(spec: VarSpec, data=None):
    """`spec` in Paddle's format (`data` replacing its array when given)."""
    data = spec.data if data is None else data
    return (data, spec.lengths) if spec.lengths else data


def _spec(name: str, value) -> VarSpec:
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], (list, tuple)):
        return VarSpec(name, np.asarray(value[0]), [list(level) for level in value[1]])
    if isinstance(value, LoDTensor):
        return VarSpec(name, value.numpy(), value.recursive_sequence_lengths() or None)
    if isinstance(value, LoDTensorArray):  # passed through (array_read's Array)
        return VarSpec(name, value)
    if isinstance(value, (np.ndarray, np.generic, list, float, int, bool)):
        return VarSpec(name, np.asarray(value))
    return VarSpec(name, value)


def cast_floats(specs: dict[str, list[VarSpec]], dtype) -> dict[str, list[VarSpec]]:
    """Floating arrays cast to `dtype`; everything else unchanged."""
    out = {}
    for slot, items in specs.items():
        out[slot] = [VarSpec(s.name, s.data.astype(dtype)
                             if isinstance(s.data, np.ndarray) and is_float(s.data.dtype)
                             else s.data, s.lengths) for s in items]
    return out


class PreparedOp:
    """A forward op (and, on demand, its grad ops) ready to run repeatedly in one scope."""

    def __init__(self, op_type: str, inputs: dict[str, list[VarSpec]], attrs: dict | None,
                 output_slots: dict[str, list[str]] | None = None, place=None,
                 enable_inplace: bool = False):
        self.op_type = op_type
        self.info = op_info(op_type)
        self.place = place or CPUPlace()
        self.inputs = inputs
        self.attrs = dict(attrs or {})
        self.enable_inplace = enable_inplace
        self.output_slots = output_slots or self._default_outputs()
        self.scope = Scope()
        self.op = create_op(op_type, {s: [v.name for v in vs] for s, vs in inputs.items()},
                            self.output_slots, self.attrs)
        for specs in inputs.values():
            for spec in specs:
                self.set_input(spec.name, spec.data, spec.lod)
        self._grad_ops = None
        self._grad_key = None

    def reset(self, inputs: dict[str, list[VarSpec]]) -> None:
        """The state of a new PreparedOp of the same op fed with `inputs` (the same names):
        every variable of the scope erased (outputs, gradients, anything a kernel wrote),
        the inputs set, no grad ops made yet. The operator object is kept."""
        for n in self.scope.local_var_names():
            self.scope.erase(n)
        self.inputs = inputs
        for specs in inputs.values():
            for spec in specs:
                self.set_input(spec.name, spec.data, spec.lod)
        self._grad_ops = None
        self._grad_key = None

    def _default_outputs(self) -> dict[str, list[str]]:
        proto = self.info.proto
        if proto is None:
            raise errors.InvalidArgument("op '%s' has no proto: name its outputs", self.op_type)
        return {v.name: [v.name] for v in proto.outputs if not v.duplicable}

    # -- data -----------------------------------------------------------------------------
    def set_input(self, name: str, data, lod=None) -> None:
        var = self.scope.var(name)
        if isinstance(data, np.ndarray) or np.isscalar(data):
            from opkit.framework.device import to_device

            tensor = LoDTensor()
            if self.place.kind == "GPU":
                tensor.set(to_device(np.asarray(data), self.place), self.place)
            else:             # a host array on the CPU place: the tensor's cheap path
                tensor.set(np.asarray(data))
            if lod:
                tensor.set_lod(lod)
            var.set_value(tensor)
        else:
            var.set_value(data)

    def input_names(self) -> list[str]:
        return [s.name for specs in self.inputs.values() for s in specs]

    def output_names(self) -> list[str]:
        return [n for names in self.output_slots.values() for n in names]

    def value(self, name: str):
        var = self.scope.find_var(name)
        return None if var is None else var.value()

    def array(self, name: str):
        value = self.value(name)
        if isinstance(value, LoDTensor) and value.is_initialized():
            return np.asarray(to_host(value.data))
        return None

    def lod_lengths(self, name: str):
        value = self.value(name)
        return value.recursive_sequence_lengths() if isinstance(value, LoDTensor) else None

    # -- running --------------------------------------------------------------------------
    def forward(self, hooks=None) -> dict[str, np.ndarray]:
        self.op.run(self.scope, self.place, enable_inplace=self.enable_inplace, hooks=hooks)
        return {n: self.array(n) for n in self.output_names()}

    def grad_ops(self, no_grad_set=()):
        """The grad operators (made once per no_grad_set) from the op's grad maker."""
        key = frozenset(no_grad_set)
        if self._grad_ops is not None and self._grad_key == key:
            return self._grad_ops
        if self.info.grad_maker is None:
            raise errors.Unimplemented("op '%s' registers no grad maker: it has no gradient",
                                       self.op_type)
        maker = self.info.grad_maker(self.op_type, self.op.inputs, self.op.outputs,
                                     self.op.attrs, key)
        descs = []
        produced = set()
        for desc in maker():
            for names in desc.inputs.values():
                for n in names:
                    if n.endswith(GRAD_SUFFIX) and n not in produced and \
                            n[: -len(GRAD_SUFFIX)] not in self.output_names():
                        raise errors.InvalidArgument("grad op '%s' reads '%s', which neither an "
                                                     "output gradient nor an earlier grad op "
                                                     "gives", desc.type, n)
            descs.append(desc)
            produced.update(n for v in desc.outputs.values() for n in v)
        descs = sum_duplicates(descs)
        self._grad_ops = [create_op(d.type, d.inputs, d.outputs, d.attrs) for d in descs]
        self._grad_key = key
        return self._grad_ops

    def backward(self, cotangents: dict[str, np.ndarray], wrt: list[str], no_grad_set=(),
                 hooks=None) -> dict[str, np.ndarray | None]:
        """Gradients of sum(cotangent * output) for the variables `wrt` (forward must have run)."""
        ops = self.grad_ops(no_grad_set)
        for name in self.output_names():
            value = self.array(name)
            cot = cotangents.get(name)
            if cot is None and value is not None:
                cot = np.zeros_like(value)
            if cot is not None:
                lod = self.value(name).lod if isinstance(self.value(name), LoDTensor) else None
                self.set_input(grad_var_name(name), np.asarray(cot), lod)
        for op in ops:
            op.run(self.scope, self.place, enable_inplace=self.enable_inplace, hooks=hooks)
        return {n: self.array(grad_var_name(n)) for n in wrt}

    def grad_lod(self, name: str):
        return self.lod_lengths(grad_var_name(name))


_SIGNS = np.array([-1.0, 1.0])


def make_cotangents(outputs: dict[str, np.ndarray], names, seed: int = DEFAULT_SEED) -> dict:
    """A fixed random cotangent per output (not ones: a mean loss hides softmax's gradient)."""
    wanted = []
    for n in names:
        value = outputs.get(n)
        if value is None or value.dtype.kind != "f":
            continue
        wanted.append((n, tuple(value.shape), value.dtype.str))
    # the same draws for the same (seed, names, shapes, dtypes): drawn once per process
    # (small outputs only: the cache must not hold large arrays), each caller gets copies
    key = (int(seed), tuple(wanted))
    if sum(int(np.prod(w[1])) for w in wanted) > _CACHED_COTANGENT_SIZE:
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
