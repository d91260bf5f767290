"""paddle.pir_utils of opkit's facade: opkit has one mode (no PIR); `test_with_pir_api`
runs the test once, in that mode, and `IrGuard` / `OldIrGuard` change nothing."""
import contextlib
import functools

from paddle._facade import install_getattr


def test_with_pir_api(func):
    """Paddle runs the test twice, under its old IR and under PIR: opkit has one mode and
    runs it once (there is no PIR to claim anything about)."""
    @functools.wraps(func)
    def impl(*args, **kwargs):
        return func(*args, **kwargs)

    return impl


def test_with_old_ir_only(func):
    return test_with_pir_api(func)


# a decorator, not a test: pytest would collect the names a test file imports
test_with_pir_api.__test__ = False
test_with_old_ir_only.__test__ = False


@contextlib.contextmanager
def _guard():
    yield


class IrGuard:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


OldIrGuard = IrGuard
DygraphPirGuard = IrGuard
DygraphOldIrGuard = IrGuard

install_getattr(globals())
