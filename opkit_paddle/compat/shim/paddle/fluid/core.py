"""paddle.fluid.core (paddle.base.core) of opkit's facade: capability probes for opkit's CPU
place, places, Paddle's VarType numbers, EnforceNotMet (opkit's) and Paddle's Scope /
LoDTensor / SelectedRows on opkit's (what `op.Operator` runs on). Anything else skips the
test using it."""
from __future__ import annotations

import enum

from opkit.framework.errors import EnforceNotMet  # noqa: F401
from opkit.framework.place import CPUPlace, CUDAPlace  # noqa: F401
from paddle._facade import install_getattr

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
    """Paddle: the CPU evaluates bfloat16 (oneDNN). opkit's CPU ops with bfloat16 kernels do
    (computing in float32); a test of an op without one skips on its own."""
    return True


def is_compiled_with_custom_device(name=None) -> bool:
    return False


def is_compiled_with_ipu() -> bool:
    return False


def is_compiled_with_distribute() -> bool:
    return False


def get_all_custom_device_type() -> list:
    return []


def _is_compiled_with_heterps() -> bool:
    return False


def is_bfloat16_supported_cpu() -> bool:
    return True


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


class DataType:
    """Paddle 2.5+'s phi DataType (the same numbers as VarType for opkit's purposes)."""
    BOOL = _VarType.BOOL
    INT16 = _VarType.INT16
    INT32 = _VarType.INT32
    INT64 = _VarType.INT64
    FLOAT16 = _VarType.FP16
    FLOAT32 = _VarType.FP32
    FLOAT64 = _VarType.FP64
    UINT8 = _VarType.UINT8
    INT8 = _VarType.INT8
    BFLOAT16 = _VarType.BF16
    COMPLEX64 = _VarType.COMPLEX64
    COMPLEX128 = _VarType.COMPLEX128


from paddle.fluid._scope import (DenseTensor, LoDTensor, LoDTensorArray, Scope,  # noqa: E402,F401
                                 SelectedRows, Variable)

import builtins as _builtins  # noqa: E402

install_getattr(_builtins.globals())
