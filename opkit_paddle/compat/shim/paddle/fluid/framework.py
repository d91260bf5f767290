"""paddle.fluid.framework / paddle.base.framework of opkit's facade: the mode probes and
dtype helpers Paddle's OpTest files call in setUp; Program, Variable, ... are placeholders
that skip the test using them."""
import numpy as np

from paddle._facade import install_getattr


def grad_var_name(name: str) -> str:
    return name + "@GRAD"


def in_dygraph_mode() -> bool:
    return False


def in_dynamic_mode() -> bool:
    return False


def _non_static_mode() -> bool:
    return False


def in_pir_mode() -> bool:
    """opkit has no PIR: the old static mode is its only mode."""
    return False


def use_pir_api() -> bool:
    return False


def convert_np_dtype_to_dtype_(np_dtype):
    """numpy dtype -> Paddle's VarType number (what the ops' `dtype` attrs take)."""
    from paddle.fluid.core import VarDesc

    if isinstance(np_dtype, VarDesc.VarType):
        return np_dtype
    if isinstance(np_dtype, str) and np_dtype in ("bfloat16", "uint16"):
        return VarDesc.VarType.BF16
    dt = np.dtype(np_dtype)
    table = {np.dtype(np.bool_): "BOOL", np.dtype(np.int16): "INT16",
             np.dtype(np.int32): "INT32", np.dtype(np.int64): "INT64",
             np.dtype(np.float16): "FP16", np.dtype(np.float32): "FP32",
             np.dtype(np.float64): "FP64", np.dtype(np.uint8): "UINT8",
             np.dtype(np.int8): "INT8", np.dtype(np.uint16): "BF16",
             np.dtype(np.complex64): "COMPLEX64", np.dtype(np.complex128): "COMPLEX128"}
    if dt not in table:
        raise ValueError(f"Not supported numpy dtype {dt}")
    return getattr(VarDesc.VarType, table[dt])


class Variable:
    """opkit facade placeholder (isinstance checks only)."""


install_getattr(globals())
