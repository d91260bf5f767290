"""`dtypes` gives no false green: an OperatorWithKernel without kernels (a typo in
register_kernel's op type), a float op without a CPU kernel, or a place with kernels but
without float32/float64, fails; the correct twin passes."""
from __future__ import annotations

import numpy as np
import pytest


def _register(name, kernels):
    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator

    class Maker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input.")
            self.add_output("Out", "(Tensor) output.")
            self.add_comment("Out = X")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    register_operator(name, Op, Maker)
    for place, dtypes in kernels:
        register_kernel(name, place=place, dtypes=dtypes)(
            lambda ctx: ctx.set_output("Out", ctx.input("X").copy()))


def _dtypes(name):
    from harness.backend.case import Case
    from harness.executing.pool import run_case

    x = np.ones((2, 3))
    return run_case(Case(f"Test_{name}", name, {"X": x}, {}, {"Out": x}), checks=["dtypes"])


@pytest.mark.parametrize("name, kernels, words", [
    ("fg_no_kernel", [], "registers no kernels"),
    ("fg_gpu_only", [("GPU", ("float32", "float64"))], "no CPU kernel"),
    ("fg_gpu_int_only", [("CPU", ("float32", "float64")), ("GPU", ("int64",))],
     "no float32 kernel on GPU"),
    ("fg_cpu_f32_only", [("CPU", ("float32",))], "no float64 kernel on CPU"),
])
def test_broken_kernel_sets_fail_dtypes(name, kernels, words):
    from opkit.registry import scratch

    with scratch():
        _register(name, kernels)
        got = _dtypes(name)
    failed = [r for r in got if r.status == "fail"]
    assert failed and any(words in r.message for r in failed), got


def test_correct_twin_passes():
    from opkit.registry import scratch

    with scratch():
        _register("fg_good", [("CPU", ("float32", "float64")), ("GPU", ("float32", "float64"))])
        got = _dtypes("fg_good")
    assert got and all(r.status == "pass" for r in got), got
