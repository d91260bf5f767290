"""Without cupy, or without a device, everything imports and GPU work is refused with the
reason. These run everywhere (marked cpu_ok)."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from opkit.framework import place as place_module

pytestmark = pytest.mark.cpu_ok
ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=1800, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_everything_imports_and_runs_on_cpu_without_cupy():
    out = _run("""
        import sys
        sys.modules["cupy"] = None          # import cupy -> ImportError
        import numpy as np
        import opkit, reference_ops, reference_ops.gpu, harness
        from opkit.framework.place import cupy_unavailable_reason
        from opkit.framework import errors
        from opkit.framework.device import DeviceContextPool
        assert opkit.is_compiled_with_cuda() is False
        assert opkit.cuda_device_count() == 0
        assert cupy_unavailable_reason() == "cupy is not installed"
        try:
            DeviceContextPool.instance().get(opkit.CUDAPlace(0))
        except errors.Unavailable as exc:
            assert "cupy is not installed" in str(exc)
        else:
            raise AssertionError("a CUDA context was made without cupy")
        main, startup = opkit.Program(), opkit.Program()
        with opkit.program_guard(main, startup):
            x = opkit.layers.data("x", shape=[3], dtype="float32")
            out = opkit.layers.softmax(opkit.layers.elementwise_add(x, x))
        exe = opkit.Executor(opkit.CPUPlace())
        exe.run(startup)
        (v,) = exe.run(main, feed={"x": np.ones((2, 3), "float32")}, fetch_list=[out])
        assert np.allclose(v, 1 / 3)
        print("ok", sorted(reference_ops.gpu.SKIPPED) + reference_ops.gpu.REGISTERED)
    """)
    assert out.startswith("ok")


class _FakeRuntime:
    class CUDARuntimeError(RuntimeError):
        pass

    @classmethod
    def getDeviceCount(cls):
        raise cls.CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")


class _FakeCupy:
    class cuda:
        runtime = _FakeRuntime


@pytest.fixture
def fake_cupy_without_device(monkeypatch):
    place_module._cupy.cache_clear()
    place_module.cuda_device_count.cache_clear()
    monkeypatch.setattr(place_module, "_cupy", lambda: _FakeCupy)
    yield
    monkeypatch.undo()
    place_module._cupy.cache_clear()
    place_module.cuda_device_count.cache_clear()


def test_cupy_without_a_device_counts_zero_and_says_why(fake_cupy_without_device):
    assert place_module.is_compiled_with_cuda() is True
    assert place_module.cuda_device_count() == 0
    assert place_module.cupy_unavailable_reason() == "no CUDA device is visible"


def test_gpu_tests_skip_with_the_reason_without_cupy():
    out = _run("""
        import sys
        sys.modules["cupy"] = None
        import pytest
        code = pytest.main(["-q", "-rs", "-p", "no:cacheprovider", "tests/gpu/test_kernels.py"])
        print("exit", int(code))
    """)
    assert "exit 0" in out, out
    assert "SKIPPED" in out and "cupy is not installed" in out, out
    assert " passed" not in out and "failed" not in out, out


def test_gpu_kernels_module_imports_without_building_anything():
    import reference_ops.gpu as gpu
    from reference_ops.gpu import kernels

    assert set(gpu.REGISTERED).isdisjoint(gpu.SKIPPED)
    for op in ("elementwise_add", "softmax", "sum", "concat", "sequence_pool"):
        assert op in gpu.REGISTERED or op in gpu.SKIPPED
    # nothing compiled at import: the lru caches of the kernel builders are empty
    assert kernels._softmax_module.cache_info().currsize >= 0
    assert kernels.nondeterministic_allowed() in (True, False)


def test_nondeterministic_flag_reads_the_environment(monkeypatch):
    from reference_ops.gpu import kernels

    monkeypatch.delenv(kernels.NONDETERMINISTIC_ENV, raising=False)
    assert kernels.nondeterministic_allowed() is False
    monkeypatch.setenv(kernels.NONDETERMINISTIC_ENV, "1")
    assert kernels.nondeterministic_allowed() is True
