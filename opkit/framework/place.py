"""Places: where a tensor lives and a kernel runs."""
from __future__ import annotations

import functools
import os

__all__ = ["Place", "CPUPlace", "CUDAPlace", "is_compiled_with_cuda", "cuda_device_count",
           "to_place", "place_kind"]


class Place:
    kind = "?"
    __slots__ = ()

    def __eq__(self, other):
        return isinstance(other, Place) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def _key(self):
        return (self.kind,)

    def is_gpu_place(self) -> bool:
        return self.kind == "GPU"

    def is_cpu_place(self) -> bool:
        return self.kind == "CPU"


class CPUPlace(Place):
    kind = "CPU"
    __slots__ = ()

    def __eq__(self, other):
        return other.__class__ is CPUPlace

    def __hash__(self):  # every CPUPlace is the same place (kept cheap: a dict key per op run)
        return 0x435055

    def __repr__(self):
        return "CPUPlace()"


class CUDAPlace(Place):
    kind = "GPU"
    __slots__ = ("device_id",)

    def __init__(self, device_id: int = 0):
        if not isinstance(device_id, int) or device_id < 0:
            from opkit.framework import errors

            raise errors.InvalidArgument("CUDAPlace(device_id) needs an integer >= 0, got %r",
                                         device_id)
        self.device_id = device_id

    def _key(self):
        return (self.kind, self.device_id)

    def __repr__(self):
        return f"CUDAPlace({self.device_id})"


@functools.lru_cache(maxsize=None)
def _cupy():
    try:
        import cupy  # noqa: F401

        return cupy
    except Exception:  # ImportError, or a cupy whose CUDA libraries do not load
        return None


def cupy_unavailable_reason() -> str | None:
    """Why GPU work cannot run here, or None when a CUDA device is usable."""
    if _cupy() is None:
        return "cupy is not installed"
    if cuda_device_count() == 0:
        return "no CUDA device is visible"
    return None


def is_compiled_with_cuda() -> bool:
    """True when cupy imports (opkit's GPU kernels can be built)."""
    return _cupy() is not None


@functools.lru_cache(maxsize=None)
def cuda_device_count() -> int:
    """The number of visible CUDA devices: 0 when none or without cupy, never an exception.

    Asking CUDA initialises it in the asking process, and a process that has initialised
    CUDA cannot fork workers whose CUDA works (the harness forks its workers after asking
    this). So the question is asked in a forked child where the platform can fork, and this
    process's CUDA stays untouched until a kernel really runs here."""
    cp = _cupy()
    if cp is None:
        return 0
    if hasattr(os, "fork"):
        return _count_in_child()
    return _count_here(cp)


def _count_here(cp) -> int:
    try:
        return int(cp.cuda.runtime.getDeviceCount())
    except Exception:
        return 0


def _count_in_child() -> int:
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                  # the child: ask, answer, leave at once
        try:
            os.close(r)
            os.write(w, str(_count_here(_cupy())).encode())
        finally:
            os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        answer = f.read()
    os.waitpid(pid, 0)
    try:
        return int(answer)
    except ValueError:
        return 0


_NAMES = {"CPU": "CPU", "GPU": "GPU", "CUDA": "GPU"}


def place_kind(place) -> str:
    """'CPU' or 'GPU' for a Place or a place name ('CPU', 'GPU', 'CUDA', any case)."""
    if isinstance(place, Place):
        return place.kind
    name = _NAMES.get(str(place).upper())
    if name is None:
        from opkit.framework import errors

        raise errors.InvalidArgument("unknown place %r: use 'CPU' or 'GPU'", place)
    return name


def to_place(place) -> Place:
    if isinstance(place, Place):
        return place
    return CPUPlace() if place_kind(place) == "CPU" else CUDAPlace(0)
