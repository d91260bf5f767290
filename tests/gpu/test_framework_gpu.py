"""The GPU place, its device context, data transform and the executor on a real device."""
from __future__ import annotations

import numpy as np
import pytest

import opkit
from opkit import errors
from opkit.framework import device as device_module
from opkit.framework import executor as executor_module
from opkit.framework.device import DeviceContextPool, to_device, to_host

_SPIN_SRC = r"""
extern "C" __global__ void opkit_test_spin(long long ns, float* flag, float value) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now)); } while (now - start < ns);
    flag[0] = value;
}
"""


def _spin(cp, ctx, seconds: float, flag, value: float = 1.0):
    """Queue a kernel that keeps the context's stream busy for `seconds`, then sets flag."""
    kernel = cp.RawKernel(_SPIN_SRC, "opkit_test_spin")
    with ctx:
        kernel((1,), (1,), (np.int64(seconds * 1e9), flag, np.float32(value)))


def test_place_and_device_count(cp):
    assert opkit.is_compiled_with_cuda()
    n = opkit.cuda_device_count()
    assert n == cp.cuda.runtime.getDeviceCount() >= 1
    with pytest.raises(errors.Unavailable, match="visible"):
        DeviceContextPool.instance().get(opkit.CUDAPlace(n))


def test_device_context_has_a_stream_and_the_pool(cp, gpu_place, gpu_ctx):
    assert DeviceContextPool.instance().get(gpu_place) is gpu_ctx
    assert gpu_ctx.xp is cp
    assert isinstance(gpu_ctx.stream, cp.cuda.Stream)
    assert gpu_ctx.stream.ptr != 0          # not the default stream
    assert gpu_ctx.memory_pool is cp.get_default_memory_pool()
    with gpu_ctx:
        assert cp.cuda.get_current_stream() == gpu_ctx.stream
        a = cp.ones(1000)
    assert gpu_ctx.memory_pool.used_bytes() >= a.nbytes


def test_to_host_waits_for_the_kernels_queued_on_the_context_stream(cp, gpu_ctx):
    with gpu_ctx:
        flag = cp.zeros(1, dtype=cp.float32)
    gpu_ctx.synchronize()
    _spin(cp, gpu_ctx, 0.3, flag, 7.0)
    assert to_host(flag)[0] == 7.0          # called outside the stream's context


def test_a_feed_made_on_the_default_stream_is_complete_before_the_kernels_read_it(
        cp, gpu_place, gpu_ctx):
    # a cupy array produced by the user on the legacy default stream, then fed
    flag = cp.zeros(1, dtype=cp.float32)
    kernel = cp.RawKernel(_SPIN_SRC, "opkit_test_spin")
    kernel((1,), (1,), (np.int64(0.3e9), flag, np.float32(3.0)))  # default stream
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[1], dtype="float32", append_batch_size=False)
        out = opkit.layers.scale(x, scale=2.0)
    (v,) = opkit.Executor(gpu_place).run(main, feed={"x": flag}, fetch_list=[out])
    assert v[0] == 6.0


def _fit_a_line():
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[13], dtype="float32")
        y = opkit.layers.data("y", shape=[1], dtype="float32")
        h = opkit.layers.fc(x, size=32, act="relu")
        pred = opkit.layers.fc(h, size=1)
        loss = opkit.layers.mean(opkit.layers.square_error_cost(pred, y))
        opkit.optimizer.SGD(learning_rate=0.01).minimize(loss)
    return main, startup, loss


def _feed(seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((64, 13)).astype("float32"),
            "y": rng.standard_normal((64, 1)).astype("float32")}


def test_training_on_gpu_matches_cpu():
    losses = {}
    for place in (opkit.CPUPlace(), opkit.CUDAPlace(0)):
        main, startup, loss = _fit_a_line()
        scope = opkit.Scope()
        exe = opkit.Executor(place)
        np.random.seed(0)
        exe.run(startup, scope=scope)
        # same parameters on both places (names differ: each build makes new unique names)
        for i, param in enumerate(main.all_parameters()):
            var = scope.find_var(param.name)
            if var is not None and var.is_initialized():
                rng = np.random.default_rng(i)
                value = rng.uniform(-0.1, 0.1, var.value().shape).astype("float32")
                var.value().set(value, place)
        losses[place.kind] = [float(exe.run(main, feed=_feed(i), fetch_list=[loss],
                                            scope=scope)[0].reshape(-1)[0]) for i in range(5)]
    np.testing.assert_allclose(losses["GPU"], losses["CPU"], rtol=1e-4)


def test_only_fetches_copy_to_the_host(monkeypatch, gpu_place):
    main, startup, loss = _fit_a_line()
    scope = opkit.Scope()
    exe = opkit.Executor(gpu_place)
    exe.run(startup, scope=scope)
    calls = []
    real = device_module.to_host

    def counting(array):
        calls.append(type(array).__module__)
        return real(array)

    monkeypatch.setattr(device_module, "to_host", counting)
    monkeypatch.setattr(executor_module, "to_host", counting)
    exe.run(main, feed=_feed(), fetch_list=[], scope=scope)
    assert calls == [], f"host copies during a run without fetches: {calls}"
    exe.run(main, feed=_feed(), fetch_list=[loss], scope=scope)
    assert len(calls) == 1
    # the parameters stay on the device between runs
    for v in main.global_block().vars.values():
        var = scope.find_var(v.name)
        if v.persistable and var is not None and var.is_initialized() and \
                hasattr(var.value(), "place"):
            assert var.value().place.kind == "GPU", v.name


def test_no_synchronization_in_the_middle_of_a_run(cp, gpu_place, gpu_ctx):
    """A kernel keeps the stream busy for SPIN_S seconds; a whole training step without
    fetches must be queued behind it without the host waiting (any device->host read would
    wait for it): when the run returns, that kernel is still running. No wall-clock
    verdict: the host queues a step in milliseconds, SPIN_S is a margin of thousands."""
    SPIN_S = 5.0
    main, startup, loss = _fit_a_line()
    scope = opkit.Scope()
    exe = opkit.Executor(gpu_place)
    exe.run(startup, scope=scope)
    feed = _feed()
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)   # warm: kernels compiled
    exe.run(main, feed=feed, fetch_list=[], scope=scope)
    gpu_ctx.synchronize()
    with gpu_ctx:
        flag = cp.zeros(1, dtype=cp.float32)
    _spin(cp, gpu_ctx, SPIN_S, flag)
    exe.run(main, feed=feed, fetch_list=[], scope=scope)
    still_busy = not gpu_ctx.stream.done
    gpu_ctx.synchronize()
    assert still_busy, "the run waited for the GPU: the spinning kernel had finished"
    assert float(flag.get()[0]) == 1.0          # the spin did run to its end


def test_cpu_only_kernel_on_a_gpu_place_gets_host_inputs(gpu_place):
    """An op without a GPU kernel falls back to its CPU kernel: its inputs are copied to the
    host and its output lives on the host; the next GPU op copies it back."""
    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator
    from opkit.registry import scratch

    seen = {}

    class M(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("Copies X (CPU only; a test op).")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    with scratch():
        register_operator("opkit_test_cpu_copy", Op, M)

        @register_kernel("opkit_test_cpu_copy", place="CPU")
        def kernel(ctx):
            x = ctx.input("X")
            seen["type"] = type(x)
            ctx.set_output("Out", x * 1)

        main, startup = opkit.Program(), opkit.Program()
        with opkit.program_guard(main, startup):
            x = opkit.layers.data("x", shape=[3], dtype="float64")
            h = opkit.layers.scale(x, scale=3.0)
            y = opkit.layers.append_op("opkit_test_cpu_copy", {"X": h})
            z = opkit.layers.scale(y, scale=2.0)
        (v,) = opkit.Executor(gpu_place).run(main, feed={"x": np.ones((2, 3))},
                                             fetch_list=[z])
    assert seen["type"] is np.ndarray
    np.testing.assert_array_equal(v, np.full((2, 3), 6.0))


def test_to_device_and_back(cp, gpu_place):
    a = np.arange(6.0).reshape(2, 3)
    d = to_device(a, gpu_place)
    assert isinstance(d, cp.ndarray) and to_device(d, gpu_place) is d
    np.testing.assert_array_equal(to_host(d), a)
    t = opkit.LoDTensor(a, place=gpu_place)
    assert t.place == gpu_place and isinstance(t.data, cp.ndarray)
    np.testing.assert_array_equal(t.numpy(), a)


@pytest.mark.parametrize("op", ["elementwise_add", "softmax", "sum", "concat", "sequence_pool"])
def test_dedicated_kernel_is_the_gpu_kernel_when_registered(op):
    import reference_ops.gpu as gpu
    from opkit.registry import op_info

    if op in gpu.SKIPPED:
        pytest.skip(f"not registered: {gpu.SKIPPED[op]}")
    entries = [e for e in op_info(op).kernels.values() if e.place == "GPU"]
    assert entries and all("reference_ops/gpu/" in e.name.replace("\\", "/") for e in entries)
