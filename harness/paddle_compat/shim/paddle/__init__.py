"""opkit's minimal CPU-only `paddle` facade (Paddle-compatibility mode only).

Not PaddlePaddle. It exists so that Paddle's OpTest files import unchanged: the capability
probes answer for opkit's CPU place (`fluid.core.is_compiled_with_cuda()` is False,
`is_float16_supported` is False), `CPUPlace` is opkit's, the dtype enum has Paddle's numbers.
Everything else of Paddle's Python API is a placeholder that skips the test using it, with
the reason (see `paddle._facade`).
"""
from paddle._facade import install_getattr

OPKIT_FACADE = True
__version__ = "0.0.0-opkit-facade"

from paddle import compat  # noqa: E402,F401
from paddle import fluid  # noqa: E402,F401


def in_dynamic_mode() -> bool:
    return False


def enable_static() -> None:
    """Static mode is the only mode opkit has."""


def disable_static(place=None) -> None:
    from paddle._facade import skip

    skip("paddle.disable_static (dygraph mode)")


def is_compiled_with_cuda() -> bool:
    return False


def is_compiled_with_rocm() -> bool:
    return False


def is_compiled_with_xpu() -> bool:
    return False


CPUPlace = fluid.CPUPlace
CUDAPlace = fluid.CUDAPlace

install_getattr(globals())
