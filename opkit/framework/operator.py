"""Operators: OperatorBase (run_impl) and OperatorWithKernel (infer_shape -> kernel)."""
from __future__ import annotations

import numpy as np

from opkit.framework import errors
from opkit.framework.context import (CompileTimeInferShapeContext, ExecutionContext,
                                     RuntimeInferShapeContext, _present)
from opkit.framework.device import DeviceContextPool, is_device_array, to_device
from opkit.framework.dtypes import is_float
from opkit.framework.kernel_type import OpKernelType, dtype_name
from opkit.framework.tensor import LoDTensor, SelectedRows

__all__ = ["OperatorBase", "OperatorWithKernel", "create_op"]


def _names(value) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [v if isinstance(v, str) else v.name for v in value]
    return [value if isinstance(value, str) else value.name]


class OperatorBase:
    """An op instance: type, input/output variable names per slot, checked attrs."""

    def __init__(self, type: str, inputs=None, outputs=None, attrs=None, info=None):
        from opkit.framework.registry import op_info

        self.type = type
        self.info = info if info is not None else op_info(type)
        self.inputs = {k: _names(v) for k, v in (inputs or {}).items()}
        self.outputs = {k: _names(v) for k, v in (outputs or {}).items()}
        self._in_present = {k: _present(v) for k, v in self.inputs.items()}
        self._out_present = {k: _present(v) for k, v in self.outputs.items()}
        proto = self.info.proto
        self.attrs = proto.check_attrs(attrs) if proto is not None else dict(attrs or {})
        if proto is not None:
            self._check_slots(proto)

    def _check_slots(self, proto) -> None:
        for kind, given, declared in (("input", self.inputs, proto.inputs),
                                      ("output", self.outputs, proto.outputs)):
            known = {v.name: v for v in declared}
            for slot, names in given.items():
                vp = known.get(slot)
                if vp is None:
                    raise errors.InvalidArgument(
                        "op '%s' has no %s slot '%s' (its %ss: %s)", self.type, kind, slot,
                        kind, ", ".join(known) or "none")
                if len(names) > 1 and not vp.duplicable:
                    raise errors.InvalidArgument(
                        "op '%s': %s '%s' is not duplicable but was given %d variables",
                        self.type, kind, slot, len(names))
            for vp in declared:
                if not vp.dispensable and not _present(given.get(vp.name)) and kind == "input":
                    raise errors.InvalidArgument("op '%s': input '%s' is required but not given",
                                                 self.type, vp.name)

    # -- names ----------------------------------------------------------------------------
    def input(self, slot: str) -> str | None:
        names = _present(self.inputs.get(slot))
        return names[0] if names else None

    def input_list(self, slot: str) -> list[str]:
        return _present(self.inputs.get(slot))

    def output(self, slot: str) -> str | None:
        names = _present(self.outputs.get(slot))
        return names[0] if names else None

    def output_list(self, slot: str) -> list[str]:
        return _present(self.outputs.get(slot))

    def input_arg_names(self) -> list[str]:
        return [n for names in self.inputs.values() for n in _present(names)]

    def output_arg_names(self) -> list[str]:
        return [n for names in self.outputs.values() for n in _present(names)]

    def attr(self, name: str):
        return self.attrs[name]

    def slot_of(self, var_name: str) -> str | None:
        for slot, names in list(self.inputs.items()) + list(self.outputs.items()):
            if var_name in names:
                return slot
        return None

    # -- running --------------------------------------------------------------------------
    def run(self, scope, place, **options) -> None:
        """Run the op; any error gets the op type (and variable) in front of its message."""
        try:
            self.run_impl(scope, place, **options)
        except Exception as exc:
            raise self.error_in_run(exc) from exc

    def error_in_run(self, exc: Exception) -> Exception:
        """`exc`, raised while this op ran, as the error to raise: an opkit error gets the op
        type in front of its message; any other error becomes External naming the op."""
        if isinstance(exc, errors.EnforceNotMet):
            return exc.with_context(self.type)
        if isinstance(exc, errors.EmptyMessageError):
            return exc
        return errors.External("%s: %s", type(exc).__name__, exc).with_context(self.type)

    def run_impl(self, scope, place, **options) -> None:
        raise errors.Unimplemented("op '%s' (%s) must override run_impl(scope, place)", self.type,
                                   type(self).__name__)

    def infer_shape(self, ctx) -> None:
        """Compile-time and run-time shape inference; ops without one infer nothing."""

    # -- compile time ---------------------------------------------------------------------
    def compile_time_infer_shape(self, block) -> None:
        from opkit.framework.context import _UnknownShape

        ctx = CompileTimeInferShapeContext(self, block)
        try:
            self.infer_shape(ctx)
        except _UnknownShape:
            pass
        except errors.EnforceNotMet as exc:
            raise exc.with_context(self.type)  # noqa: B904  (the same error, re-raised)
        except errors.EmptyMessageError:
            raise
        except Exception as exc:
            raise errors.External("infer_shape raised %s: %s", type(exc).__name__,
                                  exc).with_context(self.type) from exc

    def uninitialized_error(self, var_name: str) -> errors.EnforceNotMet:
        slot = self.slot_of(var_name)
        where = f"Input({slot}) " if slot else ""
        return errors.PreconditionNotMet(
            "%svariable '%s' of op '%s' is not initialized: it was never fed, computed by an "
            "earlier op, or created by the startup program", where, var_name,
            self.type).with_context(self.type, var_name)

    def __repr__(self):
        return f"{type(self).__name__}(type={self.type!r}, inputs={self.inputs}, " \
               f"outputs={self.outputs}, attrs={self.attrs})"


class OperatorWithKernel(OperatorBase):
    """An op computed by a kernel chosen by OpKernelType(dtype, place, layout, library)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._kernel_cache: dict = {}
        self._fast_kernels: dict = {}
        self._input_list = [(slot, n) for slot, names in self._in_present.items() for n in names]
        self._shape_cache_key = None
        self._shape_cache = None
        # the last verified run: (input signature, place, enable_inplace, infer ctx, kernel
        # entry, device context, the kernel's place). A run with the same signature reuses all of it and skips
        # re-verifying the outputs (they were checked when the signature was first seen).
        self._verified = None
        # ops that keep the default kernel-type rule skip building an OpKernelType per run
        self._default_kernel_rule = (type(self).get_expected_kernel_type is
                                     OperatorWithKernel.get_expected_kernel_type)

    # -- hooks op authors override ---------------------------------------------------------
    def get_expected_kernel_type(self, ctx) -> OpKernelType:
        return OpKernelType(self._default_data_type(ctx), ctx.place)

    def indicate_var_data_type(self, ctx, slot: str) -> str:
        """The dtype of input `slot`, checking that its variable is initialized."""
        names = self._in_present.get(slot)
        if not names:
            raise errors.NotFound("op '%s': Input(%s) is not set, its dtype cannot choose the "
                                  "kernel", self.type, slot)
        var = ctx.scope.find_var(names[0])
        if var is None or not var.is_initialized():
            raise self.uninitialized_error(names[0])
        value = var.value()
        dtype = getattr(value, "dtype", None)
        if dtype is None:
            raise errors.InvalidArgument("op '%s': Input(%s) variable '%s' holds %s, which has "
                                         "no dtype", self.type, slot, names[0],
                                         type(value).__name__)
        return dtype_name(dtype)

    # -- the run --------------------------------------------------------------------------
    def _scan_inputs(self, scope):
        """One pass over the inputs: the key of the infer_shape cache (each input's shape,
        dtype and LoD level; None when an input is not a plain tensor) and the default
        kernel dtype (the first float input's, else the first input's) as (name, dtype)."""
        sig = []
        cacheable = True
        first = None
        find = scope.find_var
        for _, n in self._input_list:
            var = find(n)
            value = var._value if var is not None else None
            if value.__class__ is LoDTensor:
                data = value._data
                if data is not None:
                    dtype = data.dtype
                    sig.append((data.shape, dtype, len(value._lod)))
                elif value._meta is not None:
                    dtype = value._meta[1]
                    sig.append((value._meta[0], dtype, len(value._lod)))
                else:
                    cacheable = False
                    continue
            elif isinstance(value, (LoDTensor, SelectedRows)) and value.is_initialized():
                cacheable = False
                dtype = value.dtype
            else:
                cacheable = False
                continue
            if first is None:
                first = (n, dtype)
            elif dtype.kind in "fc":
                if first[1].kind not in "fc":
                    first = (n, dtype)
                elif dtype != first[1] and len(first) == 2:
                    first = (*first, n, dtype)  # a conflict, an error if the default rule runs
        return (tuple(sig) if cacheable else None), first

    def _default_data_type(self, ctx, first=False) -> str:
        if first is False:
            first = self._scan_inputs(ctx.scope)[1]
        if first is None:
            raise errors.PreconditionNotMet(
                "op '%s' has no initialized input to choose its kernel's data type from; "
                "feed its inputs, or override get_expected_kernel_type", self.type)
        if len(first) == 4:
            raise errors.InvalidArgument(
                "op '%s': the data types of its inputs differ (%s is %s, %s is %s); "
                "override get_expected_kernel_type to say which one picks the kernel",
                self.type, *first)
        return dtype_name(first[1])

    def choose_kernel(self, kernel_type: OpKernelType):
        key = kernel_type.key()
        entry = self._kernel_cache.get(key)
        if entry is not None:
            return entry
        kernels = self.info.kernels
        entry = kernels.get(key)
        if entry is None and kernel_type.place.kind == "GPU":
            entry = kernels.get((key[0], "CPU", key[2], key[3]))  # fall back to the CPU kernel
        if entry is None:
            raise errors.NotFound(
                "op '%s' has no kernel for %s on %s (layout %s, library %s); registered "
                "kernels: %s", self.type, kernel_type.dtype, kernel_type.place.kind,
                kernel_type.layout, kernel_type.library, self.info.describe_kernels())
        self._kernel_cache[key] = entry
        return entry

    def prepare_input_array(self, array, place):
        """The array as the kernel sees it: on the kernel's place, read-only on the CPU."""
        if place.kind == "CPU":
            if array.__class__ is not np.ndarray and is_device_array(array):
                array = to_device(array, place)
            if array.flags.writeable and isinstance(array, np.ndarray):
                array = array.view()
                array.flags.writeable = False
            return array
        if not is_device_array(array):
            array = to_device(array, place)
        return array

    def runtime_infer_shape(self, scope, key=False) -> RuntimeInferShapeContext:
        """Run infer_shape on the scope's tensors (reusing the last result when every input
        has the same shape, dtype and LoD level as last time: infer_shape sees nothing else)."""
        if key is False:
            key = self._scan_inputs(scope)[0]
        if key is not None and key == self._shape_cache_key:
            ctx = self._shape_cache  # read-only after infer_shape: only the scope changes
            ctx.scope = scope
            return ctx
        ctx = RuntimeInferShapeContext(self, scope)
        self.infer_shape(ctx)
        if key is not None:
            self._shape_cache_key = key
            self._shape_cache = ctx
        return ctx

    def _matches(self, scope, key) -> bool:
        """Whether every input has the shape, dtype and LoD level recorded in `key` (the
        signature of a verified run): _scan_inputs' answer, without building it."""
        find = scope.find_var
        for (_, n), (shape, dtype, levels) in zip(self._input_list, key):
            var = find(n)
            value = var._value if var is not None else None
            if value.__class__ is not LoDTensor:
                return False
            data = value._data
            if data is None or data.shape != shape or len(value._lod) != levels:
                return False
            actual = data.dtype
            if actual is not dtype and actual != dtype:
                return False
        return True

    def run_impl(self, scope, place, enable_inplace: bool = False, hooks=None) -> None:
        verified = self._verified
        if verified is not None and (verified[1] is place or verified[1] == place) and \
                verified[2] == enable_inplace and self._matches(scope, verified[0]):
            # the fast path: same input signature as a verified run -> same infer_shape
            # result, same kernel, outputs already verified for this signature
            infer_ctx = verified[3]
            infer_ctx.scope = scope
            entry = verified[4]
            ctx = ExecutionContext(self, scope, verified[6], verified[5], None, infer_ctx,
                                   enable_inplace)
            ctx.kernel_entry = entry
            try:
                if hooks is not None:
                    hooks.before_kernel(self, ctx)
                if entry.place == "GPU":
                    with ctx.device_context:
                        entry.fn(ctx)
                else:
                    entry.fn(ctx)
                if ctx.hooked:
                    for tensor in ctx.hooked:
                        tensor._alloc = None
                if hooks is not None:  # checks observing the kernel see every run verified
                    self._check_outputs(ctx, infer_ctx, entry)
                    hooks.after_kernel(self, ctx)
            finally:
                infer_ctx.scope = None  # the cached context must not keep the run's scope alive
            return
        key, first = self._scan_inputs(scope)
        try:
            self._run_and_verify(scope, place, enable_inplace, hooks, key, first)
        finally:
            cached = self._shape_cache
            if cached is not None:
                cached.scope = None

    def _run_and_verify(self, scope, place, enable_inplace, hooks, key, first) -> None:
        """The full run: infer_shape (or its cached result), kernel choice, kernel, output
        checks; remembered as verified for this input signature when all of it passed."""
        self._verified = None
        if key is not None and key == self._shape_cache_key:  # runtime_infer_shape, inlined
            infer_ctx = self._shape_cache
            infer_ctx.scope = scope
        else:
            infer_ctx = self.runtime_infer_shape(scope, key)
        pool = DeviceContextPool._instance or DeviceContextPool.instance()
        device_context = pool._contexts.get(place) or pool.get(place)
        ctx = ExecutionContext(self, scope, place, device_context, None, infer_ctx,
                               enable_inplace)
        kernel_type = None
        if self._default_kernel_rule:
            # keyed by the dtype object and place: no dtype-name lookup per run
            fast_key = (first[1], place) if first is not None and len(first) == 2 else None
            entry = self._fast_kernels.get(fast_key)
            if entry is None:
                entry = self._kernel_cache.get((self._default_data_type(ctx, first),
                                                place.kind, "ANY", "PLAIN"))
                if entry is None:
                    kernel_type = self.get_expected_kernel_type(ctx)
                    entry = self.choose_kernel(kernel_type)
                if fast_key is not None:
                    self._fast_kernels[fast_key] = entry
        else:
            kernel_type = self.get_expected_kernel_type(ctx)
            entry = self.choose_kernel(kernel_type)
        run_place = place
        if entry.place != place.kind:  # CPU fallback for an op without a GPU kernel
            from opkit.framework.place import CPUPlace

            run_place = CPUPlace()
            device_context = DeviceContextPool.instance().get(run_place)
            ctx = ExecutionContext(self, scope, run_place, device_context, None, infer_ctx,
                                   enable_inplace)
        ctx.kernel_type = kernel_type
        ctx.kernel_entry = entry
        if hooks is not None:
            hooks.before_kernel(self, ctx)
        if run_place.kind == "GPU":
            with ctx.device_context:
                entry.fn(ctx)
        else:
            entry.fn(ctx)
        if ctx.hooked:
            for tensor in ctx.hooked:
                tensor._alloc = None
        self._check_outputs(ctx, infer_ctx, entry)
        if hooks is not None:
            hooks.after_kernel(self, ctx)
        if key is not None and infer_ctx is self._shape_cache:
            self._verified = (key, place, enable_inplace, infer_ctx, entry, device_context,
                              run_place)

    def _check_outputs(self, ctx, infer_ctx, entry) -> None:
        """Every output infer_shape declared was produced, with the declared dims (-1 = any)
        and dtype (set_output_dtype, else the kernel's for float outputs)."""
        find = ctx.scope.find_var
        written = ctx.written
        kernel_dtype = entry.np_dtype
        expected_dtypes = infer_ctx.expected_dtypes
        expected_dims = infer_ctx.expected_dims
        for name, dims in expected_dims.items():
            var = written.get(name) or find(name)
            value = var._value if var is not None else None
            if name not in written:
                if value is None or not var.is_initialized():
                    raise errors.KernelPreconditionNotMet(
                        "the %s kernel did not produce output variable '%s' (Output(%s)), which "
                        "infer_shape declared", entry.describe(), name,
                        self.slot_of(name)).with_context(self.type, name)
                continue
            if value.__class__ is not LoDTensor or value._data is None:
                continue
            data = value._data
            shape = data.shape
            if shape != dims and (len(shape) != len(dims) or
                                  any(d >= 0 and d != s for d, s in zip(dims, shape))):
                raise errors.KernelInvalidArgument(
                    "the %s kernel produced Output(%s) variable '%s' of shape %s, but "
                    "infer_shape says %s", entry.describe(), self.slot_of(name), name,
                    list(shape), list(dims)).with_context(self.type, name)
            if data.dtype is not kernel_dtype or expected_dtypes:
                self._check_dtype(name, data.dtype, kernel_dtype, expected_dtypes, entry)
        if len(written) > len(expected_dims):
            for name in written:
                if name in expected_dims:
                    continue
                var = find(name)
                value = var._value if var is not None else None
                if isinstance(value, LoDTensor) and value._data is not None:
                    self._check_dtype(name, value._data.dtype, kernel_dtype, expected_dtypes,
                                      entry)

    def _check_dtype(self, name, actual, kernel_dtype, expected_dtypes, entry) -> None:
        expected = expected_dtypes.get(name)
        if expected is not None:
            if actual != expected:
                raise errors.KernelInvalidArgument(
                    "the %s kernel produced Output(%s) variable '%s' as %s, but "
                    "infer_shape says %s", entry.describe(), self.slot_of(name), name,
                    actual, expected).with_context(self.type, name)
        elif actual != kernel_dtype and is_float(kernel_dtype) and is_float(actual):
            raise errors.KernelInvalidArgument(
                "the %s kernel produced Output(%s) variable '%s' as %s; a float output of "
                "a %s kernel must be %s (or declared with set_output_dtype in "
                "infer_shape)", entry.describe(), self.slot_of(name), name, actual,
                entry.dtype, entry.dtype).with_context(self.type, name)


def create_op(type: str, inputs=None, outputs=None, attrs=None) -> OperatorBase:
    """An Operator instance of the registered class of `type`."""
    from opkit.framework.registry import op_info

    info = op_info(type)
    return info.op_class(type, inputs, outputs, attrs, info=info)
