"""Device contexts: one per place. numpy and cupy meet here and nowhere else."""
from __future__ import annotations

import numpy as np

from opkit.framework import errors
from opkit.framework.place import CPUPlace, CUDAPlace, Place, _cupy, cupy_unavailable_reason

__all__ = ["DeviceContext", "CPUDeviceContext", "CUDADeviceContext", "DeviceContextPool",
           "array_module", "to_host", "to_device", "is_device_array"]


class DeviceContext:
    place: Place
    xp = np

    def synchronize(self) -> None:
        pass


class CPUDeviceContext(DeviceContext):
    def __init__(self, place: CPUPlace):
        self.place = place
        self.xp = np


class CUDADeviceContext(DeviceContext):
    """Holds the device, a cupy stream and cupy's memory pool for one GPU.

    The stream is an ordinary (blocking) stream: work a user queued on the legacy default
    stream (a cupy array made outside any context, then fed) is finished before this
    stream's kernels read it, and a copy queued on the default stream waits for them."""

    def __init__(self, place: CUDAPlace):
        reason = cupy_unavailable_reason()
        if reason is not None:
            raise errors.Unavailable("cannot use %s: %s", place, reason)
        cp = _cupy()
        if place.device_id >= cp.cuda.runtime.getDeviceCount():
            raise errors.Unavailable("cannot use %s: only %d CUDA device(s) are visible",
                                     place, cp.cuda.runtime.getDeviceCount())
        self.place = place
        self.xp = cp
        self.device = cp.cuda.Device(place.device_id)
        with self.device:
            self.stream = cp.cuda.Stream(non_blocking=False)
            self.memory_pool = cp.get_default_memory_pool()

    def synchronize(self) -> None:
        self.stream.synchronize()

    def __enter__(self):
        self.device.__enter__()
        self.stream.__enter__()
        return self

    def __exit__(self, *exc):
        self.stream.__exit__(*exc)
        self.device.__exit__(*exc)
        return False


class DeviceContextPool:
    """One device context per place, created on first use."""

    _instance: "DeviceContextPool | None" = None

    def __init__(self):
        self._contexts: dict[Place, DeviceContext] = {}

    @classmethod
    def instance(cls) -> "DeviceContextPool":
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def places(self) -> list[Place]:
        """The places that have a device context (that something ran on), in creation order."""
        return list(self._contexts)

    @classmethod
    def places_in_use(cls) -> list[Place]:
        """`places()` of the pool, without creating one."""
        return list(cls._instance._contexts) if cls._instance is not None else []

    def get(self, place: Place) -> DeviceContext:
        ctx = self._contexts.get(place)
        if ctx is None:
            ctx = CPUDeviceContext(place) if place.kind == "CPU" else CUDADeviceContext(place)
            self._contexts[place] = ctx
        return ctx


def is_device_array(array) -> bool:
    cp = _cupy()
    return cp is not None and isinstance(array, cp.ndarray)


def array_module(array):
    return _cupy() if is_device_array(array) else np


def to_host(array):
    """A numpy array for a numpy or cupy array (copies from the device).

    The copy runs on the array's device-context stream, after the kernels queued there, and
    waits for them: the one place a run synchronizes with the GPU."""
    if is_device_array(array):
        ctx = DeviceContextPool.instance().get(CUDAPlace(int(array.device.id)))
        with ctx.device:
            host = array.get(stream=ctx.stream)
        ctx.stream.synchronize()  # cupy < 13 copies asynchronously when given a stream
        return host
    return array


def to_device(array, place: Place):
    """The array on `place`: a copy when it lives elsewhere, the array itself otherwise."""
    if place.kind == "CPU":
        return to_host(array)
    ctx = DeviceContextPool.instance().get(place)
    cp = ctx.xp
    with ctx.device, ctx.stream:
        return cp.asarray(array)
