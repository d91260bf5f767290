"""GPU tests: every test here needs a usable CUDA device and is skipped, with the reason
("cupy is not installed" / "no CUDA device is visible"), where there is none. Tests that
check the behaviour *without* a GPU are marked `@pytest.mark.cpu_ok` and always run.

Shared by the tests: the `requires_gpu` marker (a `skipif` with the reason) and the
fixtures `cp` (the cupy module), `gpu_place` (CUDAPlace(0)) and `gpu_ctx` (its
CUDADeviceContext)."""
from __future__ import annotations

import pytest

from opkit.framework.place import cupy_unavailable_reason

GPU_REASON = cupy_unavailable_reason()
requires_gpu = pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")


def pytest_configure(config):
    config.addinivalue_line("markers", "cpu_ok: a tests/gpu test that runs without a GPU")


@pytest.fixture(autouse=True)
def _skip_without_gpu(request):
    if GPU_REASON is not None and request.node.get_closest_marker("cpu_ok") is None:
        pytest.skip(GPU_REASON)


@pytest.fixture
def cp():
    import cupy

    return cupy


@pytest.fixture
def gpu_place():
    from opkit import CUDAPlace

    return CUDAPlace(0)


@pytest.fixture
def gpu_ctx(gpu_place):
    from opkit.framework.device import DeviceContextPool

    return DeviceContextPool.instance().get(gpu_place)
