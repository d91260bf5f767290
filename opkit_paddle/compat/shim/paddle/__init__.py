"""opkit's minimal CPU-only `paddle` facade (Paddle-compatibility mode only).

Not PaddlePaddle. It exists so that Paddle's OpTest files of the 1.8, 2.x and 3.x lines
import unchanged: the capability probes answer for opkit's CPU place
(`base.core.is_compiled_with_cuda()` is False, `is_float16_supported` is False), `CPUPlace`
is opkit's, the dtype enum has Paddle's numbers, `core.Scope` / `op.Operator` run opkit's
ops by name. `paddle.base` (2.x / 3.x) and `paddle.fluid` (1.8 / early 2.x) are the same
module. Everything else of Paddle's Python API, any `paddle.X.Y` module included, is a
placeholder that skips the test using it, with the reason (see `paddle._facade`).
"""
import numpy as np
from paddle._facade import install_getattr, install_submodule_finder

OPKIT_FACADE = True
__version__ = "0.0.0-opkit-facade"

install_submodule_finder()

from paddle import (  # noqa: E402,F401
    compat,  # noqa: E402,F401
    fluid,  # noqa: E402,F401
    framework,
    pir_utils,
)
from paddle import fluid as base  # noqa: E402,F401  (Paddle 2.5+: fluid renamed `base`)

_MODE = {"static": False}


def in_dynamic_mode() -> bool:
    """opkit has one (static, op-level) mode; Paddle's dygraph API is a placeholder."""
    return False


def enable_static() -> None:
    """Static mode: the mode opkit's OpTests run in (Paddle 2.x's test files call it at
    import or in setUp)."""
    _MODE["static"] = True


def disable_static(place=None) -> None:
    """Back to Paddle's dygraph mode: recorded only. Paddle's dygraph API itself stays a
    placeholder, so a test that goes on to use it skips there, with the reason."""
    _MODE["static"] = False


def seed(value):
    """paddle.seed: seeds numpy's global generator (opkit's random ops draw from their
    `seed` attr or from numpy)."""

    np.random.seed(int(value) % (2 ** 32))


def get_flags(flags):
    from paddle.fluid import core

    names = [flags] if isinstance(flags, str) else list(flags)
    return {n: core.globals().get(n) for n in names}


def set_flags(flags):
    from paddle.fluid import core

    core.globals().update(flags)


def is_compiled_with_cuda() -> bool:
    return False


def is_compiled_with_rocm() -> bool:
    return False


def is_compiled_with_xpu() -> bool:
    return False


def is_compiled_with_custom_device(name=None) -> bool:
    return False


def is_compiled_with_cinn() -> bool:
    return False


def is_compiled_with_distribute() -> bool:
    return False


# Paddle 2.x / 3.x dtype names (what tests pass as `dtype` / `in_dtype` attrs)
_T = fluid.core.VarDesc.VarType
bool = _T.BOOL  # noqa: A001 - Paddle's name
int8, uint8, int16, int32, int64 = _T.INT8, _T.UINT8, _T.INT16, _T.INT32, _T.INT64
float16, bfloat16, float32, float64 = _T.FP16, _T.BF16, _T.FP32, _T.FP64
complex64, complex128 = _T.COMPLEX64, _T.COMPLEX128

CPUPlace = fluid.CPUPlace
CUDAPlace = fluid.CUDAPlace

install_getattr(globals())
