"""Helpers shared by the contract tests (tests/contract/test_contract_*.py): the example
clip op and its OpTest as source text, signature assertions, and running `python -m
opkit` in a subprocess."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import opkit


ROOT = Path(__file__).resolve().parents[2]

# -------------------------------------------------------------------------------- helpers

REQUIRED = inspect.Parameter.empty
POS = inspect.Parameter.POSITIONAL_OR_KEYWORD
KW = inspect.Parameter.KEYWORD_ONLY
VAR_POS = inspect.Parameter.VAR_POSITIONAL


def assert_signature(fn, reference, names=True) -> None:
    """`fn` takes `reference`'s parameters, in order, with the same names, kinds and defaults
    (`self` ignored; a parameter the contract requires may have a default). More parameters
    may follow, if they have defaults or are **kwargs. `names=False`: positional use only."""
    got = [p for p in inspect.signature(fn).parameters.values() if p.name != "self"]
    want = [p for p in inspect.signature(reference).parameters.values() if p.name != "self"]
    assert len(got) >= len(want), f"{fn}: {inspect.signature(fn)} lacks {inspect.signature(reference)}"
    for g, w in zip(got, want):
        assert (g.name if names else w.name, g.kind) == (w.name, w.kind), \
            f"{fn.__qualname__}{inspect.signature(fn)}: want {inspect.signature(reference)}"
        if w.default is REQUIRED:
            continue
        assert g.default == w.default or (g.default is w.default), \
            f"{fn.__qualname__}: {g.name} defaults to {g.default!r}, want {w.default!r}"
    for extra in got[len(want):]:
        assert extra.default is not REQUIRED or extra.kind == inspect.Parameter.VAR_KEYWORD, \
            f"{fn.__qualname__}: extra parameter {extra.name} must have a default"


def run_opkit(*args, cwd=None, timeout=1800):
    env = dict(os.environ, NO_COLOR="1", PYTHONPATH=str(ROOT))
    return subprocess.run([sys.executable, "-m", "opkit", *map(str, args)], cwd=cwd or ROOT,
                          capture_output=True, text=True, timeout=timeout, env=env)


def json_stdout(proc):
    """The whole standard output is one JSON document (nothing else on it)."""
    try:
        return json.loads(proc.stdout)
    except ValueError:  # pragma: no cover - the failure message
        pytest.fail(f"stdout is not only JSON (rc {proc.returncode}):\n{proc.stdout[:2000]}\n"
                    f"stderr:\n{proc.stderr[-2000:]}")


def run_single(op_type, feed, inputs, outputs, attrs=None, fetch=None, place=None,
               return_numpy=True, enable_inplace=False, declare=None):
    """Run one op in a fresh program and scope; `declare` = {name: (shape, dtype, lod_level)}."""
    prog = opkit.Program()
    block = prog.global_block()
    for name, (shape, dtype, lod_level) in (declare or {}).items():
        block.create_var(name=name, shape=shape, dtype=dtype, lod_level=lod_level)
    for name, value in feed.items():
        if name not in block.vars:
            arr = value[0] if isinstance(value, tuple) else value
            block.create_var(name=name, shape=arr.shape, dtype=arr.dtype.name,
                             lod_level=len(value[1]) if isinstance(value, tuple) else 0)
    block.append_op(op_type, inputs, outputs, attrs)
    exe = opkit.Executor(place or opkit.CPUPlace(), enable_inplace=enable_inplace)
    return exe.run(prog, feed=feed, fetch_list=fetch or [], scope=opkit.Scope(),
                   return_numpy=return_numpy)


# The op of API.md section 2, verbatim but for its type (`contract_clip`).
CLIP_OP_SOURCE = '''
import numpy as np
from opkit import (OpMaker, OperatorWithKernel, register_operator, register_kernel,
                   GradOpMaker, grad_var_name, enforce, enforce_lt, errors)

class ClipOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) The input of clip op.")
        self.add_output("Out", "(Tensor) The output of clip op.")
        self.add_attr("min", "float", "(float) Minimum value.")
        self.add_attr("max", "float", "(float) Maximum value.")
        self.add_comment(r"Clip operator. $$Out = \\min(\\max(X, min), max)$$")

class ClipOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of ClipOp should not be null.")
        enforce_lt(ctx.attr("min"), ctx.attr("max"),
                   errors.InvalidArgument("max (%s) should be greater than min (%s).",
                                          ctx.attr("max"), ctx.attr("min")))
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")

class ClipGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("contract_clip_grad")          # attrs are copied
        op.set_input("X", self.input("X"))
        op.set_input(grad_var_name("Out"), self.output_grad("Out"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]

class ClipGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

register_operator("contract_clip", ClipOp, ClipOpMaker, grad_maker=ClipGradMaker)
register_operator("contract_clip_grad", ClipGradOp)

@register_kernel("contract_clip", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def clip_kernel(ctx):
    xp = ctx.xp                                      # numpy on CPU, cupy on GPU
    ctx.set_output("Out", xp.clip(ctx.input("X"), ctx.attr("min"), ctx.attr("max")))

@register_kernel("contract_clip_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def clip_grad_kernel(ctx):
    x, dout = ctx.input("X"), ctx.input(grad_var_name("Out"))
    mask = (x > ctx.attr("min")) & (x < ctx.attr("max"))
    ctx.set_output(grad_var_name("X"), dout * MASK_FACTOR * mask)

MASK_FACTOR = 1.0
'''

# The test of API.md section 6, for `contract_clip`, with a `reference`.
CLIP_TEST_SOURCE = '''
import numpy as np
from harness import OpTest

class TestContractClipOp(OpTest):
    def setUp(self):
        self.op_type = "contract_clip"
        x = np.random.uniform(-1, 1, (4, 5)).astype("float64")
        # the bounds lie outside the data: generated cases (LoD edges, fuzz) draw new data
        # in the data's range and never land on a kink of the numeric gradient
        self.inputs = {"X": (x, [[1, 3]])}
        self.attrs = {"min": -2.0, "max": 2.0}
        self.outputs = {"Out": (np.clip(x, -2.0, 2.0), [[1, 3]])}

    def reference(self, inputs, attrs):
        x = inputs["X"]
        if isinstance(x, tuple):
            return {"Out": (np.clip(x[0], attrs["min"], attrs["max"]), x[1])}
        return {"Out": np.clip(x, attrs["min"], attrs["max"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
'''


def write_clip_project(folder: Path, broken_grad: bool = False, pyproject: bool = False):
    """ops/contract_clip_op.py and tests/test_contract_clip.py under `folder`."""
    (folder / "ops").mkdir(exist_ok=True)
    (folder / "optests").mkdir(exist_ok=True)
    source = CLIP_OP_SOURCE.replace("MASK_FACTOR = 1.0", "MASK_FACTOR = 3.0") if broken_grad \
        else CLIP_OP_SOURCE
    (folder / "ops" / "contract_clip_op.py").write_text(source)
    (folder / "optests" / "test_contract_clip.py").write_text(CLIP_TEST_SOURCE)
    if pyproject:
        (folder / "pyproject.toml").write_text(
            '[project]\nname = "x"\nversion = "0"\n\n'
            '[tool.opkit]\nops = ["ops/contract_clip_op.py"]\ntests = ["optests"]\n')
    return folder / "ops" / "contract_clip_op.py", folder / "optests"


def load_file(path: Path, name: str):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ATTR_TYPES = {"int": 0, "float": 1, "string": 2, "ints": 3, "floats": 4, "strings": 5,
              "bool": 6, "bools": 7, "block": 8, "long": 9, "blocks": 10, "longs": 11,
              "float64s": 12, "float64": 15}


def register_probe(record, *, base=None, infer_shape=None, kernel=None, maker=None, **kw):
    """Registers `contract_probe` (X duplicable-free, Out; attr `k` default 2.0)."""
    class Maker(opkit.OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_input("Bias", "bias").as_dispensable()
            self.add_input("Xs", "xs").as_duplicable().as_dispensable()
            self.add_output("Out", "out")
            self.add_output("Outs", "outs").as_duplicable().as_dispensable()
            self.add_attr("k", "float", "k", default=2.0)
            self.add_comment("probe")

    class Probe(base or opkit.OperatorWithKernel):
        def infer_shape(self, ctx):
            if infer_shape is not None:
                return infer_shape(ctx)
            record.setdefault("runtime", []).append(ctx.is_runtime())
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))
            ctx.share_lod("X", "Out")

    opkit.register_operator("contract_probe", Probe, maker or Maker, **kw)
    if kernel is not None:
        opkit.register_kernel("contract_probe")(kernel)
    return Probe


RULES = {"OPK000": "syntax-error", "OPK001": "input-mutation",
         "OPK002": "empty-enforce-message", "OPK003": "missing-float-double-kernel",
         "OPK004": "output-shares-input", "OPK005": "unchecked-kernel-dtype",
         "OPK006": "op-file-layout", "OPK007": "slot-naming", "OPK008": "missing-op-comment"}
# rules that report notes, off by default (issue 26: where the analysis stopped)
NOTE_RULES = {"OPK009": "analysis-stopped"}
