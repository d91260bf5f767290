"""Paddle's spelling of the OpTest API on `harness.OpTest` (the plugin adds it through the
harness's seam `optest_surface`, harness.spec.PLUGIN_ATTRIBUTES): what Paddle's own OpTest
files call, mapped onto opkit's checks (docs/paddle.md, "Paddle's spelling on every
OpTest"). What opkit cannot run (float16 or bfloat16 without a kernel, complex dtypes,
MKLDNN in the Paddle mode, Paddle-only executors) is skipped with a reason
(`unittest.SkipTest`), never passed silently and never run in another dtype ("Never passed
silently" there). Also Paddle's bfloat16 carrier: uint16 bits as real bfloat16 arrays.
"""
from __future__ import annotations

import functools
import unittest

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import normalize_slots
from harness.backend.seam import make
from harness.options import override
from harness.checks.catalog import check_names
from opkit.framework.dtypes import bfloat16
from opkit.framework.place import CPUPlace, CUDAPlace, Place, place_kind

__all__ = ["PaddleSurface", "optest_surface", "PADDLE_IGNORED_KEYWORDS", "unsupported_reason",
           "data_dtypes", "as_bfloat16", "as_uint16", "as_bfloat16_slots"]

#: check_output / check_grad keywords of Paddle that select Paddle-only executors or
#: modes; accepted and ignored (opkit's own check runs).
PADDLE_IGNORED_KEYWORDS = ("check_dygraph", "check_eager", "check_pir", "check_prim",
                           "check_cinn", "check_auto_parallel", "check_new_ir",
                           "check_prim_pir", "check_pir_onednn", "check_symbol_infer",
                           "inplace_atol", "in_place", "user_defined_grad_outputs",
                           "only_check_prim", "numeric_place", "atol_for_dtype")

_BF16 = "bfloat16: the op has no bfloat16 kernel in opkit (Paddle stores bfloat16 as uint16)"
_FP16 = ("float16: the op has no float16 kernel in opkit (the class would otherwise run as "
         "float32/float64)")
_MKLDNN = "MKLDNN/oneDNN kernels (use_mkldnn=True) are Paddle-only"
_COMPLEX = "{dtype}: op '{op}' has no {dtype} kernel in opkit (Paddle-only complex kernels)"


def _complex_reason(test) -> str | None:
    """A test whose data (or `dtype`) are complex, for an op without a complex kernel of
    that dtype: skipped (as float16), not run as a real-valued test or failed as a
    missing kernel."""
    found = [d for d in data_dtypes(getattr(test, "inputs", None)) if d.kind == "c"]
    dtype = getattr(test, "dtype", None)
    try:
        if dtype is not None and np.dtype(dtype).kind == "c":
            found.append(np.dtype(dtype))
    except TypeError:
        pass
    if not found:
        return None
    op = getattr(test, "op_type", None)
    try:
        have = {d for ds in backends.declared().kernel_places(op).values() for d in ds} \
            if op else set()
    except Exception:  # noqa: BLE001 - an unknown op is the check's to report
        have = set()
    missing = [d for d in found if d.name not in have]
    return _COMPLEX.format(dtype=missing[0].name, op=op) if missing else None


def _map_arrays(value, fn):
    """A slot's value in any of OpTest's forms with `fn` applied to each of its arrays."""
    if isinstance(value, list):
        return [_map_arrays(v, fn) for v in value]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return (value[0], _map_arrays(value[1], fn))    # (name, data) of a duplicable slot
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
        return (fn(value[0]), value[1])                 # (array, LoD)
    return fn(value) if isinstance(value, np.ndarray) else value


def data_dtypes(slots) -> list:
    """The dtypes of the arrays in an OpTest's inputs/outputs dict (any of its forms)."""
    found = []
    _map_arrays(list((slots or {}).values()), lambda a: found.append(a.dtype))
    return found


def _is(dtype, target) -> bool:
    try:
        return dtype is not None and np.dtype(dtype) == np.dtype(target)
    except TypeError:
        return False


def _has_kernel(test, dtype: str) -> bool:
    """Whether the test's op has a `dtype` kernel on some place (then a float16 / bfloat16
    test runs in that dtype instead of skipping)."""
    try:
        return any(dtype in ds for ds in
                   backends.declared().kernel_places(test.op_type).values())
    except Exception:  # noqa: BLE001 - no such op: the caller reports it
        return False


def _kernels_of(test) -> str:
    """Where the kernels looked for are another backend's (an op opkit lacks, run on the
    Paddle backend): say so."""
    from harness.backend.dispatch import selected, selector

    if not selector():          # the default backend: the kernels are opkit's own
        return ""
    return (f" (on the {selected()} backend that dtype runs where opkit's op has the kernel, "
            f"or, for an op opkit lacks, where the backend has it)")


def unsupported_reason(test, mkldnn: bool = False) -> str | None:
    """Why opkit cannot run this test's checks (bfloat16, float16), or None. With
    `mkldnn=True` (Paddle's own test files, where `use_mkldnn=True` asks for Paddle's
    MKLDNN kernels) also a test that requests MKLDNN; opkit's own OpTests may set the extra
    attr `use_mkldnn`, which opkit's kernels accept and ignore."""
    if test.is_bfloat16_op() and not _has_kernel(test, "bfloat16"):
        return _BF16 + _kernels_of(test)
    if test.is_float16_op() and not _has_kernel(test, "float16"):
        return _FP16 + _kernels_of(test)
    asks_mkldnn = mkldnn and (getattr(test, "use_mkldnn", False) is True or
                              (getattr(test, "attrs", None) or {}).get("use_mkldnn") is True)
    return _complex_reason(test) or (_MKLDNN if asks_mkldnn else None)


def _accept_paddle_keywords(method):
    """`method` (check_output or check_grad of an OpTest class) also taking Paddle's
    keywords; a test opkit cannot run is skipped with the reason."""
    import inspect

    try:      # a keyword the method itself declares (user_defined_grad_outputs) reaches it
        own = set(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        own = set()

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        __tracebackhide__ = True     # pytest: a failure's traceback ends in the user's test
        paddle_kw = {k: kwargs.pop(k) for k in PADDLE_IGNORED_KEYWORDS
                     if k in kwargs and k not in own}
        if paddle_kw.get("only_check_prim"):
            raise unittest.SkipTest("only_check_prim=True: Paddle's prim (composite "
                                    "operator) mode is Paddle-only")
        reason = unsupported_reason(self)
        if reason:
            raise unittest.SkipTest(reason)
        return method(self, *args, **kwargs)

    wrapper.__opkit_paddle_keywords__ = True
    return wrapper


class PaddleSurface:
    """Paddle's OpTest API on top of opkit's `check_output` / `check_grad`."""

    #: Paddle's class attribute: the dtype the test's data are in (None: from the inputs)
    dtype = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in ("check_output", "check_grad"):
            method = cls.__dict__.get(name)
            if callable(method) and not getattr(method, "__opkit_paddle_keywords__", False):
                setattr(cls, name, _accept_paddle_keywords(method))

    #: skip tests that request MKLDNN (`use_mkldnn=True`): True in the Paddle mode's OpTest
    paddle_skip_mkldnn = False

    @property
    def opkit_skip(self):
        """{check: reason} for `opkit test`: every check of a case opkit cannot run
        (float16, bfloat16; MKLDNN in the Paddle mode) is skipped with the reason, so its
        runtime checks never run it in float32/float64. A value set on the class or the
        instance takes precedence."""
        if "_opkit_skip" in self.__dict__:
            return self.__dict__["_opkit_skip"]
        reason = unsupported_reason(self, mkldnn=self.paddle_skip_mkldnn)
        if not reason:
            return None
        return {name: reason for name in check_names()}

    @opkit_skip.setter
    def opkit_skip(self, value):
        self.__dict__["_opkit_skip"] = value

    # -- dtype helpers (identity maps, as in Paddle) ----------------------------------------
    @staticmethod
    def np_dtype_to_fluid_dtype(input):
        return input

    np_dtype_to_base_dtype = np_value_to_fluid_value = np_dtype_to_fluid_dtype

    @staticmethod
    def fluid_dtype_to_np_dtype(self, dtype=None):  # Paddle's (odd) staticmethod signature
        return self if dtype is None else dtype

    def _is_low_precision_op(self, carrier, name: str) -> bool:
        """The test's dtype, output dtype, MKLDNN data type or input data are `name`'s
        (bfloat16's carrier is uint16)."""
        attrs = getattr(self, "attrs", None) or {}
        return (_is(self.dtype, carrier) or _is(getattr(self, "output_dtype", None), carrier)
                or name in (getattr(self, "mkldnn_data_type", None),
                            attrs.get("mkldnn_data_type"))
                or any(_is(d, carrier) for d in data_dtypes(getattr(self, "inputs", None))))

    def case_data(self, inputs: dict, outputs: dict) -> tuple[dict, dict]:
        """Paddle's spelling: bfloat16 data carried as uint16 bits become real bfloat16."""
        if self.is_bfloat16_op():
            return as_bfloat16_slots(inputs), as_bfloat16_slots(outputs)
        return inputs, outputs

    def is_bfloat16_op(self) -> bool:
        return self._is_low_precision_op(np.uint16, "bfloat16")

    def is_float16_op(self) -> bool:
        return self._is_low_precision_op(np.float16, "float16")

    # -- the *_with_place checks ------------------------------------------------------------
    @staticmethod
    def _paddle_place_kind(place) -> str:
        text = str(place)
        if not isinstance(place, Place) and text.startswith("Place("):
            # the real PaddlePaddle's places (the Paddle mode with the Paddle backend)
            return "CPU" if text.lower().startswith("place(cpu") else "GPU"
        kind = place_kind(place)
        return "GPU" if kind in ("GPU", "CUDA") else "CPU"

    def check_output_with_place(self, place, atol=None, no_check_set=None, equal_nan=False,
                                check_dygraph=True, inplace_atol=None, **paddle_kw):
        """check_output on `place` only (Paddle's signature; Paddle-only keywords ignored)."""
        with override(place=self._paddle_place_kind(place)):
            return self.check_output(atol=atol, no_check_set=no_check_set,
                                     equal_nan=equal_nan, **paddle_kw)

    def check_grad_with_place(self, place, inputs_to_check, output_names, no_grad_set=None,
                              numeric_grad_delta=0.005, in_place=False,
                              max_relative_error=0.005, user_defined_grads=None,
                              user_defined_grad_outputs=None, check_dygraph=True,
                              **paddle_kw):
        """check_grad on `place` only, in Paddle's positional order."""
        if user_defined_grad_outputs is not None:
            raise unittest.SkipTest("user_defined_grad_outputs: opkit's check_grad uses its "
                                    "own output gradients")
        with override(place=self._paddle_place_kind(place)):
            return self.check_grad(inputs_to_check, output_names, no_grad_set=no_grad_set,
                                   max_relative_error=max_relative_error,
                                   numeric_grad_delta=numeric_grad_delta,
                                   user_defined_grads=user_defined_grads, **paddle_kw)

    # -- customized output checks -----------------------------------------------------------
    def paddle_forward(self, place=None) -> dict:
        """Run the op forward once with the inputs as given, on `place` (default CPU):
        {output slot: [(variable name, array), ...]} for the slots in self.outputs, in the op
        proto's output order (Paddle's fetch order)."""
        reason = unsupported_reason(self)
        if reason:
            raise unittest.SkipTest(reason)
        expected = normalize_slots(getattr(self, "outputs", {}) or {})
        proto = backends.proto(self.op_type)
        order = [v.name for v in proto.outputs] if proto is not None else list(expected)
        slots = {s: [v.name for v in expected[s]] for s in order if s in expected}
        kind = self._paddle_place_kind(place) if place is not None else "CPU"
        prepared = make(self.op_type, normalize_slots(getattr(self, "inputs", {}) or {}),
                        dict(getattr(self, "attrs", {}) or {}), slots,
                        CPUPlace() if kind == "CPU" else CUDAPlace(0))
        got = prepared.forward()
        return {slot: [(n, got[n]) for n in names] for slot, names in slots.items()}

    def calc_output(self, place=None) -> list:
        """The forward outputs named in self.outputs, as a list of arrays (Paddle's order)."""
        return [a for items in self.paddle_forward(place).values() for _, a in items]

    def check_output_customized(self, checker, custom_place=None):
        """Paddle's check_output_customized: `checker(outputs)` with the forward outputs
        (sorted by length, as Paddle does) on CPU (or `custom_place`)."""
        checker(sorted((np.array(o) for o in self.calc_output(custom_place)), key=len))


def optest_surface(base: type) -> type:
    """`harness.OpTest`: `base` (the harness's own OpTest) with Paddle's spelling, its own
    check_output / check_grad taking Paddle's keywords."""
    return type("OpTest", (PaddleSurface, base), {
        "__module__": base.__module__, "__qualname__": base.__qualname__,
        "__doc__": base.__doc__,
        "check_output": _accept_paddle_keywords(base.check_output),
        "check_grad": _accept_paddle_keywords(base.check_grad)})


# Paddle's bfloat16 convention in OpTests: bfloat16 data carried as uint16 (the upper 16 bits
# of float32, `convert_float_to_uint16`), viewed bit for bit as real bfloat16 arrays
# (`ml_dtypes.bfloat16`) for opkit's bfloat16 kernels, and back


def as_bfloat16(value):
    """A uint16 array as the bfloat16 array of the same bits; anything else unchanged."""
    if isinstance(value, np.ndarray) and value.dtype == np.uint16:
        return np.ascontiguousarray(value).view(bfloat16)
    return value


def as_uint16(value):
    """A bfloat16 array as Paddle's uint16 carrier (the same bits)."""
    if isinstance(value, np.ndarray) and value.dtype == bfloat16:
        return np.ascontiguousarray(value).view(np.uint16)
    return value


def as_bfloat16_slots(slots: dict) -> dict:
    """Paddle's OpTest inputs / outputs with every uint16 array as bfloat16."""
    return {k: _map_arrays(v, as_bfloat16) for k, v in slots.items()}
