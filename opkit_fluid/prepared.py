"""opkit's own prepared op (`PreparedOp`: one op of opkit's framework, made once, run many
times in one scope) and its compile-time shapes (`program_shapes`): what
opkit_fluid.backend.OpkitBackend hands the harness."""
from __future__ import annotations

import numpy as np

import os

from harness.backend import contract
from harness.reporting.messages import framework_code
from opkit.framework import errors
from opkit.framework.backward import sum_duplicates
from opkit.framework.device import to_host
from opkit.framework.grad_maker import GRAD_SUFFIX, grad_var_name
from opkit.framework.operator import create_op
from opkit.framework.place import CPUPlace
from opkit.framework.program import Program
from opkit.framework.registry import op_info
from opkit.framework.scope import Scope
from opkit.framework.tensor import LoDTensor

__all__ = ["PreparedOp", "program_shapes"]

framework_code(os.path.dirname(os.path.abspath(__file__)))   # a failure names the kernel's line


class PreparedOp(contract.PreparedOp):
    """A forward op (and, on demand, its grad ops) ready to run repeatedly in one scope."""

    def __init__(self, op_type: str, inputs: dict[str, list], attrs: dict | None,
                 output_slots: dict[str, list[str]] | None = None, place=None,
                 enable_inplace: bool = False):
        self.op_type = op_type
        self.info = op_info(op_type)
        self.place = place or CPUPlace()
        self.attrs = dict(attrs or {})
        self.enable_inplace = enable_inplace
        self.output_slots = output_slots or self._default_outputs()
        self.scope = Scope()
        self.op = create_op(op_type, {s: [v.name for v in vs] for s, vs in inputs.items()},
                            self.output_slots, self.attrs)
        self.reset(inputs)

    def reset(self, inputs: dict[str, list]) -> None:
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

    def held_attrs(self) -> dict:
        return self.op.attrs

    # -- data -----------------------------------------------------------------------------
    def set_input(self, name: str, data, lod=None) -> None:
        var = self.scope.var(name)
        if isinstance(data, np.ndarray) or np.isscalar(data):
            tensor = LoDTensor()      # no place for a host array: the tensor's cheap path
            tensor.set(np.asarray(data), self.place if self.place.kind == "GPU" else None)
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

    def _lod(self, name: str):
        value = self.value(name)
        return value.lod if isinstance(value, LoDTensor) else None

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
        descs, produced = [], set()
        for desc in maker():
            for n in (n for names in desc.inputs.values() for n in names):
                if n.endswith(GRAD_SUFFIX) and n not in produced and \
                        n[: -len(GRAD_SUFFIX)] not in self.output_names():
                    raise errors.InvalidArgument("grad op '%s' reads '%s', which neither an "
                                                 "output gradient nor an earlier grad op gives",
                                                 desc.type, n)
            descs.append(desc)
            produced.update(n for v in desc.outputs.values() for n in v)
        self._grad_ops = [create_op(d.type, d.inputs, d.outputs, d.attrs)
                          for d in sum_duplicates(descs)]
        self._grad_key = key
        return self._grad_ops

    def backward(self, cotangents: dict[str, np.ndarray], wrt: list[str], no_grad_set=(),
                 hooks=None, forward_outputs=None) -> dict[str, np.ndarray | None]:
        """Gradients of sum(cotangent * output) for the variables `wrt` (forward must have
        run; `forward_outputs` {name: array} replace what it wrote before the grad ops read)."""
        ops = self.grad_ops(no_grad_set)
        for name, data in (forward_outputs or {}).items():
            self.set_input(name, data, self._lod(name))
        for name in self.output_names():
            cot = cotangents.get(name)
            if cot is None and (value := self.array(name)) is not None:
                cot = np.zeros_like(value)
            if cot is not None:
                self.set_input(grad_var_name(name), np.asarray(cot), self._lod(name))
        for op in ops:
            op.run(self.scope, self.place, enable_inplace=self.enable_inplace, hooks=hooks)
        return {n: self.array(grad_var_name(n)) for n in wrt}

    def grad_lod(self, name: str):
        return self.lod_lengths(grad_var_name(name))


def program_shapes(case, specs, outs: dict, unknown: dict) -> dict:
    """compile_shapes in opkit's own framework: infer_shape in a fresh Program."""
    block = Program().global_block()
    for ss in specs.values():
        for s in ss:
            shape = list(s.data.shape)
            dims = unknown.get(s.name, [])
            for j in (dims if isinstance(dims, list) else [dims]):
                if j < len(shape):
                    shape[j] = -1
            block.create_var(name=s.name, shape=shape, dtype=s.data.dtype.name,
                             lod_level=len(s.lengths or []))
    ins = {slot: [s.name for s in ss] for slot, ss in specs.items()}
    block.append_op(case.op_type, inputs=ins, outputs=outs, attrs=dict(case.attrs or {}))
    return {n: (None if block.var(n).shape is None else list(block.var(n).shape))
            for names in outs.values() for n in names}
