"""`utils` of opkit's Paddle-compatibility mode (Paddle's test/legacy_test/utils.py):
`static_guard` / `dygraph_guard` switch the facade's recorded mode, `compare_legacy_with_pt`
runs the test once (there is no PIR to compare with); program comparisons skip. With the
Paddle backend (the real PaddlePaddle as `paddle`) the guards switch Paddle's own mode."""
import contextlib
import functools
import unittest

__all__ = ["static_guard", "dygraph_guard", "compare_legacy_with_pt", "is_equal_program"]


def _real(paddle) -> bool:
    return not hasattr(paddle, "_MODE")     # the facade records its mode in _MODE


@contextlib.contextmanager
def _real_mode(paddle, static: bool):
    dynamic = paddle.in_dynamic_mode()
    paddle.enable_static() if static else paddle.disable_static()
    try:
        yield
    finally:
        paddle.disable_static() if dynamic else paddle.enable_static()


@contextlib.contextmanager
def static_guard():
    import paddle

    if _real(paddle):
        with _real_mode(paddle, static=True):
            yield
        return
    was = paddle._MODE["static"]
    paddle.enable_static()
    try:
        yield
    finally:
        if not was:
            paddle.disable_static()


@contextlib.contextmanager
def dygraph_guard():
    import paddle

    if _real(paddle):
        with _real_mode(paddle, static=False):
            yield
        return
    was = paddle._MODE["static"]
    paddle.disable_static()
    try:
        yield
    finally:
        if was:
            paddle.enable_static()


def compare_legacy_with_pt(fn):
    @functools.wraps(fn)
    def impl(*args, **kwargs):
        return fn(*args, **kwargs)

    return impl


def is_equal_program(prog1, prog2):
    raise unittest.SkipTest("utils.is_equal_program compares Paddle Programs, which opkit's "
                            "facade does not provide")
