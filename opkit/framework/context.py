"""The two contexts an op sees: InferShapeContext (compile time and run time) and the
ExecutionContext handed to kernels."""
from __future__ import annotations

import numpy as np

from opkit.framework import errors
from opkit.framework.kernel_type import dtype_name
from opkit.framework.tensor import LoDTensor, LoDTensorArray, SelectedRows, validate_lod

__all__ = ["InferShapeContext", "CompileTimeInferShapeContext", "RuntimeInferShapeContext",
           "ExecutionContext", "EMPTY_VAR_NAME"]

EMPTY_VAR_NAME = "@EMPTY@"


def _present(names) -> list[str]:
    return [n for n in (names or ()) if n and n != EMPTY_VAR_NAME]


class InferShapeContext:
    """What `infer_shape(ctx)` may ask. Subclassed for compile time and run time."""

    def __init__(self, op):
        self.op = op

    # -- common ---------------------------------------------------------------------------
    def attr(self, name: str):
        try:
            return self.op.attrs[name]
        except KeyError:
            raise errors.NotFound("op '%s' has no attr '%s' (its attrs: %s)", self.op.type,
                                  name, ", ".join(sorted(self.op.attrs)) or "none") from None

    @property
    def attrs(self) -> dict:
        return self.op.attrs

    @property
    def op_type(self) -> str:
        return self.op.type

    def input_names(self, slot: str) -> list[str]:
        return self.op._in_present.get(slot, [])

    def output_names(self, slot: str) -> list[str]:
        return self.op._out_present.get(slot, [])

    def _one(self, names: list[str], slot: str, kind: str) -> str:
        if not names:
            raise errors.NotFound("%s(%s) of op '%s' is not set", kind, slot, self.op.type)
        if len(names) != 1:
            raise errors.InvalidArgument(
                "%s(%s) of op '%s' holds %d variables (%s); use the plural call for a "
                "duplicable slot", kind, slot, self.op.type, len(names), ", ".join(names))
        return names[0]

    def is_runtime(self) -> bool:
        raise NotImplementedError

    def _input_at(self, slot: str, i: int | None) -> str:
        names = self.input_names(slot)
        if i is None:
            return self._one(names, slot, "Input")
        if not 0 <= i < len(names):
            raise errors.NotFound("op '%s': Input(%s) has no variable %d (it holds %d)",
                                  self.op.type, slot, i, len(names))
        return names[i]

    def get_lod_levels(self, slot: str) -> list:
        """The LoD level of every variable of input `slot` (the declared lod_level at compile
        time, the LoD's depth at run time)."""
        return [self.get_lod_level(slot, i) for i in range(len(self.input_names(slot)))]

    def get_input_dim(self, slot: str) -> tuple:
        return self._dim(self._one(self.input_names(slot), slot, "Input"))

    def get_inputs_dim(self, slot: str) -> list:
        return [self._dim(n) for n in self.input_names(slot)]

    def get_output_dim(self, slot: str) -> tuple:
        return self._dim(self._one(self.output_names(slot), slot, "Output"))

    def set_output_dim(self, slot: str, dims) -> None:
        names = self.output_names(slot)
        if names:
            self._set_dim(self._one(names, slot, "Output"), dims)

    def set_outputs_dim(self, slot: str, dims_list) -> None:
        """One shape per variable of a duplicable output: either one per name the slot
        holds (`@EMPTY@` placeholders skipped) or one per present name."""
        names = _aligned_names(self.op, slot, len(dims_list))
        for n, d in zip(names, dims_list):
            if n != EMPTY_VAR_NAME:
                self._set_dim(n, d)

    def get_input_dtype(self, slot: str) -> str:
        return self._dtype(self._one(self.input_names(slot), slot, "Input"))

    def set_output_dtype(self, slot: str, dtype) -> None:
        for n in self.output_names(slot):
            self._set_dtype(n, dtype_name(dtype))

    def share_lod(self, in_slot: str, out_slot: str, i: int = 0, j: int = 0) -> None:
        ins, outs = self.input_names(in_slot), self.output_names(out_slot)
        if not outs:
            return
        if i >= len(ins):
            raise errors.NotFound("op '%s': share_lod(%s, %s): Input(%s) has no variable %d",
                                  self.op.type, in_slot, out_slot, in_slot, i)
        self._share_lod(ins[i], outs[j])


class CompileTimeInferShapeContext(InferShapeContext):
    """infer_shape on variable descriptions of a Block: shapes may hold -1, no data."""

    def __init__(self, op, block):
        super().__init__(op)
        self.block = block
        self.dtypes_set: set[str] = set()

    def is_runtime(self) -> bool:
        return False

    def _desc(self, name: str):
        v = self.block._find_var_recursive(name)
        if v is None:
            raise errors.NotFound("op '%s': variable '%s' is not in the block", self.op.type, name)
        return v

    def has_input(self, slot: str) -> bool:
        return bool(self.input_names(slot))

    def has_output(self, slot: str) -> bool:
        return bool(self.output_names(slot))

    def has_inputs(self, slot: str) -> bool:
        return bool(self.input_names(slot))

    def _dim(self, name: str):
        shape = self._desc(name).shape
        if shape is None:
            raise _UnknownShape(name)
        return tuple(shape)

    def _set_dim(self, name: str, dims) -> None:
        self._desc(name).shape = [int(d) for d in dims]

    def _dtype(self, name: str) -> str:
        return self._desc(name).dtype

    def _set_dtype(self, name: str, dtype: str) -> None:
        self._desc(name).dtype = dtype
        self.dtypes_set.add(name)

    def _share_lod(self, src: str, dst: str) -> None:
        self._desc(dst).lod_level = self._desc(src).lod_level

    def get_lod_level(self, slot: str, i: int | None = None) -> int:
        return self._desc(self._input_at(slot, i)).lod_level

    def set_lod_level(self, slot: str, level: int) -> None:
        for n in self.output_names(slot):
            self._desc(n).lod_level = int(level)


def _aligned_names(op, slot: str, count: int) -> list[str]:
    """The output names of `slot` that `count` values line up with: all of them (with
    `@EMPTY@` placeholders) or only the present ones."""
    raw = op.outputs.get(slot) or []
    if count == len(raw):
        return raw
    present = op._out_present.get(slot, [])
    if count == len(present):
        return present
    raise errors.InvalidArgument(
        "op '%s': Output(%s) holds %d variables (%d of them needed) but %d values were given",
        op.type, slot, len(raw), len(present), count)


class _UnknownShape(Exception):
    """A compile-time input has no shape yet: infer_shape is skipped for that op."""


class RuntimeInferShapeContext(InferShapeContext):
    """infer_shape at run time, on the tensors in the scope."""

    def __init__(self, op, scope):
        self.op = op
        self.scope = scope
        self.expected_dims: dict[str, tuple] = {}
        self.expected_dtypes: dict[str, str] = {}
        self.lod_sources: dict[str, str] = {}

    def is_runtime(self) -> bool:
        return True

    def has_input(self, slot: str) -> bool:
        names = self.op._in_present.get(slot)
        return bool(names) and all(self.scope.find_var(n) is not None for n in names)

    has_inputs = has_input

    def has_output(self, slot: str) -> bool:
        return bool(self.output_names(slot))

    def _value(self, name: str):
        var = self.scope.find_var(name)
        if var is None or not var.is_initialized():
            raise self.op.uninitialized_error(name)
        return var.value()

    def _dim(self, name: str) -> tuple:
        v = self._value(name)
        if isinstance(v, SelectedRows):
            return tuple(v.get_complete_dims())
        if isinstance(v, LoDTensorArray):
            raise errors.InvalidArgument("op '%s': variable '%s' is a LoDTensorArray, it has no "
                                         "single shape", self.op.type, name)
        return tuple(v.shape)

    def _set_dim(self, name: str, dims) -> None:
        self.expected_dims[name] = tuple(int(d) for d in dims)

    def _dtype(self, name: str) -> str:
        return dtype_name(self._value(name).dtype)

    def _set_dtype(self, name: str, dtype: str) -> None:
        self.expected_dtypes[name] = dtype

    def _share_lod(self, src: str, dst: str) -> None:
        self.lod_sources[dst] = src

    def get_lod_level(self, slot: str, i: int | None = None) -> int:
        v = self._value(self._input_at(slot, i))
        return len(v.lod) if isinstance(v, LoDTensor) else 0

    def set_lod_level(self, slot: str, level: int) -> None:
        pass  # the run-time LoD is set by the kernel


class ExecutionContext:
    """What a kernel sees: its inputs (read-only), outputs, attrs, place, dtype and xp."""

    __slots__ = ("op", "scope", "place", "device_context", "xp", "_infer", "enable_inplace",
                 "written", "_read_slots", "_arrays", "_tensors", "hooked", "kernel_entry",
                 "_kernel_type")

    def __init__(self, op, scope, place, device_context, kernel_type, infer_ctx,
                 enable_inplace: bool = False):
        self.op = op
        self.scope = scope
        self.place = place
        self.device_context = device_context
        self._kernel_type = kernel_type
        self.kernel_entry = None
        self.xp = device_context.xp
        self._infer = infer_ctx
        self.enable_inplace = enable_inplace
        self.written: dict = {}  # output name -> its Variable (None: look it up)
        self._tensors: dict = {}  # input name -> its LoDTensor, once read
        self._read_slots: set[str] = set()  # slots read other than through _tensor's fast path
        self._arrays: dict[str, object] = {}
        self.hooked: list | None = None  # output tensors handed out by output_tensor()

    @property
    def read_inputs(self) -> set:
        """The input slots the kernel has read so far (data, tensor or variable)."""
        read = set(self._read_slots)
        for slot, names in self.op._in_present.items():
            if any(n in self._tensors for n in names):
                read.add(slot)
        return read

    @property
    def kernel_type(self):
        if self._kernel_type is None and self.kernel_entry is not None:
            from opkit.framework.kernel_type import OpKernelType

            e = self.kernel_entry
            self._kernel_type = OpKernelType(e.dtype, self.place, e.layout, e.library)
        return self._kernel_type

    @kernel_type.setter
    def kernel_type(self, value):
        self._kernel_type = value

    def declared_output_dtype(self, name: str):
        """The dtype infer_shape declared for output variable `name` (set_output_dtype), or
        None (then a float output has the kernel's dtype)."""
        return self._infer.expected_dtypes.get(name) if self._infer is not None else None

    @property
    def dtype(self):
        if self.kernel_entry is not None:
            return self.kernel_entry.np_dtype
        kt = self._kernel_type
        return np.dtype(kt.dtype) if kt is not None else None

    @property
    def op_type(self) -> str:
        return self.op.type

    @property
    def attrs(self) -> dict:
        return self.op.attrs

    def attr(self, name: str):
        try:
            return self.op.attrs[name]
        except KeyError:
            raise errors.NotFound("op '%s' has no attr '%s' (its attrs: %s)", self.op.type,
                                  name, ", ".join(sorted(self.op.attrs)) or "none") from None

    # -- inputs ---------------------------------------------------------------------------
    def has_input(self, name: str) -> bool:
        names = self.op._in_present.get(name)
        return bool(names) and all(self.scope.find_var(n) is not None for n in names)

    def has_output(self, name: str) -> bool:
        return bool(self.op._out_present.get(name))

    def input_names(self, slot: str) -> list[str]:
        return self.op._in_present.get(slot, [])

    def output_names(self, slot: str) -> list[str]:
        return self.op._out_present.get(slot, [])

    def _input_name(self, slot: str, allow_missing: bool):
        names = self.op._in_present.get(slot)
        if not names:
            if allow_missing:
                return None
            proto = self.op.info.proto if self.op.info else None
            vp = proto.input(slot) if proto else None
            if vp is not None and vp.dispensable:
                return None
            raise errors.NotFound("op '%s' has no Input(%s)", self.op.type, slot)
        if len(names) > 1:
            raise errors.InvalidArgument(
                "op '%s': Input(%s) holds %d variables; use ctx.inputs('%s')", self.op.type,
                slot, len(names), slot)
        return names[0]

    def input_var(self, name: str):
        """The Variable of input slot `name` (for SelectedRows, LoDTensorArray)."""
        slot = name
        var_name = self._input_name(slot, allow_missing=True)
        if var_name is None:
            return None
        var = self.scope.find_var(var_name)
        if var is None:
            raise self.op.uninitialized_error(var_name)
        self._read_slots.add(slot)
        return var

    def input_tensor(self, name: str) -> LoDTensor | None:
        """The LoDTensor of input slot `name`."""
        var_name = self._input_name(name, allow_missing=True)
        if var_name is None:
            return None
        return self._tensor(var_name, name)

    def _tensor(self, name: str, slot: str) -> LoDTensor:
        var = self.scope.find_var(name)
        value = var._value if var is not None else None
        if value.__class__ is LoDTensor and value._data is not None:  # the common case
            self._tensors[name] = value
            return value
        if value is None or not var.is_initialized():
            raise self.op.uninitialized_error(name)
        if isinstance(value, SelectedRows):
            value = value.value
        if not isinstance(value, LoDTensor):
            raise errors.InvalidArgument(
                "op '%s': Input(%s) variable '%s' holds %s, not a LoDTensor (use "
                "ctx.input_var)", self.op.type, slot, name, type(value).__name__)
        self._read_slots.add(slot)
        return value

    def _array(self, name: str, slot: str):
        arr = self._arrays.get(name)
        if arr is not None:
            return arr
        tensor = self._tensor(name, slot)
        try:
            arr = tensor.data
        except errors.EnforceNotMet as exc:
            raise errors.PreconditionNotMet(
                "kernel read the data of Input(%s) variable '%s', which the op declared "
                "no_need_buffer (only its shape, dtype and LoD may be used): %s",
                slot, name, exc.raw_message).with_context(self.op.type, name) from None
        if arr.__class__ is np.ndarray and self.place.kind == "CPU":  # the common case
            ro = tensor._ro
            if ro is not None and ro[0] is arr:
                arr = ro[1]
            elif arr.flags.writeable:
                view = arr.view()
                view.setflags(False)  # positional: numpy parses a keyword ~1 us slower
                tensor._ro = (arr, view)
                arr = view
        else:
            arr = self.op.prepare_input_array(arr, self.place)
        self._arrays[name] = arr
        return arr

    def override_input(self, var_name: str, array) -> None:
        """Public hook seam: what `input`/`inputs` hand out for variable `var_name` in this run.

        For checks that observe a kernel (a guarded copy of an input, say) from
        `KernelHooks.before_kernel`; the variable in the scope is not touched."""
        self._arrays[var_name] = array

    def input(self, name: str):
        """The input's data as a read-only array, or None for an absent dispensable input."""
        var_name = self._input_name(name, allow_missing=False)
        if var_name is None:
            return None
        return self._array(var_name, name)

    def inputs(self, name: str) -> list:
        """The data of a duplicable input slot `name`, one read-only array per variable."""
        return [self._array(n, name) for n in self.op._in_present.get(name, ())]

    def input_tensors(self, slot: str) -> list:
        return [self._tensor(n, slot) for n in self.op._in_present.get(slot, ())]

    # -- outputs --------------------------------------------------------------------------
    def _output_name(self, slot: str, index: int = 0):
        names = self.op.outputs.get(slot)
        if not names:
            proto = self.op.info.proto if self.op.info else None
            if proto is not None and proto.output(slot) is None:
                raise errors.NotFound("op '%s' has no Output(%s) (its outputs: %s)", self.op.type,
                                      slot, ", ".join(v.name for v in proto.outputs) or "none")
            return None
        return names[index]

    def output_var(self, slot: str, index: int = 0):
        name = self._output_name(slot, index)
        if name is None or name == EMPTY_VAR_NAME:
            return None
        var = self.scope.find_var(name) or self.scope.var(name)
        self.written[name] = var
        return var

    def set_output(self, name: str, array, lod=None) -> None:
        """Store `array` as output slot `name` (keeping the LoD share_lod gave it unless
        `lod`)."""
        names = self.op.outputs.get(name)
        var_name = names[0] if names else self._output_name(name)
        if var_name is None or var_name == EMPTY_VAR_NAME:
            return
        self._store(var_name, array, lod)

    def set_outputs(self, slot: str, arrays, lods=None) -> None:
        """Arrays for a duplicable output: one per name the slot holds (`@EMPTY@`
        placeholders skipped, their arrays may be None) or one per present name."""
        names = _aligned_names(self.op, slot, len(arrays))
        for i, (n, a) in enumerate(zip(names, arrays)):
            if n and n != EMPTY_VAR_NAME:
                self._store(n, a, lods[i] if lods else None)

    def _store(self, name: str, array, lod) -> None:
        var = self.scope.find_var(name) or self.scope.var(name)
        tensor = var._value
        if not isinstance(tensor, LoDTensor):
            tensor = LoDTensor()
            var.set_value(tensor)
        if array.__class__ is not np.ndarray:
            xp = self.xp
            if not isinstance(array, xp.ndarray):
                array = xp.asarray(array)
        tensor._data = array
        tensor._ro = None
        tensor._meta = None
        tensor._no_data_reason = None
        tensor._place = self.place
        self.written[name] = var
        self._set_lod(tensor, name, lod)

    def _set_lod(self, tensor: LoDTensor, name: str, lod) -> None:
        if lod is not None:
            tensor._lod = validate_lod(lod, tensor.shape[0] if tensor.shape else None,
                                       f"op '{self.op.type}' output '{name}'")
            return
        src = self._infer.lod_sources.get(name)
        if src is None:
            tensor._lod = []
            return
        src_tensor = self._tensors.get(src)
        if src_tensor is not None:
            src_lod = src_tensor._lod
        else:
            src_var = self.scope.find_var(src)
            src_lod = getattr(src_var._value, "_lod", None) if src_var is not None else None
        tensor._lod = [list(level) for level in src_lod] if src_lod else []

    def output_tensor(self, name: str, index: int = 0) -> LoDTensor | None:
        """The output LoDTensor, for `mutable_data(shape, dtype)` and `set_lod`."""
        slot, name = name, self._output_name(name, index)
        if name is None or name == EMPTY_VAR_NAME:
            return None
        var = self.scope.find_var(name) or self.scope.var(name)
        if not isinstance(var.value(), LoDTensor):
            var.set_value(LoDTensor())
        tensor = var.value()
        tensor._alloc = lambda shape, dtype: self._allocate(slot, name, tensor, shape, dtype)
        if self.hooked is None:
            self.hooked = []
        self.hooked.append(tensor)
        return tensor

    def _allocate(self, slot: str, name: str, tensor: LoDTensor, shape, dtype):
        if shape is None:
            shape = self._infer.expected_dims.get(name)
            if shape is None or any(d < 0 for d in shape):
                raise errors.InvalidArgument(
                    "op '%s': mutable_data() on Output(%s) needs a shape: infer_shape did not "
                    "set a complete one", self.op.type, slot)
        shape = tuple(int(d) for d in shape)
        dtype = np.dtype(dtype) if dtype is not None else self.dtype
        buffer = self._inplace_buffer(slot, shape, dtype) if self.enable_inplace else None
        if buffer is None:
            buffer = self.xp.empty(shape, dtype=dtype)
        tensor._data = buffer
        tensor._ro = None
        tensor._meta = None
        tensor._no_data_reason = None
        tensor._place = self.place
        self.written[name] = None
        self._set_lod(tensor, name, None)
        return buffer

    def _inplace_buffer(self, out_slot: str, shape, dtype):
        info = self.op.info
        for in_slot, o in (info.inplace.items() if info else ()):
            if o != out_slot:
                continue
            in_name = self._input_name(in_slot, allow_missing=True)
            if in_name is None:
                return None
            base = self._tensor(in_name, in_slot).data
            if base.dtype == dtype and base.size == int(np.prod(shape)) and \
                    getattr(base, "flags", None) is not None and base.flags.c_contiguous:
                if isinstance(base, np.ndarray) and not base.flags.writeable:
                    return None
                return base.reshape(shape)
        return None

    def __repr__(self):
        return f"ExecutionContext(op={self.op.type}, place={self.place}, dtype={self.kernel_type})"
