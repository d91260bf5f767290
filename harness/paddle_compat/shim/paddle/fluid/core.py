"""paddle.fluid.core of opkit's facade: capability probes for opkit's CPU place, places,
Paddle's VarType numbers and EnforceNotMet (opkit's). Anything else skips the test using it."""
from __future__ import annotations

import enum

from opkit.framework.errors import EnforceNotMet  # noqa: F401
from opkit.framework.place import CPUPlace, CUDAPlace  # noqa: F401
from paddle._facade import Unsupported, install_getattr

_FLAGS = {"FLAGS_use_system_allocator": False}


def is_compiled_with_cuda() -> bool:
    """The facade is CPU-only: Paddle's CUDA-only test branches do not run."""
    return False


def is_compiled_with_rocm() -> bool:
    return False


def is_compiled_with_xpu() -> bool:
    return False


def is_compiled_with_npu() -> bool:
    return False


def is_compiled_with_mkldnn() -> bool:
    return False


def is_compiled_with_cinn() -> bool:
    return False


def is_float16_supported(place=None) -> bool:
    """opkit has no float16 kernels."""
    return False


def is_bfloat16_supported(place=None) -> bool:
    """opkit has no bfloat16 kernels."""
    return False


def supports_bfloat16() -> bool:
    return False


def op_support_gpu(op_type: str) -> bool:
    return False


def get_cuda_device_count() -> int:
    return 0


def globals():  # noqa: A001 - Paddle's name
    """Paddle's global flags (only what the OpTest helpers read)."""
    return _FLAGS


class _VarType(enum.IntEnum):
    """Paddle's framework.proto VarType numbers."""
    BOOL = 0
    INT16 = 1
    INT32 = 2
    INT64 = 3
    FP16 = 4
    FP32 = 5
    FP64 = 6
    LOD_TENSOR = 7
    SELECTED_ROWS = 8
    FEED_MINIBATCH = 9
    FETCH_LIST = 10
    STEP_SCOPES = 11
    LOD_RANK_TABLE = 12
    LOD_TENSOR_ARRAY = 13
    PLACE_LIST = 14
    READER = 15
    RAW = 17
    TUPLE = 18
    SIZE_T = 19
    UINT8 = 20
    INT8 = 21
    BF16 = 22
    COMPLEX64 = 23
    COMPLEX128 = 24


class VarDesc:
    VarType = _VarType


Scope = Unsupported("paddle.fluid.core.Scope")
LoDTensor = Unsupported("paddle.fluid.core.LoDTensor")

import builtins as _builtins  # noqa: E402

install_getattr(_builtins.globals())
