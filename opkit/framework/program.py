"""Programs: blocks of variable and op descriptions, built with compile-time infer_shape."""
from __future__ import annotations

import contextlib
import itertools
import json

import numpy as np

from opkit.framework import errors
from opkit.framework.context import EMPTY_VAR_NAME
from opkit.framework.kernel_type import dtype_name
from opkit.framework.operator import create_op

__all__ = ["Program", "Block", "VarDesc", "OpDesc", "program_guard", "default_main_program",
           "default_startup_program", "unique_name"]

VAR_TYPES = ("lod_tensor", "selected_rows", "lod_tensor_array", "step_scopes", "raw")
_counters: dict[str, itertools.count] = {}


def unique_name(prefix: str) -> str:
    counter = _counters.setdefault(prefix, itertools.count())
    return f"{prefix}_{next(counter)}"


class VarDesc:
    """A variable of a Block: name, shape (-1 for an unknown dim), dtype, lod_level."""

    def __init__(self, block, name: str, shape=None, dtype="float32", lod_level: int = 0,
                 persistable: bool = False, stop_gradient: bool = False,
                 type: str = "lod_tensor", is_parameter: bool = False, trainable: bool = True,
                 is_data: bool = False):
        if type not in VAR_TYPES:
            raise errors.InvalidArgument("variable '%s': type must be one of %s, got %r", name,
                                         ", ".join(VAR_TYPES), type)
        self.block = block
        self.name = name
        self.shape = None if shape is None else [int(d) for d in shape]
        self.dtype = None if dtype is None else dtype_name(dtype)
        self.lod_level = int(lod_level)
        self.persistable = bool(persistable)
        self.stop_gradient = bool(stop_gradient)
        self.type = type
        self.is_parameter = bool(is_parameter)
        self.trainable = bool(trainable)
        self.is_data = bool(is_data)

    def to_dict(self) -> dict:
        return {"name": self.name, "shape": self.shape, "dtype": self.dtype,
                "lod_level": self.lod_level, "persistable": self.persistable,
                "stop_gradient": self.stop_gradient, "type": self.type,
                "is_parameter": self.is_parameter, "trainable": self.trainable,
                "is_data": self.is_data}

    def __repr__(self):
        return (f"VarDesc({self.name!r}, shape={self.shape}, dtype={self.dtype}, "
                f"lod_level={self.lod_level}{', persistable' if self.persistable else ''})")


class OpDesc:
    """An op of a Block. `.op` is the Operator instance the executor runs (made once)."""

    def __init__(self, block, type: str, inputs: dict, outputs: dict, attrs: dict):
        self.block = block
        self.type = type
        self.inputs = inputs
        self.outputs = outputs
        self.op = create_op(type, inputs, outputs, attrs)
        self.attrs = self.op.attrs

    def input(self, slot: str) -> list[str]:
        return list(self.inputs.get(slot, []))

    def output(self, slot: str) -> list[str]:
        return list(self.outputs.get(slot, []))

    def input_arg_names(self) -> list[str]:
        return [n for v in self.inputs.values() for n in v if n != EMPTY_VAR_NAME]

    def output_arg_names(self) -> list[str]:
        return [n for v in self.outputs.values() for n in v if n != EMPTY_VAR_NAME]

    def to_dict(self) -> dict:
        attrs = {}
        for k, v in self.attrs.items():
            if isinstance(v, Block):
                v = {"__block__": v.idx}
            elif isinstance(v, np.generic):
                v = v.item()
            attrs[k] = v
        return {"type": self.type, "inputs": self.inputs, "outputs": self.outputs, "attrs": attrs}

    def __repr__(self):
        return f"OpDesc({self.type!r}, inputs={self.inputs}, outputs={self.outputs})"


class Block:
    def __init__(self, program: "Program", idx: int, parent_idx: int = -1):
        self.program = program
        self.idx = idx
        self.parent_idx = parent_idx
        self.vars: dict[str, VarDesc] = {}
        self.ops: list[OpDesc] = []

    @property
    def parent(self) -> "Block | None":
        return self.program.blocks[self.parent_idx] if self.parent_idx >= 0 else None

    def create_var(self, name=None, shape=None, dtype="float32", lod_level=0, persistable=False,
                   stop_gradient=False, **kwargs) -> VarDesc:
        name = name or unique_name("tmp")
        if name in self.vars:
            v = self.vars[name]
            if shape is not None:
                v.shape = [int(d) for d in shape]
            return v
        v = VarDesc(self, name, shape, dtype, lod_level, persistable, stop_gradient, **kwargs)
        self.vars[name] = v
        self.program._bump()
        return v

    def create_parameter(self, name, shape, dtype="float32", trainable=True) -> VarDesc:
        return self.create_var(name=name, shape=shape, dtype=dtype, persistable=True,
                               is_parameter=True, trainable=trainable)

    def var(self, name: str) -> VarDesc:
        v = self._find_var_recursive(name)
        if v is None:
            raise errors.NotFound("variable '%s' is not in block %d (or its parents)", name,
                                  self.idx)
        return v

    def has_var(self, name: str) -> bool:
        return self._find_var_recursive(name) is not None

    def _find_var_recursive(self, name: str) -> VarDesc | None:
        block = self
        while block is not None:
            v = block.vars.get(name)
            if v is not None:
                return v
            block = block.parent
        return None

    def all_parameters(self) -> list[VarDesc]:
        return [v for v in self.vars.values() if v.is_parameter]

    def _names(self, mapping, create_missing: bool) -> dict[str, list[str]]:
        out = {}
        for slot, value in (mapping or {}).items():
            items = value if isinstance(value, (list, tuple)) else [value]
            names = []
            for item in items:
                if item is None:
                    continue
                name = item if isinstance(item, str) else item.name
                if name != EMPTY_VAR_NAME and not self.has_var(name):
                    if not create_missing:
                        raise errors.NotFound("input variable '%s' (slot %s) is not in the "
                                              "block; create it first", name, slot)
                    self.create_var(name=name, dtype=None)
                names.append(name)
            out[slot] = names
        return out

    def append_op(self, type: str, inputs=None, outputs=None, attrs=None) -> OpDesc:
        return self._insert_op(len(self.ops), type, inputs, outputs, attrs)

    def _insert_op(self, index: int, type: str, inputs=None, outputs=None, attrs=None,
                   infer: bool = True) -> OpDesc:
        ins = self._names(inputs, create_missing=False)
        outs = self._names(outputs, create_missing=True)
        desc = OpDesc(self, type, ins, outs, attrs)
        if infer:
            desc.op.compile_time_infer_shape(self)
            self._default_output_dtypes(desc)
        self.ops.insert(index, desc)
        self.program._bump()
        return desc

    def _default_output_dtypes(self, desc: OpDesc) -> None:
        dtype = None
        for n in desc.input_arg_names():
            v = self._find_var_recursive(n)
            if v is not None and v.dtype is not None:
                dtype = v.dtype
                break
        for n in desc.output_arg_names():
            v = self._find_var_recursive(n)
            if v is not None and v.dtype is None:
                v.dtype = dtype or "float32"

    def to_dict(self) -> dict:
        return {"idx": self.idx, "parent_idx": self.parent_idx,
                "vars": [v.to_dict() for v in self.vars.values()],
                "ops": [op.to_dict() for op in self.ops]}

    def __repr__(self):
        lines = [f"Block {self.idx} (parent {self.parent_idx}):"]
        lines += [f"  {v!r}" for v in self.vars.values()]
        lines += [f"  {op!r}" for op in self.ops]
        return "\n".join(lines)


class Program:
    """A list of Blocks; block 0 is the global block."""

    def __init__(self):
        self.blocks = [Block(self, 0)]
        self._current = 0
        self.version = 0
        self.random_seed = 0

    def _bump(self) -> None:
        self.version += 1

    def global_block(self) -> Block:
        return self.blocks[0]

    def current_block(self) -> Block:
        return self.blocks[self._current]

    def block(self, idx: int) -> Block:
        return self.blocks[idx]

    def create_block(self, parent_idx: int | None = None) -> Block:
        parent = self._current if parent_idx is None else parent_idx
        block = Block(self, len(self.blocks), parent)
        self.blocks.append(block)
        self._current = block.idx
        return block

    def rollback(self) -> None:
        self._current = self.current_block().parent_idx if self._current > 0 else 0

    def list_vars(self):
        for b in self.blocks:
            yield from b.vars.values()

    def all_parameters(self) -> list[VarDesc]:
        return [v for b in self.blocks for v in b.all_parameters()]

    def to_json(self) -> str:
        from opkit.framework.op_version import op_version_map

        blocks = [b.to_dict() for b in self.blocks]
        versions = op_version_map([od["type"] for bd in blocks for od in bd["ops"]])
        return json.dumps({"version": 1, "op_version_map": versions, "blocks": blocks},
                          indent=1, sort_keys=False)

    @classmethod
    def from_json(cls, text: str, where: str = "program") -> "Program":
        """The program of ``text``; ops saved at older op versions are upgraded (their
        checkpoints' upgraders, in order); newer versions than the registry's are refused."""
        from opkit.framework.op_version import upgrade_program_dict

        try:
            data = json.loads(text)
            blocks = data["blocks"]
        except (ValueError, KeyError, TypeError) as exc:
            raise errors.InvalidArgument("not a program JSON document: %s", exc) from None
        blocks = upgrade_program_dict(data, where)["blocks"]
        prog = cls()
        prog.blocks = [Block(prog, b["idx"], b.get("parent_idx", -1)) for b in blocks]
        for b, bd in zip(prog.blocks, blocks):
            for vd in bd.get("vars", []):
                vd = dict(vd)
                name = vd.pop("name")
                b.vars[name] = VarDesc(b, name, **vd)
        for b, bd in zip(prog.blocks, blocks):
            for od in bd.get("ops", []):
                attrs = {k: (prog.blocks[v["__block__"]] if isinstance(v, dict) and
                             "__block__" in v else v) for k, v in od.get("attrs", {}).items()}
                b.ops.append(OpDesc(b, od["type"], od.get("inputs", {}), od.get("outputs", {}),
                                    attrs))
        prog._bump()
        return prog

    def clone(self) -> "Program":
        return Program.from_json(self.to_json())

    def __repr__(self):
        return "\n".join(repr(b) for b in self.blocks)


_main = Program()
_startup = Program()


def default_main_program() -> Program:
    return _main


def default_startup_program() -> Program:
    return _startup


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Within the block, layers append to `main_program` (and `startup_program`)."""
    global _main, _startup
    if not isinstance(main_program, Program):
        raise errors.InvalidArgument("program_guard needs a Program, got %r", main_program)
    old = (_main, _startup)
    _main = main_program
    if startup_program is not None:
        _startup = startup_program
    try:
        yield
    finally:
        _main, _startup = old
