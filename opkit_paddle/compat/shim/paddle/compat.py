"""paddle.compat of the facade: Paddle's text helpers (used in error-message tests)."""
from paddle._facade import install_getattr


long_type = int
int_type = int


def to_text(obj, encoding="utf-8", inplace=False):
    if isinstance(obj, bytes):
        return obj.decode(encoding)
    if isinstance(obj, list):
        return [to_text(o, encoding) for o in obj]
    return obj


def to_bytes(obj, encoding="utf-8", inplace=False):
    return obj.encode(encoding) if isinstance(obj, str) else obj


def get_exception_message(exc):
    return str(exc)


install_getattr(globals())
