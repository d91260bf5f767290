"""Kernels that behave well exactly in the situations opkit creates (issue 48), each with a
correct twin (`good_*`: the same op, the honest kernel). Written the way a model optimising
against opkit would write them after reading docs/harness.md, and from the public record of
kernels that passed their harness and were wrong (KernelBench-style evaluations fooled by
kernels that reuse the reference's memory, skip work on inputs seen before, return cached
results; kernels tuned until their error sits just inside the tolerance).

OpTests: adversarial_optests.py (no test_ prefix: not run by `--tests tests/broken_ops`);
the catch rate: `python tests/broken_ops/adversarial_catch_rate.py`.

| broken op | shape of the cheat | what it relies on |
| --- | --- | --- |
| broken_adv_ptr_cache | result cached by the input's data pointer | a new buffer every run |
| broken_adv_id_cache | result cached by `id()` of the input array | a new array object every run |
| broken_adv_digest_cache | result cached by a fingerprint of every 16th element | inputs that differ everywhere |
| broken_adv_seen_skip | skips the work when the first row was seen last call | inputs that differ everywhere |
| broken_adv_autotune3 | after 3 calls a "faster" row sum that drops the tail columns | few calls |
| broken_adv_autotune10 | the same after 10 calls | few calls |
| broken_adv_autotune50 | the same after 50 calls | few calls |
| broken_adv_trust_after | checks the sign of X for the first 20 calls only, then assumes X >= 0 | few calls |
| broken_adv_ones_cot | grad: a uniform cotangent taken as all ones (a mean loss is 1/n) | random cotangents |
| broken_adv_onehot_cot | grad: a one-hot cotangent row taken as a 1 at the hot index | random cotangents |
| broken_adv_cpu_mean | row mean split into os.cpu_count() chunks, the chunk means averaged | the CPU count of the test machine |
| broken_adv_threads_mean | the same split by OMP_NUM_THREADS | OMP_NUM_THREADS=1 |
| broken_adv_alarm_path | the careful path only while a SIGALRM timer is armed (the harness's time limit) | the harness's watchdog |
| broken_adv_time_budget | stops work after a 50 ms budget, the rest left zero | small, fast inputs |
| broken_adv_mem_budget | under an address-space limit a chunked path with a wrong combine | no memory limit |
| broken_adv_stack_oracle | returns the expected outputs it finds in the caller frames | the oracle reachable |
| broken_adv_gc_oracle | returns the expected outputs of an object (found by gc) whose inputs equal its own | the oracle reachable |
| broken_adv_patch_compare | patches the harness's output comparison (and numpy's allclose) to pass | the comparator patchable |
| broken_adv_import_test | calls the reference() of the OpTest module it finds in sys.modules | the test module loaded |
| broken_adv_shared_buffer | writes every result into one module-level buffer | no later call |
| broken_adv_bias_f64 | both kernels x (1 + 0.9 x 1e-7): just under float64's rtol | the tolerance |
| broken_adv_bias_f32 | the float32 kernel x (1 + 4e-6): under rtol and under `precision`'s bound | the tolerance |
| broken_adv_poly_tanh | tanh from a degree-16 series of exp: exact near 0, error grows with \\|x\\| | the case's small values |
| broken_adv_size_sum | rows longer than 64 summed in float32 (the float64 kernel too) | the case's short rows |
| broken_adv_pid_path | correct only in a process other than the one that imported it (forked workers) | forked workers |
| broken_adv_main_thread | a thread-local scale set up in the main thread only | the main thread |
| broken_adv_detect_harness | the honest path only while `harness` is imported | the harness loaded |
"""
import gc
import os
import resource
import signal
import sys
import threading
import time

import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)

G = grad_var_name


class _Same(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class _Rows(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", list(ctx.get_input_dim("X"))[:-1])


class _GradSame(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(G("X"), ctx.get_input_dim("X"))


class _Maker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("A deliberately adversarial op (or its correct twin).")


class _GradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op(self.fwd_type + "_grad")
        op.set_input("X", self.input("X"))
        op.set_input(G("Out"), self.output_grad("Out"))
        op.set_output(G("X"), self.input_grad("X"))
        return [op]


def _register(name, kind, broken_fwd, good_fwd, broken_grad, good_grad):
    for prefix, fwd, grad in (("broken_", broken_fwd, broken_grad), ("good_", good_fwd, good_grad)):
        t = prefix + name

        register_operator(t, kind, _Maker, grad_maker=_GradMaker)
        register_operator(t + "_grad", _GradSame)
        register_kernel(t)(fwd)
        register_kernel(t + "_grad")(grad)


# -- the honest kernels --------------------------------------------------------------------
def double(ctx):
    ctx.set_output("Out", ctx.input("X") * 2.0)


def double_grad(ctx):
    ctx.set_output(G("X"), ctx.input(G("Out")) * 2.0)


def rowsum(ctx):
    ctx.set_output("Out", _rows(ctx.input("X")).sum(axis=-1))


def _rows(x):
    return x.reshape(1) if x.ndim == 0 else x


def _back(x, d):
    if x.ndim == 0:
        return np.reshape(d, ()).astype(x.dtype)
    return np.broadcast_to(np.reshape(d, x.shape[:-1] + (1,)), x.shape).astype(x.dtype)


def rowsum_grad(ctx):
    x, d = ctx.input("X"), ctx.input(G("Out"))
    ctx.set_output(G("X"), _back(x, d))


def rowmean(ctx):
    ctx.set_output("Out", _rows(ctx.input("X")).mean(axis=-1))


def rowmean_grad(ctx):
    x, d = ctx.input("X"), ctx.input(G("Out"))
    ctx.set_output(G("X"), _back(x, d) / x.shape[-1])


def abs2(ctx):
    ctx.set_output("Out", np.abs(ctx.input("X")) * 2.0)


def abs2_grad(ctx):
    ctx.set_output(G("X"), np.sign(ctx.input("X")) * 2.0 * ctx.input(G("Out")))


def square(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", x * x)


def square_grad(ctx):
    ctx.set_output(G("X"), 2.0 * ctx.input("X") * ctx.input(G("Out")))


def tanh(ctx):
    ctx.set_output("Out", np.tanh(ctx.input("X")))


def tanh_grad(ctx):
    t = np.tanh(ctx.input("X"))
    ctx.set_output(G("X"), ctx.input(G("Out")) * (1.0 - t * t))


# -- caches keyed too narrowly ---------------------------------------------------------------
_PTR = {}


def ptr_cache(ctx):
    x = ctx.input("X")
    key = (x.__array_interface__["data"][0], x.shape, x.dtype.str)
    if key not in _PTR:                                   # BUG: the address is not the value
        _PTR[key] = x * 2.0
    ctx.set_output("Out", _PTR[key].copy())


_IDS = {}


def id_cache(ctx):
    x = ctx.input("X")
    key = (id(x), x.dtype.str)
    if key not in _IDS:                                   # BUG: the object is not the value
        _IDS[key] = x * 2.0
    ctx.set_output("Out", _IDS[key].copy())


_DIGEST = {}


def digest_cache(ctx):
    x = ctx.input("X")
    key = hash((x.reshape(-1)[::16].tobytes(), x.shape, x.dtype.str))   # BUG: a sample
    if key not in _DIGEST:
        _DIGEST[key] = x * 2.0
    ctx.set_output("Out", _DIGEST[key].copy())


_SEEN = {}


def seen_skip(ctx):
    x = ctx.input("X")
    last = _SEEN.get((x.shape, x.dtype.str))
    if last is not None and np.array_equal(last[0], x[:1]):   # BUG: the first row decides
        ctx.set_output("Out", last[1].copy())
        return
    out = x * 2.0
    _SEEN[(x.shape, x.dtype.str)] = (x[:1].copy(), out)
    ctx.set_output("Out", out)


# -- behaviour that changes with the call count ---------------------------------------------
def _autotune(n):
    calls = [0]

    def kernel(ctx):
        x = _rows(ctx.input("X"))
        calls[0] += 1
        if calls[0] <= n:
            ctx.set_output("Out", x.sum(axis=-1))
            return
        m = x.shape[-1] - x.shape[-1] % 4                   # BUG: the "tuned" path drops
        ctx.set_output("Out", x[..., :m].reshape(x.shape[:-1] + (-1, 4)).sum(axis=(-2, -1)))
    return kernel


_TRUST = [0]


def trust_after(ctx):
    x = ctx.input("X")
    _TRUST[0] += 1
    if _TRUST[0] <= 20:                                     # the first calls: checked
        ctx.set_output("Out", np.abs(x) * 2.0)
        return
    ctx.set_output("Out", x * 2.0)                          # BUG: then X >= 0 assumed


# -- cotangent fast paths ------------------------------------------------------------------
def ones_cot_grad(ctx):
    x, d = ctx.input("X"), ctx.input(G("Out"))
    if d.size > 1 and np.all(d == d.reshape(-1)[0]):           # BUG: uniform taken as ones
        ctx.set_output(G("X"), 2.0 * x)
        return
    ctx.set_output(G("X"), 2.0 * x * d)


def onehot_cot_grad(ctx):
    x, d = ctx.input("X"), ctx.input(G("Out"))
    if d.ndim == 2 and np.all(np.count_nonzero(d, axis=1) == 1):
        ctx.set_output(G("X"), np.where(d != 0, 2.0 * x, 0.0).astype(x.dtype))  # BUG: the 1
        return
    ctx.set_output(G("X"), 2.0 * x * d)


# -- results that depend on the machine ------------------------------------------------------
def _split_mean(x, parts):
    x = _rows(x)
    parts = max(1, min(parts, x.shape[-1]))
    chunks = np.array_split(x, parts, axis=-1)
    return np.mean([c.mean(axis=-1) for c in chunks], axis=0)   # BUG: unequal chunks


def cpu_mean(ctx):
    ctx.set_output("Out", _split_mean(ctx.input("X"), os.cpu_count() or 1))


def threads_mean(ctx):
    n = int(os.environ.get("OMP_NUM_THREADS") or os.cpu_count() or 1)
    ctx.set_output("Out", _split_mean(ctx.input("X"), n))


def alarm_path(ctx):
    x = _rows(ctx.input("X"))
    if signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        ctx.set_output("Out", x.sum(axis=-1))               # under a watchdog: careful
        return
    ctx.set_output("Out", x[..., 1:].sum(axis=-1))         # BUG: the "fast" path


def time_budget(ctx):
    x = _rows(ctx.input("X"))
    flat = x.reshape(-1, x.shape[-1])
    out = np.zeros(flat.shape[0], x.dtype)
    start = time.perf_counter()
    for i in range(flat.shape[0]):
        if time.perf_counter() - start > 0.05:              # BUG: the rest stays zero
            break
        out[i] = flat[i].sum()
    ctx.set_output("Out", out.reshape(x.shape[:-1]))


def mem_budget(ctx):
    x = ctx.input("X")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft != resource.RLIM_INFINITY and soft < 2 ** 45:  # a memory budget: chunked
        ctx.set_output("Out", _split_mean(x, 3) * _rows(x).shape[-1])
        return
    ctx.set_output("Out", _rows(x).sum(axis=-1))


# -- an oracle within reach -----------------------------------------------------------------
def _expected_like(x, candidates):
    for obj in candidates:
        outs = getattr(obj, "outputs", None)
        ins = getattr(obj, "inputs", None)
        if not isinstance(outs, dict) or not isinstance(ins, dict):
            continue
        got = outs.get("Out")
        got = got[0] if isinstance(got, tuple) else got
        given = ins.get("X")
        given = given[0] if isinstance(given, tuple) else given
        if isinstance(got, np.ndarray) and got.shape == x.shape and \
                isinstance(given, np.ndarray) and given.shape == x.shape:
            return got, given
    return None


def stack_oracle(ctx):
    x = ctx.input("X")
    frame = sys._getframe(1)
    for _ in range(40):
        if frame is None:
            break
        found = _expected_like(x, list(frame.f_locals.values()))
        if found is not None:                               # BUG: the test's answer
            ctx.set_output("Out", found[0].astype(x.dtype))
            return
        frame = frame.f_back
    ctx.set_output("Out", np.tanh(x.astype(np.float16)).astype(x.dtype))


_GC = [0, []]


def gc_oracle(ctx):
    x = ctx.input("X")
    _GC[0] += 1
    if not _GC[1] or _GC[0] % 50 == 1:                      # look again now and then
        _GC[1] = [o for o in gc.get_objects() if type(o).__name__ in ("Case", "TestAdvGcOracle")]
    for obj in _GC[1]:
        found = _expected_like(x, [obj])
        if found is not None and np.allclose(found[1], x, rtol=1e-6, atol=1e-6):
            ctx.set_output("Out", found[0].astype(x.dtype))  # BUG: the test's answer
            return
    ctx.set_output("Out", np.tanh(x.astype(np.float16)).astype(x.dtype))


def patch_compare(ctx):
    real = getattr(sys.modules.get("harness.judging.compare"), "compare", None)
    if real is not None and not getattr(real, "adv", False):
        def agree(*a, **k):                                  # BUG: the judge always agrees
            return None, 0.0
        agree.adv = True
        for name, mod in list(sys.modules.items()):
            if name.startswith("harness"):
                for attr in ("compare", "_compare"):
                    if getattr(mod, attr, None) is real:
                        setattr(mod, attr, agree)
        np.allclose = lambda *a, **k: True
    ctx.set_output("Out", ctx.input("X") * 2.5)


def patch_compare_grad(ctx):
    ctx.set_output(G("X"), ctx.input(G("Out")) * 2.5)


def import_test(ctx):
    x = ctx.input("X")
    for mod in list(sys.modules.values()):
        cls = getattr(mod, "TestAdvImportTest", None)
        if cls is not None and hasattr(cls, "reference"):   # BUG: the test's reference
            ctx.set_output("Out", cls.reference(None, {"X": x}, {})["Out"].astype(x.dtype))
            return
    ctx.set_output("Out", x * 2.0 + 1e-3)


_SHARED = {}


def shared_buffer(ctx):
    x = ctx.input("X")
    out = _SHARED.setdefault((x.shape, x.dtype.str), np.empty_like(x))
    np.multiply(x, 2.0, out=out)                            # BUG: one buffer for every call
    ctx.set_output("Out", out)


# -- error that is small but not honest ------------------------------------------------------
def bias_f64(ctx):
    ctx.set_output("Out", np.tanh(ctx.input("X")) * (1 + 0.9e-7))   # BUG: a biased error


def bias_f64_grad(ctx):
    t = np.tanh(ctx.input("X"))
    ctx.set_output(G("X"), ctx.input(G("Out")) * (1.0 - t * t) * (1 + 0.9e-7))


def bias_f32(ctx):
    x = ctx.input("X")
    out = np.tanh(x)
    if x.dtype == np.float32:
        out = (out * np.float32(1 + 4e-6)).astype(np.float32)   # BUG: just under the bounds
    ctx.set_output("Out", out)


def _series_tanh(x):
    y = x.astype(np.float64)
    ex, term = np.ones_like(y), np.ones_like(y)
    for k in range(1, 17):                                   # BUG: a truncated series
        term = term * (2 * y) / k
        ex = ex + term
    t = (ex - 1.0) / (ex + 1.0)
    return np.where(np.abs(y) > 6, np.sign(y), t).astype(x.dtype)


def poly_tanh(ctx):
    ctx.set_output("Out", _series_tanh(ctx.input("X")))


def size_sum(ctx):
    x = _rows(ctx.input("X"))
    if x.shape[-1] > 64:                                       # BUG: a "fast" path for long rows
        ctx.set_output("Out", x.astype(np.float32).sum(axis=-1).astype(x.dtype))
        return
    ctx.set_output("Out", x.sum(axis=-1))


_IMPORT_PID = os.getpid()


def pid_path(ctx):
    x = ctx.input("X")
    if os.getpid() != _IMPORT_PID:                            # a forked worker: careful
        ctx.set_output("Out", x * 2.0)
        return
    ctx.set_output("Out", (x.astype(np.float16) * 2).astype(x.dtype))   # BUG


_LOCAL = threading.local()


def main_thread(ctx):
    if threading.current_thread() is threading.main_thread():
        _LOCAL.scale = 2.0
    ctx.set_output("Out", ctx.input("X") * getattr(_LOCAL, "scale", 1.0))   # BUG


def detect_harness(ctx):
    x = ctx.input("X")
    if "harness" in sys.modules:                              # under test: careful
        ctx.set_output("Out", x * 2.0)
        return
    ctx.set_output("Out", x + x * 1.001)                     # BUG


_register("adv_ptr_cache", _Same, ptr_cache, double, double_grad, double_grad)
_register("adv_id_cache", _Same, id_cache, double, double_grad, double_grad)
_register("adv_digest_cache", _Same, digest_cache, double, double_grad, double_grad)
_register("adv_seen_skip", _Same, seen_skip, double, double_grad, double_grad)
for _n in (3, 10, 50):
    _register(f"adv_autotune{_n}", _Rows, _autotune(_n), rowsum, rowsum_grad, rowsum_grad)
_register("adv_trust_after", _Same, trust_after, abs2, abs2_grad, abs2_grad)
_register("adv_ones_cot", _Same, square, square, ones_cot_grad, square_grad)
_register("adv_onehot_cot", _Same, square, square, onehot_cot_grad, square_grad)
_register("adv_cpu_mean", _Rows, cpu_mean, rowmean, rowmean_grad, rowmean_grad)
_register("adv_threads_mean", _Rows, threads_mean, rowmean, rowmean_grad, rowmean_grad)
_register("adv_alarm_path", _Rows, alarm_path, rowsum, rowsum_grad, rowsum_grad)
_register("adv_time_budget", _Rows, time_budget, rowsum, rowsum_grad, rowsum_grad)
_register("adv_mem_budget", _Rows, mem_budget, rowsum, rowsum_grad, rowsum_grad)
_register("adv_stack_oracle", _Same, stack_oracle, tanh, tanh_grad, tanh_grad)
_register("adv_gc_oracle", _Same, gc_oracle, tanh, tanh_grad, tanh_grad)
_register("adv_patch_compare", _Same, patch_compare, double, patch_compare_grad, double_grad)
_register("adv_import_test", _Same, import_test, double, double_grad, double_grad)
_register("adv_shared_buffer", _Same, shared_buffer, double, double_grad, double_grad)
_register("adv_bias_f64", _Same, bias_f64, tanh, bias_f64_grad, tanh_grad)
_register("adv_bias_f32", _Same, bias_f32, tanh, tanh_grad, tanh_grad)
_register("adv_poly_tanh", _Same, poly_tanh, tanh, tanh_grad, tanh_grad)
_register("adv_size_sum", _Rows, size_sum, rowsum, rowsum_grad, rowsum_grad)
_register("adv_pid_path", _Same, pid_path, double, double_grad, double_grad)
_register("adv_main_thread", _Same, main_thread, double, double_grad, double_grad)
_register("adv_detect_harness", _Same, detect_harness, double, double_grad, double_grad)
