"""Keep freed heap memory in the process instead of handing it back at once.

glibc's malloc returns the free top of the heap to the kernel as soon as it exceeds
128 KiB (M_TRIM_THRESHOLD). A loop that allocates and frees arrays of about that size on
every run -- a numeric gradient's forward runs, a check's repeated op runs -- then pays
fresh page faults on every allocation: on `mul` at 10^4 elements that was half of
check_grad's time. `keep_freed_heap` sets M_TOP_PAD so that trimming keeps `pad` bytes
(1 MiB by default). It is process-wide, done once, and only on glibc (elsewhere, or when
mallopt is missing, nothing happens). See docs/performance.md.
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
