"""Keep freed heap memory in the process (glibc's M_TOP_PAD, 1 MiB by default) instead of
handing it back at once: a loop allocating and freeing ~128 KiB arrays otherwise pays fresh
page faults every time. docs/performance.md ("Fewer copies, no page faults").
"""
from __future__ import annotations

import ctypes
import sys

__all__ = ["keep_freed_heap", "TOP_PAD"]

TOP_PAD = 1 << 20
_M_TOP_PAD = -2          # glibc malloc.h
_done = False


def keep_freed_heap(pad: int = TOP_PAD) -> bool:
    """Set glibc's M_TOP_PAD to `pad` bytes, once per process; True when it was set."""
    global _done
    if _done:
        return False
    _done = True
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_TOP_PAD, int(pad)))
