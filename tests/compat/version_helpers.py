"""A tiny op ('vprobe') in several releases, and a saved model that uses it (tests only)."""
from __future__ import annotations

import contextlib

import numpy as np

import opkit
import opkit.io
from opkit import (OpMaker, OperatorWithKernel, OpVersionDesc, register_kernel,
                   register_op_version, register_operator)
from opkit.framework import op_version
from opkit.registry import scratch


def make_release(attrs: dict, kernel, checkpoints=(), out_dtype=None):
    class VProbeMaker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) input")
            self.add_output("Out", "(Tensor) output")
            for name, default in attrs.items():
                kind = "int" if isinstance(default, int) else "float"
                a = self.add_attr(name, kind, f"({kind}) {name}")
                if default is not None:
                    a.set_default(default)
            self.add_comment("vprobe: a test op whose releases change.")

    return VProbeMaker, kernel, list(checkpoints), out_dtype


class VProbeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


def register(release) -> None:
    maker, kernel, cps, out_dtype = release
    register_operator("vprobe", VProbeOp, maker)

    def vprobe_kernel(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", np.asarray(kernel(x, ctx.op.attrs), dtype=out_dtype or x.dtype))

    register_kernel("vprobe")(vprobe_kernel)
    reg = register_op_version("vprobe")
    for note, desc, upgrader in cps:
        reg.add_checkpoint(note, desc, upgrader=upgrader)


@contextlib.contextmanager
def registry_with(release):
    with scratch(), op_version.scratch():
        register(release)
        yield


V1 = make_release({"scale": 2.0}, lambda x, a: x * a["scale"])


def build_program(attrs=None):
    prog = opkit.Program()
    block = prog.global_block()
    x = block.create_var(name="x", shape=[-1, 3], dtype="float64", is_data=True)
    w = block.create_parameter("w", shape=[3, 2], dtype="float64")
    h = block.append_op("mul", {"X": x, "Y": w}, {"Out": "h"}).output("Out")[0]
    out = block.append_op("vprobe", {"X": h}, {"Out": "out"}, attrs or {}).output("Out")[0]
    return prog, out


def save_model(path, release=V1, attrs=None, sample=True):
    """Save `vprobe(mul(x, w))` under `release` to `path`; returns the sample feed."""
    with registry_with(release):
        prog, out = build_program(attrs)
        scope = opkit.Scope()
        rng = np.random.default_rng(0)
        scope.var("w").get_tensor().set(rng.normal(size=(3, 2)))
        feed = {"x": rng.normal(size=(4, 3))}
        opkit.io.save_inference_model(str(path), ["x"], [out], opkit.Executor(opkit.CPUPlace()),
                                      prog, scope=scope, sample_feed=feed if sample else None)
        return feed


def dump(release) -> dict:
    from checkers.compat import loads_op_descs
    from opkit.op_desc import dumps_op_descs

    with registry_with(release):
        return loads_op_descs(dumps_op_descs(), "dump")


def documented(*changes):
    d = OpVersionDesc()
    for method, *args in changes:
        getattr(d, method)(*args)
    return d
