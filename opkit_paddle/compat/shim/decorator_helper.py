"""`decorator_helper` of opkit's Paddle-compatibility mode: `prog_scope()` runs the decorated
test once (Paddle gives it a fresh Program and Scope; opkit's facade has no Paddle Program,
so a body that builds one skips there, with the reason)."""
import functools

__all__ = ["prog_scope"]


def prog_scope():
    def decorate(fn):
        @functools.wraps(fn)
        def impl(*args, **kwargs):
            return fn(*args, **kwargs)

        return impl

    return decorate
