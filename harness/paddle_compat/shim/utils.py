"""`utils` of opkit's Paddle-compatibility mode (Paddle's test/legacy_test/utils.py):
`static_guard` / `dygraph_guard` switch the facade's recorded mode, `compare_legacy_with_pt`
runs the test once (there is no PIR to compare with); program comparisons skip."""
import contextlib
import functools
import unittest

__all__ = ["static_guard", "dygraph_guard", "compare_legacy_with_pt", "is_equal_program"]


@contextlib.contextmanager
def static_guard():
    import paddle

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
