"""`op_test` of opkit's Paddle-compatibility mode: Paddle's OpTest module surface on opkit.

`from op_test import OpTest, skip_check_grad_ci, ...` in Paddle's test files resolves here.
`OpTest` is opkit's `harness.OpTest` (which takes Paddle's spelling, see
`opkit_paddle.optest_surface`) with what Paddle's own class adds:
- Paddle's positional order of `check_grad` (`no_grad_set, numeric_grad_delta, in_place,
  max_relative_error, user_defined_grads, check_dygraph`) and `check_output`'s
  (`atol, no_check_set, equal_nan, check_dygraph, inplace_atol`);
- the random seeds of Paddle's `setUpClass` (numpy 123, random 124), restored afterwards;
- Paddle's value-only output comparison where an expectation's dtype is numpy's default
  rather than the op's (`_paddle_value_only_dtypes`);
- an op error propagates from `check_output` as the op's own EnforceNotMet (after the
  failed check), as Paddle's does;
- MKLDNN requested (`use_mkldnn=True`): skipped with the reason;
- a test method that ran no check at all (its checks sit behind a CUDA / float16
  capability probe that the CPU-only facade answers False) is reported as skipped with
  the reason, never as passed.
"""
from __future__ import annotations

import contextlib
import functools
import random
import unittest

import numpy as np

from harness.backend.dispatch import selected
from harness.optest.methods import Declared
from opkit_paddle.backend import env as paddle_env
from harness import OpTest as _OpTest
from harness.options import flag
from opkit_paddle.compat import STRICT_DTYPE_ENV
from opkit_paddle.optest_surface import as_bfloat16_slots, as_uint16
from opkit_paddle.compat.user_grads import check_user_grads
from opkit_paddle.optest_surface import data_dtypes, unsupported_reason
from opkit.framework.errors import EnforceNotMet
from opkit.registry import has_op

__all__ = ["OpTest", "skip_check_grad_ci", "skip_check_inplace_ci", "randomize_probability",
           "convert_float_to_uint16", "convert_uint16_to_float", "paddle_static_guard",
           "OpTestTool", "get_numeric_gradient", "_set_use_system_allocator",
           "is_empty_grad_op", "check_out_dtype", "get_places", "get_device_place",
           "get_device", "get_devices", "is_custom_device", "copy_bits_from_float_to_uint16"]

#: the reason's start for an OpTest of an op opkit does not have (not in the mode's scope;
#: Paddle's files test many ops in one file)
OUT_OF_SCOPE = "out of scope"

NO_CHECK_RAN_PADDLE = ("ran no check: its checks are guarded by a CUDA or float16 capability "
                       "probe, which the installed CPU-only PaddlePaddle answers False")
NO_CHECK_RAN = ("ran no check: its checks are guarded by a CUDA or float16 capability probe, "
                "which opkit's CPU-only Paddle facade answers False")


def _paddle_backend() -> bool:
    """Whether the op runs on PaddlePaddle's kernel (the mode's `paddle` is then the real
    PaddlePaddle, opkit_paddle.compat)."""

    return selected() == "paddle"


def _has_op(op_type: str) -> bool:
    """Whether the op under test exists: opkit's, or with the Paddle backend Paddle's
    (an op opkit lacks is judged through Paddle's own description of it)."""

    if _paddle_backend():
        from opkit_paddle.backend import env as paddle_env

        return paddle_env.has_op(op_type)
    return has_op(op_type)


def _out_of_scope(op_type: str) -> str:
    if _paddle_backend():
        return f"{OUT_OF_SCOPE}: PaddlePaddle has no legacy (ProgramDesc) op '{op_type}'"
    return f"{OUT_OF_SCOPE}: opkit has no op '{op_type}'"


def _core():
    if _paddle_backend():
        from paddle.base import core
    else:
        from paddle.fluid import core
    return core


def _set_use_system_allocator(value=None):
    core = _core()

    flags = core.globals()
    old = flags["FLAGS_use_system_allocator"]
    flags["FLAGS_use_system_allocator"] = old if value is None else value
    return old


def randomize_probability(batch_size, class_num, dtype="float32"):
    prob = np.random.uniform(0.1, 1.0, size=(batch_size, class_num)).astype(dtype)
    prob_sum = prob.sum(axis=1)
    for i in range(len(prob)):
        prob[i] /= prob_sum[i]
    return prob


def skip_check_grad_ci(reason=None):
    """Paddle's decorator: the class needs no check_grad (a CI rule of Paddle's; the tests
    themselves still run)."""
    if not isinstance(reason, str):
        raise AssertionError("The reason for skipping check_grad is required.")

    def wrapper(cls):
        cls.no_need_check_grad = True
        return cls

    return wrapper


def skip_check_inplace_ci(reason=None):
    if not isinstance(reason, str):
        raise AssertionError("The reason for skipping check_inplace is required.")

    def wrapper(cls):
        cls.no_need_check_inplace = True
        return cls

    return wrapper


def convert_float_to_uint16(float_list, data_format="NCHW"):
    """bfloat16 bits of float32 data, as uint16 (Paddle's helper)."""
    arr = np.asarray(float_list, dtype=np.float32)
    if data_format == "NHWC" and arr.ndim == 4:
        arr = np.transpose(arr, [0, 3, 1, 2])
    out = (np.ascontiguousarray(arr).view(np.uint32) >> 16).astype(np.uint16)
    if data_format == "NHWC" and arr.ndim == 4:
        out = np.transpose(out, [0, 2, 3, 1])
    return out


def convert_uint16_to_float(in_list):
    arr = np.asarray(in_list, dtype=np.uint16)
    return (arr.astype(np.uint32) << 16).view(np.float32)


@contextlib.contextmanager
def paddle_static_guard():
    """Paddle's static-mode guard: static mode is the only one opkit has; with the Paddle
    backend, Paddle's static mode for the block (the mode before it restored after)."""
    if not _paddle_backend():
        yield
        return
    import paddle

    dynamic = paddle.in_dynamic_mode()
    paddle.enable_static()
    try:
        yield
    finally:
        if dynamic:
            paddle.disable_static()


class OpTestTool:
    @classmethod
    def skip_if(cls, condition: object, reason: str):
        return unittest.skipIf(condition, reason)

    @classmethod
    def skip_if_not_cpu_bf16(cls):
        # opkit's CPU runs bfloat16 kernels where an op has them (a class whose op has none
        # skips with that reason when it checks)
        return unittest.skipIf(False, "")

    @classmethod
    def skip_if_not_cpu(cls):
        return unittest.skipIf(False, "")


def get_numeric_gradient(*args, **kwargs):
    raise unittest.SkipTest("op_test.get_numeric_gradient works on Paddle's Scope and "
                            "Operator objects, which opkit's facade does not provide")


def is_empty_grad_op(op_type):
    return not _has_op(op_type + "_grad")


def check_out_dtype(*args, **kwargs):
    raise unittest.SkipTest("op_test.check_out_dtype runs Paddle's layer API, which opkit's "
                            "facade does not provide")


def get_places():
    return [_core().CPUPlace()]


def is_custom_device() -> bool:
    """Paddle's probe for a plug-in (custom) device: opkit's facade and the CPU wheel have
    none (with the Paddle backend the installed Paddle is asked)."""
    if not _paddle_backend():
        return False
    import paddle

    try:
        types = paddle.device.get_all_custom_device_type()
        return bool(types) and bool(paddle.device.is_compiled_with_custom_device(types[0]))
    except Exception:  # noqa: BLE001 - a build without the custom-device API has none
        return False


def get_device_place():
    """The place Paddle's current test files run on: CUDA or a custom device where the build
    has one, else the CPU (the only place opkit's facade and the CPU wheel have)."""
    core = _core()
    if core.is_compiled_with_cuda():
        return core.CUDAPlace(0)
    if is_custom_device():
        import paddle

        return paddle.CustomPlace(paddle.device.get_all_custom_device_type()[0], 0)
    return core.CPUPlace()


def get_device() -> str:
    """The device name Paddle's test files pass to `paddle.set_device` ("cpu" here)."""
    core = _core()
    if core.is_compiled_with_cuda():
        return "gpu"
    if is_custom_device():
        import paddle

        return paddle.device.get_all_custom_device_type()[0]
    return "cpu"


def get_devices() -> list:
    """Every device name a test may run on: "cpu", and the accelerator where there is one."""
    device = get_device()
    return ["cpu"] + ([device] if device != "cpu" else [])


def copy_bits_from_float_to_uint16(f) -> int:
    """The bfloat16 bits (the upper 16 bits of float32) of one float (Paddle's helper)."""
    return int(np.asarray(f, dtype=np.float32).view(np.uint32) >> 16)


def _paddle_attrs(op_type: str) -> set:
    """The attrs Paddle's proto of `op_type` declares, its extra attrs included."""

    proto = paddle_env.proto(op_type)
    if proto is None:
        return set()
    from paddle.base import core

    extra = core.get_op_extra_attrs(op_type) if hasattr(core, "get_op_extra_attrs") else {}
    return {a.name for a in proto.attrs} | set(extra)


def _static(method):
    """With the Paddle backend a check runs in Paddle's static mode whatever mode the test
    left Paddle in (a dygraph test before it), as Paddle's own OpTest does."""

    @functools.wraps(method)
    def run(self, *args, **kwargs):
        if not _paddle_backend():
            return method(self, *args, **kwargs)
        with paddle_static_guard():
            return method(self, *args, **kwargs)

    return run


class OpTest(_OpTest):
    """opkit's OpTest with Paddle's argument order, seeds and no-silent-pass rule."""

    paddle_skip_mkldnn = True

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls._np_rand_state = np.random.get_state()
        cls._py_rand_state = random.getstate()
        cls.call_once = False
        cls.dtype = None
        cls.outputs = {}
        cls.input_shape_is_large = True
        # Paddle 2.6 / 3.x's class defaults, which their tests read (check_pir_onednn=
        # self.check_pir_onednn): the Paddle-only executors they select stay off
        cls.is_calc_ref = False
        cls.check_prim = False
        cls.check_prim_pir = False
        cls._check_cinn = False
        cls.check_pir_onednn = False
        np.random.seed(123)
        random.seed(124)

    @classmethod
    def tearDownClass(cls):
        np.random.set_state(cls._np_rand_state)
        random.setstate(cls._py_rand_state)
        super().tearDownClass()

    def _paddle_ran_check(self) -> None:
        self.__dict__["_paddle_checks"] = self.__dict__.get("_paddle_checks", 0) + 1

    def _fluid18_outputs(self) -> None:
        """A scalar expectation (a numpy scalar or 0-D array) is compared by value with a
        one-element output: Fluid 1.8 has no 0-D tensors (its ops give shape [1]) while
        Paddle 2.x / 3.x ops give 0-D; Paddle's own comparison (np.allclose /
        assert_allclose) broadcasts a scalar either way. The expectation takes the shape of
        what the op gives when that holds one element; a 0-D output stays 0-D."""
        outputs = getattr(self, "outputs", None)
        if not isinstance(outputs, dict):
            return
        scalars = [slot for slot, value in outputs.items()
                   if isinstance(value, np.generic) or (isinstance(value, np.ndarray) and
                                                        value.ndim == 0)]
        if not scalars:
            return
        try:
            got = self.paddle_forward()
        except Exception:  # noqa: BLE001 - the check itself reports it
            got = {}
        for slot in scalars:
            items = got.get(slot) or []
            actual = items[0][1] if len(items) == 1 else None
            shape = actual.shape if isinstance(actual, np.ndarray) and actual.size == 1 \
                else (1,)
            outputs[slot] = np.asarray(outputs[slot]).reshape(shape)

    def _paddle_declared_attrs(self) -> None:
        """Paddle builds the op from its proto's attrs only (`framework.Operator` and
        `testsuite.create_op` loop over the declared attrs): an attr the test sets that the
        op does not declare is dropped silently there (hard_shrink's test sets `lambda`;
        the op's attr is `threshold`). Outside the mode opkit rejects it and names it."""
        attrs = getattr(self, "attrs", None)
        if not isinstance(attrs, dict) or not attrs:
            return
        try:
            from opkit.registry import op_info

            proto = op_info(self.op_type).proto
        except Exception:  # noqa: BLE001 - an unknown op is the check's to report
            return
        if proto is None:
            return
        declared = {a.name for a in proto.attrs}
        if _paddle_backend():       # Paddle's own proto decides, its extra attrs included
            declared = _paddle_attrs(self.op_type) or declared
        for name in [k for k in attrs if k not in declared]:
            del attrs[name]

    def _paddle_matrix_outputs(self) -> None:
        """Some Paddle tests write an expectation with `np.asmatrix`, which is always 2-D:
        a per-row loss of shape [N] becomes a [1, N] matrix, and Paddle's np.allclose
        broadcasts the two. A matrix expectation is made a plain array of the op's output
        shape when that shape broadcasts against it and holds as many elements; any other
        matrix is only made a plain array (the check then reports the shape)."""
        outputs = getattr(self, "outputs", None)
        if not isinstance(outputs, dict) or \
                not any(isinstance(v, np.matrix) for v in outputs.values()):
            return
        try:
            got = self.paddle_forward()
        except Exception:  # noqa: BLE001 - the check itself reports it
            got = {}
        for slot, want in list(outputs.items()):
            if not isinstance(want, np.matrix):
                continue
            plain = np.asarray(want)
            items = got.get(slot) or []
            actual = items[0][1] if len(items) == 1 else None
            if isinstance(actual, np.ndarray) and actual.size == plain.size:
                try:
                    np.broadcast_shapes(actual.shape, plain.shape)
                    plain = plain.reshape(actual.shape)
                except ValueError:
                    pass
            outputs[slot] = plain

    def _paddle_value_only_dtypes(self, atol=None) -> None:
        """Paddle's check_output compares values only (np.allclose), never dtypes, and some of
        its tests write the expectation in numpy's default dtype (np.full(..., 3.8) is
        float64) where the op gives float32. For an op run with its inputs as given (no
        float inputs), an expectation whose dtype differs from what the op produced is cast
        to that dtype when the cast keeps its values within Paddle's np.allclose (else left alone, and the check
        reports the dtype). OPKIT_PADDLE_STRICT_DTYPE=1 turns this off."""

        outputs = getattr(self, "outputs", None)
        if flag(STRICT_DTYPE_ENV) or not isinstance(outputs, dict) or \
                any(np.dtype(d).kind == "f" for d in data_dtypes(getattr(self, "inputs", {}))):
            return
        try:
            got = self.paddle_forward()
        except Exception:  # noqa: BLE001 - the check itself reports it
            return
        for slot, items in got.items():
            want = outputs.get(slot)
            if len(items) != 1 or not isinstance(want, np.ndarray):
                continue
            actual = items[0][1]
            if actual is None or actual.dtype == want.dtype or actual.shape != want.shape or \
                    actual.dtype.kind not in "biuf" or want.dtype.kind not in "biuf":
                continue
            cast = want.astype(actual.dtype)
            with np.errstate(invalid="ignore", over="ignore"):
                keeps = np.allclose(cast.astype(np.float64), want.astype(np.float64),
                                    rtol=1e-5, atol=1e-5 if atol is None else atol,
                                    equal_nan=True)     # Paddle's np.allclose, its atol
            if keeps:
                outputs[slot] = cast

    def _paddle_skip_unsupported(self) -> None:
        op_type = getattr(self, "op_type", None)
        if isinstance(op_type, str) and not _has_op(op_type):
            raise unittest.SkipTest(_out_of_scope(op_type))
        reason = unsupported_reason(self, mkldnn=self.paddle_skip_mkldnn)
        if reason:
            raise unittest.SkipTest(reason)

    def _paddle_low_precision(self, atol=None):
        """A bfloat16 class's uint16 data (Paddle's convention: the bits of bfloat16 in
        uint16, `convert_float_to_uint16`) as real bfloat16 arrays; Paddle's atol floors for
        float16 (1e-3) and bfloat16 (1e-2). Returns the atol to use."""

        if self.is_bfloat16_op():
            for name in ("inputs", "outputs"):
                value = getattr(self, name, None)
                if isinstance(value, dict):
                    setattr(self, name, as_bfloat16_slots(value))
            return max(atol or 0.0, 1e-2)
        if self.is_float16_op():
            return max(atol or 0.0, 1e-3)
        return atol

    @_static
    def check_output(self, atol=None, no_check_set=None, equal_nan=False, check_dygraph=True,
                     inplace_atol=None, **paddle_kw):
        self._paddle_ran_check()
        self._paddle_skip_unsupported()
        atol = self._paddle_low_precision(atol)
        self._paddle_declared_attrs()
        self._fluid18_outputs()
        self._paddle_matrix_outputs()
        self._paddle_value_only_dtypes(atol)
        try:
            results = super().check_output(atol=atol, no_check_set=no_check_set,
                                           equal_nan=equal_nan, **paddle_kw)
        except AssertionError:
            self._paddle_raise_op_error()
            raise
        error = self._paddle_op_error(results)
        if error is not None:
            # the harness collects results instead of raising: the op's own error must still
            # reach a test that expects it (its failed check is then withdrawn: the test
            # decides, as in Paddle)
            from harness.reporting.error_text import first_line
            from harness.reporting.report import CheckResult, current_collector

            refusal = f"{type(error).__name__}: {first_line(error)}"
            passed = CheckResult("output", "pass", "", "", type(self).__name__,
                                 f"the op raised {refusal}; the test expects an error (if "
                                 "it does not catch it, its method fails)")
            collector = current_collector()
            if isinstance(results, Declared):
                results.settle([passed])
            elif collector is not None:
                collector[:] = [r for r in collector if not any(r is x for x in results)]
                collector.append(passed)
            self._record(options={"op_refuses": refusal})
            raise error
        return results

    def _paddle_op_error(self, results) -> EnforceNotMet | None:
        """The op's own error (EnforceNotMet) when its check fails and running the op once
        more raises one, else None. A check declared for `opkit test` is judged here only
        when the op raises."""
        if isinstance(results, Declared):
            error = self._paddle_op_raises()
            failed = error is not None and any(r.status == "fail" for r in results.verdict())
            return error if failed else None
        if not any(r.status == "fail" for r in results or ()):
            return None
        return self._paddle_op_raises()

    def _paddle_op_raises(self) -> EnforceNotMet | None:
        try:
            self.paddle_forward()
        except EnforceNotMet as exc:
            return exc
        except Exception:  # noqa: BLE001 - no error of the op's own
            return None
        return None

    def _paddle_raise_op_error(self) -> None:
        """In Paddle an op that raises makes check_output raise the op's error
        (EnforceNotMet), which some tests expect; opkit's check reports it as a failed check.
        After a failed check, run the op once more and raise its own error if it has one."""
        error = self._paddle_op_raises()
        if error is not None:
            raise error

    def judging_context(self):
        """With the Paddle backend a declared check is judged in Paddle's static mode, as
        Paddle's own OpTest runs its checks (`_static`)."""
        return paddle_static_guard()

    @_static
    def check_grad(self, inputs_to_check, output_names, no_grad_set=None,
                   numeric_grad_delta=0.005, in_place=False, max_relative_error=0.005,
                   user_defined_grads=None, check_dygraph=True,
                   user_defined_grad_outputs=None, **paddle_kw):
        grad_outputs = user_defined_grad_outputs
        if grad_outputs is not None and user_defined_grads is not None:
            # the test's expected gradients are for ITS output gradients (Paddle's rule):
            # judged as check_grad_with_place judges them, on the CPU; opkit's own numeric
            # check follows, without them (they belong to another output gradient)
            self.check_grad_with_place(
                _core().CPUPlace(), inputs_to_check, output_names, no_grad_set,
                numeric_grad_delta, in_place, max_relative_error, user_defined_grads,
                grad_outputs, check_dygraph, **paddle_kw)
            user_defined_grads = None
            names = [inputs_to_check] if isinstance(inputs_to_check, str) else inputs_to_check
            if not any(d.kind == "f" for n in names
                       for d in data_dtypes({n: (getattr(self, "inputs", {}) or {}).get(n)})):
                return None     # an integer op's gradient (diagonal's int64): no numeric one
        self._paddle_ran_check()
        self._paddle_skip_unsupported()
        self._paddle_low_precision()
        self._paddle_declared_attrs()
        self._fluid18_outputs()
        return super().check_grad(inputs_to_check, output_names, no_grad_set=no_grad_set,
                                  max_relative_error=max_relative_error,
                                  numeric_grad_delta=numeric_grad_delta,
                                  user_defined_grads=user_defined_grads, **paddle_kw)

    @_static
    def check_grad_with_place(self, place, inputs_to_check, output_names, no_grad_set=None,
                              numeric_grad_delta=0.005, in_place=False,
                              max_relative_error=0.005, user_defined_grads=None,
                              user_defined_grad_outputs=None, check_dygraph=True,
                              **paddle_kw):
        """Paddle's check_grad_with_place; with `user_defined_grad_outputs` (and the
        expected `user_defined_grads`), the op's analytic gradients for those output
        gradients against the expected ones, by Paddle's rule (bfloat16:
        assert_allclose(rtol=max_relative_error, atol=1e-2); else |a - e| / max(|e|, 1e-3)
        <= max_relative_error)."""
        if user_defined_grad_outputs is None or user_defined_grads is None:
            return super().check_grad_with_place(
                place, inputs_to_check, output_names, no_grad_set, numeric_grad_delta,
                in_place, max_relative_error, user_defined_grads, user_defined_grad_outputs,
                check_dygraph, **paddle_kw)
        self._paddle_ran_check()
        self._paddle_skip_unsupported()
        self._paddle_low_precision()
        self._paddle_declared_attrs()

        check_user_grads(self, place, inputs_to_check, output_names, no_grad_set,
                         max_relative_error, user_defined_grads, user_defined_grad_outputs)

    @_static
    def calc_output(self, place=None) -> list:
        """Paddle's calc_output: the forward outputs, for the test's own assertions (which
        makes it a check that ran); a bfloat16 op's outputs come back as uint16, as in
        Paddle."""

        self._paddle_ran_check()
        self._paddle_skip_unsupported()
        self._paddle_low_precision()
        outs = super().calc_output(place)
        return [as_uint16(np.asarray(o)) for o in outs] if self.is_bfloat16_op() else outs

    @_static
    def check_output_customized(self, checker, custom_place=None, **paddle_kw):
        """Paddle 2.x / 3.x pass check_pir=, check_prim=, ... here too: accepted and
        ignored (they select Paddle's other executors), opkit's one run is checked."""
        self._paddle_ran_check()
        self._paddle_skip_unsupported()
        self._paddle_low_precision()
        return super().check_output_customized(checker, custom_place)

    def check_output_with_place_customized(self, checker, place, **paddle_kw):
        """Paddle's spelling of check_output_customized with the place first (eig's tests)."""
        return self.check_output_customized(checker, place, **paddle_kw)

    # -- Paddle's test-data helpers ----------------------------------------------------------
    def get_sequence_batch_size_1_input(self, lod=None, shape=None):
        """LoD input with one sequence (default lengths [[13]], shape [13, 23])."""
        lod = [[13]] if lod is None else lod
        shape = [13, 23] if shape is None else shape
        assert len(lod[0]) == 1 and lod[0][0] == shape[0]
        return np.random.uniform(0.1, 1, shape).astype("float32"), lod

    @staticmethod
    def lod_has_single_zero(lengths):
        return any(lengths[i] != 0 and lengths[i + 1] == 0 and lengths[i + 2] != 0
                   for i in range(len(lengths) - 2))

    @staticmethod
    def lod_has_continuous_zero(lengths):
        return any(lengths[i] != 0 and lengths[i + 1] == 0 and lengths[i + 2] == 0 and
                   lengths[i + 3] != 0 for i in range(len(lengths) - 3))

    def get_sequence_instance_size_0_input(self, lod=None, shape=None):
        """LoD input with empty sequences at both ends and in the middle (single and
        consecutive)."""
        lod = [[0, 0, 4, 0, 3, 0, 0, 5, 0, 0]] if lod is None else lod
        shape = [12, 10] if shape is None else shape
        lengths = lod[0]
        assert len(lengths) >= 8 and lengths[:2] == [0, 0] and lengths[-2:] == [0, 0]
        assert self.lod_has_single_zero(lengths) and self.lod_has_continuous_zero(lengths)
        assert sum(lengths) == shape[0]
        return np.random.uniform(0.1, 1, shape).astype("float32"), lod

    def _get_places(self):
        """Paddle 2.x's OpTest helper: the places to run on (opkit's facade: the CPU)."""
        return get_places()

    def infer_dtype_from_inputs_outputs(self, inputs, outputs):
        """Paddle's rule: self.dtype = the widest float dtype among the data."""

        found = set(data_dtypes(inputs)) | set(data_dtypes(outputs))
        for dt in (np.float64, np.float32, np.float16, np.uint16):
            if np.dtype(dt) in found:
                self.dtype = dt
                return
        self.dtype = None

    def _callTestMethod(self, method):
        self.__dict__["_paddle_checks"] = 0
        op_type = getattr(self, "op_type", None)
        if isinstance(op_type, str) and not _has_op(op_type):
            # whatever the method does, it is not an op the backend has
            raise unittest.SkipTest(_out_of_scope(op_type))
        result = method()
        if not self.__dict__.get("_paddle_checks"):
            raise unittest.SkipTest(unsupported_reason(self, mkldnn=True) or
                                    (NO_CHECK_RAN_PADDLE if _paddle_backend() else NO_CHECK_RAN))
        return result
