"""The public contract of /work/shared/API.md, pinned section by section.

Every name, signature, default, CLI behaviour, exit code, JSON key and check/rule name that
API.md states is checked here: signatures with `inspect.signature`, semantics by running
them. Ops made up for a test are registered inside `opkit.registry.scratch()`; the command
line is run as `python -m opkit ...` in a subprocess, with op and test files under tmp_path.
"""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import opkit
from opkit import errors
from opkit.registry import scratch

ROOT = Path(__file__).resolve().parents[1]

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


def run_opkit(*args, cwd=None, timeout=240):
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


@pytest.fixture
def clip_op(tmp_path):
    """`contract_clip` (API.md's example op) registered for the test only."""
    op_file, _ = write_clip_project(tmp_path)
    with scratch():
        load_file(op_file, "contract_clip_op_module")
        yield "contract_clip"


# ========================================================================= 1. packages

def test_1_packages_import():
    import checkers  # noqa: F401
    import harness
    import reference_ops  # noqa: F401

    assert isinstance(opkit.__version__, str)
    for sub in ("layers", "optimizer", "registry", "errors"):
        assert getattr(opkit, sub).__name__ == f"opkit.{sub}"
    assert hasattr(harness, "OpTest")


def test_1_reference_ops_one_forward_op_per_file():
    from opkit.registry import all_op_types, op_info

    folder = Path(__import__("reference_ops").__file__).parent
    files = {p.stem for p in folder.glob("*_op.py")}
    forward = [t for t in all_op_types() if not t.endswith("_grad")]
    for op_type in forward:
        source = op_info(op_type).source.split(":")[0]
        if Path(source).parent == folder:
            assert Path(source).name == f"{op_type}_op.py", (op_type, source)
    assert files <= {f"{t}_op" for t in forward}, files - {f"{t}_op" for t in forward}


def test_1_without_cuda_gpu_is_reported_not_raised():
    assert isinstance(opkit.is_compiled_with_cuda(), bool)
    assert isinstance(opkit.cuda_device_count(), int) and opkit.cuda_device_count() >= 0


# ===================================================================== 2. writing an op

# -- the example op itself --------------------------------------------------------------
def test_2_example_clip_op_runs_forward_and_backward(clip_op):
    x = np.array([[-1.0, -0.2, 0.3, 0.9]], dtype="float32")
    (out,) = run_single("contract_clip", {"x": x}, {"X": "x"}, {"Out": "out"},
                        {"min": -0.5, "max": 0.5}, fetch=["out"])
    np.testing.assert_array_equal(out, np.clip(x, -0.5, 0.5))
    with pytest.raises(errors.InvalidArgument, match="should be greater than min"):
        run_single("contract_clip", {"x": x}, {"X": "x"}, {"Out": "out"},
                   {"min": 0.5, "max": -0.5}, fetch=["out"])


# -- OpMaker ----------------------------------------------------------------------------
def test_2_opmaker_signatures():
    def add_input(self, name, comment): ...
    def add_attr(self, name, type, comment, default=None): ...
    def add_comment(self, text): ...

    assert_signature(opkit.OpMaker.add_input, add_input)
    assert_signature(opkit.OpMaker.add_output, add_input)
    assert_signature(opkit.OpMaker.add_comment, add_comment)
    params = list(inspect.signature(opkit.OpMaker.add_attr).parameters)
    assert params[:5] == ["self", "name", "type", "comment", "default"]


def _proto(make):
    class Maker(opkit.OpMaker):
        pass

    Maker.make = make
    return Maker("contract_maker").build()


def test_2_var_builders_are_chainable():
    def make(self):
        self.add_input("X", "x").as_dispensable().as_duplicable()
        self.add_input("Y", "y").as_intermediate().as_extra()
        self.add_output("Out", "out").as_duplicable().as_dispensable().as_intermediate() \
            .as_extra()
        self.add_comment("doc")

    proto = _proto(make)
    x, y, out = proto.input("X"), proto.input("Y"), proto.output("Out")
    assert (x.dispensable, x.duplicable, x.intermediate, x.extra) == (True, True, False, False)
    assert (y.dispensable, y.duplicable, y.intermediate, y.extra) == (False, False, True, True)
    assert (out.dispensable, out.duplicable, out.intermediate, out.extra) == (True,) * 4
    assert proto.comment == "doc"


def test_2_attr_checker_builders():
    seen = []

    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "out")
        self.add_attr("a", "int", "a").set_default(3).greater_than(0).less_than(10)
        self.add_attr("b", "string", "b", default="x").in_set(["x", "y"])
        self.add_attr("c", "float", "c", default=1.0).add_custom_checker(
            lambda v: seen.append(v) or v != 2.0)
        self.add_attr("req", "float", "required")
        self.add_comment("doc")

    proto = _proto(make)
    checked = proto.check_attrs({"req": 1.5})
    assert checked == {"a": 3, "b": "x", "c": 1.0, "req": 1.5}   # defaults filled in
    assert proto.attr("b").default == "x"
    for bad in ({"a": 0}, {"a": 10}, {"b": "z"}, {"c": 2.0}):
        with pytest.raises(errors.InvalidArgument):
            proto.check_attrs({"req": 1.0, **bad})
    assert 2.0 in seen
    with pytest.raises(errors.InvalidArgument, match="req"):   # no default: required
        proto.check_attrs({})


ATTR_TYPES = {"int": 0, "float": 1, "string": 2, "ints": 3, "floats": 4, "strings": 5,
              "bool": 6, "bools": 7, "block": 8, "long": 9, "blocks": 10, "longs": 11,
              "float64s": 12, "float64": 15}


@pytest.mark.parametrize("type_name", sorted(ATTR_TYPES))
def test_2_every_attr_type_name(type_name):
    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "out")
        self.add_attr("a", type_name, "an attr")
        self.add_comment("doc")

    assert _proto(make).attr("a").type == type_name


@pytest.mark.parametrize("short, name", [(int, "int"), (float, "float"), (str, "string"),
                                         (bool, "bool")])
def test_2_python_shorthand_attr_types(short, name):
    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "out")
        self.add_attr("a", short, "an attr")
        self.add_comment("doc")

    assert _proto(make).attr("a").type == name


def test_2_unknown_attr_type_is_refused():
    def make(self):
        self.add_attr("a", "complex128", "an attr")

    with pytest.raises(errors.InvalidArgument):
        _proto(make)


# -- InferShapeContext ------------------------------------------------------------------
INFER_SHAPE_METHODS = ("has_input", "has_output", "get_input_dim", "get_inputs_dim",
                       "set_output_dim", "set_outputs_dim", "share_lod", "get_lod_level",
                       "set_lod_level", "attr", "is_runtime")


def test_2_infer_shape_context_methods():
    from opkit.framework.context import (CompileTimeInferShapeContext,
                                         RuntimeInferShapeContext)

    for cls in (CompileTimeInferShapeContext, RuntimeInferShapeContext):
        assert issubclass(cls, opkit.InferShapeContext)
        for name in INFER_SHAPE_METHODS:
            assert callable(getattr(cls, name, None)), (cls.__name__, name)

    def share_lod(self, in_, out): ...
    sig = [p for p in inspect.signature(opkit.InferShapeContext.share_lod).parameters][1:3]
    assert len(sig) == 2


def _register_probe(record, *, base=None, infer_shape=None, kernel=None, maker=None, **kw):
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


def test_2_infer_shape_runs_at_compile_and_run_time():
    record = {}
    with scratch():
        _register_probe(record, kernel=lambda ctx: ctx.set_output("Out", ctx.input("X") * 2))
        prog = opkit.Program()
        block = prog.global_block()
        block.create_var(name="x", shape=[-1, 3], dtype="float32", lod_level=1)
        block.append_op("contract_probe", {"X": "x"}, {"Out": "out"})
        assert record["runtime"] == [False]                      # at append_op
        assert block.var("out").shape == [-1, 3] and block.var("out").lod_level == 1
        x = np.ones((4, 3), "float32")
        opkit.Executor(opkit.CPUPlace()).run(prog, feed={"x": (x, [[1, 3]])},
                                             scope=opkit.Scope())
        assert record["runtime"] == [False, True]


def test_2_infer_shape_context_calls():
    seen = {}

    def infer(ctx):
        seen.setdefault("runtime", []).append(ctx.is_runtime())
        seen["has"] = (ctx.has_input("X"), ctx.has_input("Bias"), ctx.has_output("Out"),
                       ctx.has_output("Outs"))
        dims = ctx.get_inputs_dim("Xs")
        seen["dims"] = [tuple(d) for d in dims]
        seen["attr"] = ctx.attr("k")
        seen["lod_level"] = ctx.get_lod_level("X")
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.set_outputs_dim("Outs", dims)
        ctx.share_lod("X", "Out")
        ctx.set_lod_level("Outs", 0)

    def kernel(ctx):
        ctx.set_output("Out", ctx.input("X") + 0)
        from opkit.framework.context import ExecutionContext  # noqa: F401
        for i, a in enumerate(ctx.inputs("Xs")):
            ctx.output_tensor("Outs", i).mutable_data(a.shape, a.dtype)[...] = a

    with scratch():
        _register_probe({}, infer_shape=infer, kernel=kernel)
        prog = opkit.Program()
        block = prog.global_block()
        block.create_var(name="x", shape=[3, 2], dtype="float32", lod_level=1)
        block.create_var(name="a", shape=[1, 2], dtype="float32")
        block.create_var(name="b", shape=[5], dtype="float32")
        block.append_op("contract_probe", {"X": "x", "Xs": ["a", "b"]},
                        {"Out": "out", "Outs": ["oa", "ob"]}, {"k": 4.0})
        assert seen["has"] == (True, False, True, True)
        assert seen["dims"] == [(1, 2), (5,)] and seen["attr"] == 4.0
        assert seen["lod_level"] == 1
        assert block.var("ob").shape == [5]
        feed = {"x": (np.ones((3, 2), "float32"), [[3]]), "a": np.ones((1, 2), "float32"),
                "b": np.arange(5, dtype="float32")}
        out, ob = opkit.Executor().run(prog, feed=feed, fetch_list=["out", "ob"],
                                       scope=opkit.Scope())
        assert seen["runtime"] == [False, True] and seen["lod_level"] == 1
        np.testing.assert_array_equal(ob, np.arange(5))


# -- operators --------------------------------------------------------------------------
def test_2_indicate_var_data_type_names_op_and_variable():
    class Op(opkit.OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", [2])

        def get_expected_kernel_type(self, ctx):
            return opkit.OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)

    class Maker(opkit.OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("doc")

    assert_signature(opkit.OperatorWithKernel.indicate_var_data_type,
                     lambda self, ctx, name: None, names=False)
    with scratch():
        opkit.register_operator("contract_dtype", Op, Maker)

        @opkit.register_kernel("contract_dtype", dtypes="float64")
        def kernel(ctx):
            ctx.set_output("Out", np.zeros(2, ctx.dtype))

        (out,) = run_single("contract_dtype", {"x": np.ones(2)}, {"X": "x"}, {"Out": "o"},
                            fetch=["o"])
        assert out.dtype == np.float64
        prog = opkit.Program()
        block = prog.global_block()
        block.create_var(name="x", shape=[2], dtype="float64")
        block.append_op("contract_dtype", {"X": "x"}, {"Out": "o"})
        with pytest.raises(errors.PreconditionNotMet) as info:
            opkit.Executor().run(prog, scope=opkit.Scope())
        assert "contract_dtype" in str(info.value) and "'x'" in str(info.value)


def test_2_operator_base_run_impl():
    assert_signature(opkit.OperatorBase.run_impl, lambda self, scope, place: None)

    class Maker(opkit.OpMaker):
        def make(self):
            self.add_output("Out", "out")
            self.add_attr("value", "float", "v", default=7.0)
            self.add_comment("doc")

    class Fill(opkit.OperatorBase):
        def run_impl(self, scope, place):
            scope.var(self.outputs["Out"][0]).get_tensor().set(
                np.full(3, self.attrs["value"]))

    with scratch():
        opkit.register_operator("contract_base", Fill, Maker)
        assert not opkit.registry.op_info("contract_base").kernels
        (out,) = run_single("contract_base", {}, {}, {"Out": "o"}, fetch=["o"])
        np.testing.assert_array_equal(out, [7.0, 7.0, 7.0])


# -- registration -----------------------------------------------------------------------
def test_2_register_signatures():
    def register_operator(op_type, op_class, maker=None, *, grad_maker=None,
                          infer_var_type=None, inplace=None, no_need_buffer=None): ...

    def register_kernel(op_type, place="CPU", dtypes=("float32", "float64"), layout="ANY",
                        library="PLAIN"): ...

    assert_signature(opkit.register_operator, register_operator)
    assert_signature(opkit.register_kernel, register_kernel)
    assert opkit.registry.register_operator is opkit.register_operator


def test_2_register_kernel_function_and_opkernel_class():
    with scratch():
        _register_probe({})

        @opkit.register_kernel("contract_probe", place="CPU", dtypes="float32")
        def f32(ctx):
            ctx.set_output("Out", ctx.input("X") * ctx.attr("k"))

        @opkit.register_kernel("contract_probe", dtypes=("float64",))
        class F64(opkit.OpKernel):
            def compute(self, ctx):
                ctx.set_output("Out", ctx.input("X") * 10)

        assert callable(f32) and inspect.isclass(F64)   # the decorator returns its argument
        kernels = opkit.registry.op_info("contract_probe").kernels
        assert {k[:2] for k in kernels} == {("float32", "CPU"), ("float64", "CPU")}
        assert all(k[2:] == ("ANY", "PLAIN") for k in kernels)
        for dtype, want in (("float32", 2.0), ("float64", 10.0)):
            (out,) = run_single("contract_probe", {"x": np.ones(2, dtype)}, {"X": "x"},
                                {"Out": "o"}, fetch=["o"])
            assert out.dtype == dtype and out.tolist() == [want, want]


def test_2_register_kernel_numpy_dtype_names_and_places():
    with scratch():
        _register_probe({})
        opkit.register_kernel("contract_probe", place="CPU",
                              dtypes=("float16", "int32", "int64", "bool"))(lambda ctx: None)
        opkit.register_kernel("contract_probe", place=("CPU", "GPU"), dtypes="float64")(
            lambda ctx: None)
        keys = {k[:2] for k in opkit.registry.op_info("contract_probe").kernels}
    assert keys == {("float16", "CPU"), ("int32", "CPU"), ("int64", "CPU"), ("bool", "CPU"),
                    ("float64", "CPU"), ("float64", "GPU")}


def test_2_kernel_selection_by_layout_and_library():
    class Op(opkit.OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

        def get_expected_kernel_type(self, ctx):
            return opkit.OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place,
                                      "NCHW", "MYLIB")

    class Maker(opkit.OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("doc")

    with scratch():
        opkit.register_operator("contract_lib", Op, Maker)
        opkit.register_kernel("contract_lib")(lambda ctx: ctx.set_output("Out", ctx.input("X")
                                                                         * 0))
        opkit.register_kernel("contract_lib", layout="NCHW", library="MYLIB")(
            lambda ctx: ctx.set_output("Out", ctx.input("X") + 1))
        (out,) = run_single("contract_lib", {"x": np.zeros(2)}, {"X": "x"}, {"Out": "o"},
                            fetch=["o"])
        assert out.tolist() == [1.0, 1.0]
    assert_signature(opkit.OpKernelType.__init__,
                     lambda self, dtype, place, layout="ANY", library="PLAIN": 0)
    kt = opkit.OpKernelType("float32", opkit.CPUPlace())
    assert (kt.dtype, kt.place, kt.layout, kt.library) == ("float32", opkit.CPUPlace(), "ANY",
                                                           "PLAIN")


def test_2_registry_exposes_ops():
    from opkit import registry

    types = registry.all_op_types()
    assert "clip" in types and "clip_grad" in types and types == sorted(types)
    info = registry.op_info("clip")
    for attr in ("proto", "grad_maker", "inplace", "no_need_buffer", "kernels"):
        assert hasattr(info, attr), attr
    assert info.proto.input("X") is not None
    assert ("float32", "CPU", "ANY", "PLAIN") in info.kernels
    with pytest.raises(errors.NotFound):
        registry.op_info("no_such_op_contract")


def test_2_registration_records_declarations():
    with scratch():
        _register_probe({}, grad_maker=opkit.DefaultGradOpMaker, inplace={"X": "Out"},
                        no_need_buffer=["X"])
        info = opkit.registry.op_info("contract_probe")
        assert info.grad_maker is opkit.DefaultGradOpMaker
        assert info.inplace == {"X": "Out"} and list(info.no_need_buffer) == ["X"]


def test_2_default_grad_op_maker():
    record = {}

    class Grad(opkit.OperatorWithKernel):
        def infer_shape(self, ctx):
            record["inputs"] = {k: list(v) for k, v in self.inputs.items()}
            record["outputs"] = {k: list(v) for k, v in self.outputs.items()}
            record["attrs"] = dict(self.attrs)

    with scratch():
        _register_probe({}, grad_maker=opkit.DefaultGradOpMaker)
        opkit.register_operator("contract_probe_grad", Grad)
        prog = opkit.Program()
        block = prog.global_block()
        block.create_var(name="x", shape=[2, 3], dtype="float32")
        block.append_op("contract_probe", {"X": "x"}, {"Out": "out"}, {"k": 5.0})
        block.create_var(name="loss", shape=[1], dtype="float32")
        block.append_op("mean", {"X": "out"}, {"Out": "loss"})
        opkit.append_backward(block.var("loss"))
        types = [op.type for op in block.ops]
        assert "contract_probe_grad" in types
        G = opkit.grad_var_name
        assert G("X") == "X@GRAD"
        assert record["inputs"]["X"] == ["x"] and record["inputs"]["Out"] == ["out"]
        assert record["inputs"][G("Out")] == [G("out")]
        assert record["outputs"][G("X")] == [G("x")]
        assert record["attrs"]["k"] == 5.0


def test_2_no_grad_maker_means_no_gradient():
    with scratch():
        _register_probe({})
        assert opkit.registry.op_info("contract_probe").grad_maker is None


# -- ExecutionContext -------------------------------------------------------------------
def test_2_execution_context_calls():
    seen = {}

    def kernel(ctx):
        x = ctx.input("X")
        t = ctx.input_tensor("X")
        seen.update(
            x=x, writeable=x.flags.writeable, bias=ctx.input("Bias"),
            xs=ctx.inputs("Xs"), tensor=t, fields=(t.data, t.shape, t.dtype, t.lod, t.place),
            var=ctx.input_var("X"), has=(ctx.has_input("X"), ctx.has_input("Bias"),
                                         ctx.has_output("Out"), ctx.has_output("Outs")),
            attr=ctx.attr("k"), attrs=dict(ctx.attrs), place=ctx.place, dtype=ctx.dtype,
            xp=ctx.xp, device_context=ctx.device_context, op_type=ctx.op_type)
        with pytest.raises(ValueError):
            x[0, 0] = 99.0                                 # inputs are read-only
        out = ctx.output_tensor("Out")
        buf = out.mutable_data(x.shape, x.dtype)
        buf[...] = x * ctx.attr("k")
        out.set_lod([[0, 1, 3]])
        seen["out_tensor"] = out

    with scratch():
        _register_probe({}, kernel=kernel)
        x = np.arange(6, dtype="float32").reshape(3, 2)
        (out,) = run_single("contract_probe", {"x": (x, [[2, 1]]), "a": x[:1], "b": x[1:]},
                            {"X": "x", "Xs": ["a", "b"]}, {"Out": "o"},
                            fetch=["o"], return_numpy=False)
    np.testing.assert_array_equal(seen["x"], x)
    assert seen["writeable"] is False and seen["bias"] is None
    assert [a.tolist() for a in seen["xs"]] == [x[:1].tolist(), x[1:].tolist()]
    assert isinstance(seen["tensor"], opkit.LoDTensor)
    data, shape, dtype, lod, place = seen["fields"]
    assert shape == (3, 2) and dtype == np.float32 and lod == [[0, 2, 3]]
    assert place == opkit.CPUPlace()
    assert isinstance(seen["var"], opkit.Variable)
    assert seen["has"] == (True, False, True, False)
    assert seen["attr"] == 2.0 and seen["attrs"] == {"k": 2.0}        # default filled in
    assert seen["place"] == opkit.CPUPlace() and seen["dtype"] == np.float32
    assert seen["xp"] is np and seen["device_context"] is not None
    assert seen["op_type"] == "contract_probe"
    np.testing.assert_array_equal(out.numpy(), x * 2)
    assert out.lod == [[0, 1, 3]]                                  # set_lod on output_tensor


def test_2_execution_context_signatures():
    ctx = opkit.ExecutionContext
    assert_signature(ctx.set_output, lambda self, name, array, lod=None: None)
    for name in ("input", "inputs", "input_tensor", "input_var", "has_input", "has_output",
                 "output_tensor", "attr"):
        params = [p for p in inspect.signature(getattr(ctx, name)).parameters.values()]
        assert len([p for p in params if p.default is REQUIRED]) == 2, name   # self, name
    for name in ("attrs", "place", "dtype", "xp", "device_context", "op_type"):
        assert hasattr(ctx, name), name


def _lod_probe(relod):
    def kernel(ctx):
        if relod:
            ctx.set_output("Out", ctx.input("X") * 1, lod=[[0, 4, 5]])
        else:
            ctx.set_output("Out", ctx.input("X") * 1)
    return kernel


@pytest.mark.parametrize("relod, want", [(False, [[0, 2, 2, 5]]), (True, [[0, 4, 5]])])
def test_2_share_lod_then_set_output_keeps_or_replaces_lod(relod, want):
    with scratch():
        _register_probe({}, kernel=_lod_probe(relod))
        x = np.ones((5, 1), "float64")
        (out,) = run_single("contract_probe", {"x": (x, [[2, 0, 3]])}, {"X": "x"},
                            {"Out": "o"}, fetch=["o"], return_numpy=False)
    assert isinstance(out, opkit.LoDTensor) and out.lod == want


@pytest.mark.parametrize("enable", [True, False])
def test_2_inplace_mutable_data_reuses_the_input_buffer(enable):
    seen = {}

    def kernel(ctx):
        x = ctx.input_tensor("X").data
        buf = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)
        seen["shared"] = np.shares_memory(buf, x)
        buf[...] = 1.0

    with scratch():
        _register_probe({}, kernel=kernel, inplace={"X": "Out"})
        run_single("contract_probe", {"x": np.zeros((2, 2))}, {"X": "x"}, {"Out": "o"},
                   fetch=["o"], enable_inplace=enable)
    assert seen["shared"] is enable


# ============================================================================== 3. data

# (section 4 below checks that errors raised while an op runs name the op)


def test_3_lod_tensor():
    assert_signature(opkit.LoDTensor.__init__, lambda self, data=None, lod=None, place=None: 0)
    assert opkit.Tensor is opkit.LoDTensor
    t = opkit.LoDTensor(np.zeros((5, 2)), [[0, 2, 2, 5]])
    assert t.lod == [[0, 2, 2, 5]] and t.recursive_sequence_lengths() == [[2, 0, 3]]
    assert t.has_valid_recursive_sequence_lengths()
    t.set_recursive_sequence_lengths([[1, 4]])
    assert t.lod == [[0, 1, 5]]
    t.set_lod([[0, 5]])
    assert t.recursive_sequence_lengths() == [[5]]
    assert t.shape == (5, 2) and t.dtype == np.float64 and t.place == opkit.CPUPlace()
    assert isinstance(t.data, np.ndarray)
    with pytest.raises(errors.EnforceNotMet):
        t.set_lod([[0, 2, 4]])                       # the last offset must be the row count
    empty = opkit.LoDTensor()
    assert empty.lod == []


def test_3_selected_rows_and_tensor_array():
    assert_signature(opkit.SelectedRows.__init__, lambda self, rows=None, height=0, value=None:
                     0)
    sr = opkit.SelectedRows([0, 3], 10, np.ones((2, 4)))
    assert tuple(sr.get_complete_dims()) == (10, 4)
    sr2 = opkit.SelectedRows(rows=[1], height=5, value=opkit.LoDTensor(np.ones((1, 2))))
    assert tuple(sr2.get_complete_dims()) == (5, 2)
    arr = opkit.LoDTensorArray()
    assert isinstance(arr, list)
    arr.append(opkit.LoDTensor(np.ones(2)))
    assert len(arr) == 1


def test_3_variable_and_scope():
    parent = opkit.Scope()
    v = parent.var("w")
    assert isinstance(v, opkit.Variable) and parent.var("w") is v
    v.get_tensor().set(np.ones(2))
    kid = parent.new_scope()
    assert kid.find_var("w") is v                    # falls through to the parent
    assert kid.find_var("nothing") is None
    kv = kid.var("k")
    assert parent.find_var("k") is None and kid.find_var("k") is kv
    parent.drop_kids()
    for value in (opkit.LoDTensor(np.ones(1)), opkit.SelectedRows([0], 1, np.ones((1, 1))),
                  opkit.LoDTensorArray()):
        var = opkit.Variable("x")
        var.set_value(value)
        assert var.value() is value


def test_3_places():
    assert opkit.CPUPlace() == opkit.CPUPlace()
    assert_signature(opkit.CUDAPlace.__init__, lambda self, device_id=0: 0)
    assert opkit.CUDAPlace().device_id == 0 and opkit.CUDAPlace(1).device_id == 1
    assert opkit.CUDAPlace(0) != opkit.CPUPlace()


# ============================================================================ 4. errors

ERROR_CLASSES = ("InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists",
                 "ResourceExhausted", "PreconditionNotMet", "PermissionDenied",
                 "ExecutionTimeout", "Unimplemented", "Unavailable", "Fatal", "External")
ENFORCE = ("enforce_eq", "enforce_ne", "enforce_lt", "enforce_le", "enforce_gt", "enforce_ge")


@pytest.mark.parametrize("name", ERROR_CLASSES)
def test_4_error_classes(name):
    cls = getattr(errors, name)
    assert issubclass(cls, opkit.EnforceNotMet)
    err = cls("bad value %d", 3)
    assert "bad value 3" in str(err)
    with pytest.raises(Exception):
        cls("")
    with pytest.raises(Exception):
        cls("   ")
    assert opkit.errors.EnforceNotMet is opkit.EnforceNotMet


def test_4_enforce_signatures():
    assert_signature(opkit.enforce, lambda cond, msg, *args: None)
    for name in ENFORCE:
        assert_signature(getattr(opkit, name), lambda a, b, msg, *args: None)
    assert_signature(opkit.enforce_not_none, lambda x, msg, *args: None)


@pytest.mark.parametrize("name, a, b", [("enforce_eq", 1, 2), ("enforce_ne", 1, 1),
                                        ("enforce_lt", 2, 1), ("enforce_le", 2, 1),
                                        ("enforce_gt", 1, 2), ("enforce_ge", 1, 2)])
def test_4_enforce_compare(name, a, b):
    fn = getattr(opkit, name)
    with pytest.raises(opkit.EnforceNotMet, match="value 7"):
        fn(a, b, "value %d", 7)
    with pytest.raises(errors.OutOfRange, match="typed"):
        fn(a, b, errors.OutOfRange("typed %s", "msg"))
    fn(b if name in ("enforce_eq",) else a, b if name == "enforce_eq" else a, "ok") \
        if name in ("enforce_eq", "enforce_le", "enforce_ge") else None


def test_4_enforce_and_not_none():
    opkit.enforce(True, "fine")
    opkit.enforce_not_none(0, "fine")
    with pytest.raises(opkit.EnforceNotMet, match="cond 1"):
        opkit.enforce(False, "cond %d", 1)
    with pytest.raises(errors.NotFound, match="nothing"):
        opkit.enforce_not_none(None, errors.NotFound("nothing"))
    with pytest.raises(opkit.EnforceNotMet):
        opkit.enforce_not_none(None, "none")


@pytest.mark.parametrize("msg", ["", "  "])
def test_4_empty_message_is_refused_at_run_time(msg):
    with pytest.raises(Exception) as info:
        opkit.enforce(False, msg)
    assert not isinstance(info.value, opkit.EnforceNotMet) or str(info.value).strip()
    with pytest.raises(Exception):
        opkit.enforce(True, msg)                     # even when the check passes
    with pytest.raises(Exception):
        opkit.enforce_eq(1, 1, msg)


def test_4_errors_while_an_op_runs_name_the_op_and_variable():
    def kernel(ctx):
        raise errors.OutOfRange("kernel said no")

    with scratch():
        _register_probe({}, kernel=kernel)
        with pytest.raises(errors.OutOfRange) as info:
            run_single("contract_probe", {"x": np.ones(2)}, {"X": "x"}, {"Out": "o"})
        assert "contract_probe" in str(info.value) and "kernel said no" in str(info.value)

    with scratch():
        _register_probe({}, kernel=lambda ctx: ctx.set_output("Out", ctx.input("X")))
        prog = opkit.Program()
        block = prog.global_block()
        block.create_var(name="never_fed", shape=[2], dtype="float32")
        block.append_op("contract_probe", {"X": "never_fed"}, {"Out": "o"})
        with pytest.raises(opkit.EnforceNotMet) as info:
            opkit.Executor().run(prog, scope=opkit.Scope())
        assert "contract_probe" in str(info.value) and "never_fed" in str(info.value)


def test_4_foreign_errors_while_an_op_runs_become_external_naming_the_op():
    def kernel(ctx):
        return 1 // 0

    with scratch():
        _register_probe({}, kernel=kernel)
        with pytest.raises(errors.External) as info:
            run_single("contract_probe", {"x": np.ones(2)}, {"X": "x"}, {"Out": "o"})
    assert "contract_probe" in str(info.value) and "ZeroDivisionError" in str(info.value)


# ========================================================================== 5. programs

def test_5_program_api_signatures():
    def create_var(self, name=None, shape=None, dtype="float32", lod_level=0,
                   persistable=False, stop_gradient=False): ...

    def append_op(self, type, inputs=None, outputs=None, attrs=None): ...

    def append_backward(loss, parameter_list=None, no_grad_set=None): ...

    def run(self, program=None, feed=None, fetch_list=None, scope=None, return_numpy=True): ...

    assert_signature(opkit.Block.create_var, create_var)
    assert_signature(opkit.Block.append_op, append_op)
    assert_signature(opkit.append_backward, append_backward)
    assert_signature(opkit.Executor.run, run)
    assert callable(opkit.Program.from_json)


def test_5_example_program_trains():
    rng = np.random.default_rng(0)
    xs = rng.normal(size=(32, 13)).astype("float32")
    ys = (xs @ rng.normal(size=(13, 1))).astype("float32")
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[13], dtype="float32")
        y = opkit.layers.data("y", shape=[1], dtype="float32")
        pred = opkit.layers.fc(x, size=1)
        loss = opkit.layers.mean(opkit.layers.square_error_cost(pred, y))
        opkit.optimizer.SGD(learning_rate=0.01).minimize(loss)
    exe = opkit.Executor(opkit.CPUPlace())
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    losses = [exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss], scope=scope)[0]
              for _ in range(20)]
    assert isinstance(losses[0], np.ndarray)
    assert losses[-1].item() < losses[0].item()
    (by_name,) = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss.name], scope=scope)
    assert by_name.shape == losses[0].shape


def test_5_blocks_vars_and_json_roundtrip():
    prog = opkit.Program()
    assert prog.global_block() is prog.current_block()
    block = prog.global_block()
    v = block.create_var(name="x", shape=[-1, 4], dtype="float64", lod_level=1)
    assert (v.name, list(v.shape), v.dtype, v.lod_level) == ("x", [-1, 4], "float64", 1)
    auto = block.create_var(shape=[1])
    assert auto.name and auto.dtype == "float32" and auto.lod_level == 0
    op = block.append_op("scale", inputs={"X": v}, outputs={"Out": "y"}, attrs={"scale": 3.0})
    assert op is not None
    assert list(block.var("y").shape) == [-1, 4]                # compile-time infer_shape
    block.append_op("sum", inputs={"X": [v, "y"]}, outputs={"Out": ["z"]})
    text = prog.to_json()
    again = opkit.Program.from_json(text)
    assert isinstance(again, opkit.Program) and again.to_json() == text
    x = np.ones((2, 4))
    (z,) = opkit.Executor().run(again, feed={"x": (x, [[1, 1]])}, fetch_list=["z"],
                                scope=opkit.Scope())
    np.testing.assert_allclose(z, 4 * x)


def test_5_append_backward_returns_param_grad_pairs():
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[3], dtype="float32")
        loss = opkit.layers.mean(opkit.layers.fc(x, size=2))
        pairs = opkit.append_backward(loss)
    assert pairs and all(g.name == opkit.grad_var_name(p.name) for p, g in pairs)
    params = {p.name for p, _ in pairs}
    main2, startup2 = opkit.Program(), opkit.Program()
    with opkit.program_guard(main2, startup2):
        x = opkit.layers.data("x", shape=[3], dtype="float32")
        loss = opkit.layers.mean(opkit.layers.fc(x, size=2))
        first = main2.all_parameters()[0]
        only = opkit.append_backward(loss, parameter_list=[first.name])
    assert [p.name for p, _ in only] == [first.name] and params
    main3, startup3 = opkit.Program(), opkit.Program()
    with opkit.program_guard(main3, startup3):
        x = opkit.layers.data("x", shape=[3], dtype="float32")
        loss = opkit.layers.mean(opkit.layers.fc(x, size=2))
        frozen = main3.all_parameters()[0].name
        rest = opkit.append_backward(loss, no_grad_set={frozen})
    assert frozen not in {p.name for p, _ in rest} and rest


def test_5_executor_feed_fetch_forms():
    prog = opkit.Program()
    block = prog.global_block()
    x = block.create_var(name="x", shape=[-1, 1], dtype="float64", lod_level=1)
    y = block.create_var(name="y", shape=[-1, 1], dtype="float64", lod_level=1)
    block.append_op("scale", {"X": x}, {"Out": y}, {"scale": 2.0})
    exe = opkit.Executor(opkit.CPUPlace())
    data = np.arange(5, dtype="float64").reshape(5, 1)
    by_var, by_name = exe.run(prog, feed={"x": (data, [[2, 0, 3]])}, fetch_list=[y, "y"],
                              scope=opkit.Scope())
    assert isinstance(by_var, np.ndarray) and np.array_equal(by_var, by_name)
    (t,) = exe.run(program=prog, feed={"x": (data, [[2, 0, 3]])}, fetch_list=[y],
                   scope=opkit.Scope(), return_numpy=False)
    assert isinstance(t, opkit.LoDTensor)
    assert t.lod == [[0, 2, 2, 5]] and t.recursive_sequence_lengths() == [[2, 0, 3]]
    np.testing.assert_array_equal(t.numpy(), 2 * data)
    plain_prog = opkit.Program()
    block = plain_prog.global_block()
    block.create_var(name="x", shape=[-1, 1], dtype="float64")
    block.append_op("scale", {"X": "x"}, {"Out": "y"}, {"scale": 2.0})
    (plain,) = exe.run(plain_prog, feed={"x": data}, fetch_list=["y"], scope=opkit.Scope())
    np.testing.assert_array_equal(plain, 2 * data)


def test_5_executor_runs_the_default_main_program():
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        block = main.global_block()
        block.create_var(name="x", shape=[2], dtype="float64")
        block.append_op("scale", {"X": "x"}, {"Out": "y"}, {"scale": 3.0})
        (y,) = opkit.Executor(opkit.CPUPlace()).run(feed={"x": np.ones(2)}, fetch_list=["y"],
                                                    scope=opkit.Scope())
    assert y.tolist() == [3.0, 3.0]


def test_5_executor_keeps_persistables_in_the_given_scope():
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[3], dtype="float32")
        opkit.layers.fc(x, size=2)
    scope = opkit.Scope()
    opkit.Executor().run(startup, scope=scope)
    for p in main.all_parameters():
        assert scope.find_var(p.name) is not None and scope.find_var(p.name).is_initialized()


# ====================================================================== 6. testing an op

def test_6_optest_signatures():
    from harness import OpTest

    def check_output(self, atol=None, rtol=None, no_check_set=None, equal_nan=False): ...

    def check_grad(self, inputs_to_check, output_names, no_grad_set=None,
                   max_relative_error=0.005, numeric_grad_delta=0.005,
                   user_defined_grads=None): ...

    import unittest

    assert issubclass(OpTest, unittest.TestCase)
    assert_signature(OpTest.check_output, check_output)
    assert_signature(OpTest.check_grad, check_grad)


def _optest(setup, **methods):
    from harness import OpTest

    cls = type("TestContract", (OpTest,), {"setUp": setup, "runTest": lambda self: None,
                                           **methods})
    test = cls()
    test.setUp()
    return test


def _clip_setup(self, lengths=None, expected=None):
    self.op_type = "clip"
    x = np.random.RandomState(1).uniform(-1, 1, (5, 3)).astype("float64")
    x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.0
    out = np.clip(x, -0.5, 0.5) if expected is None else expected
    self.inputs = {"X": x if lengths is None else (x, lengths)}
    self.attrs = {"min": -0.5, "max": 0.5}
    self.outputs = {"Out": out if lengths is None else (out, lengths)}


def test_6_check_output_and_grad_pass():
    test = _optest(_clip_setup)
    test.check_output()
    test.check_output(atol=1e-6, rtol=1e-6, no_check_set=None, equal_nan=False)
    test.check_grad(["X"], "Out")
    test.check_grad(["X"], ["Out"], no_grad_set=None, max_relative_error=0.005,
                    numeric_grad_delta=0.005, user_defined_grads=None)


def test_6_check_output_fails_on_wrong_output_and_honours_options():
    test = _optest(lambda self: _clip_setup(self, expected=np.zeros((5, 3))))
    with pytest.raises(AssertionError):
        test.check_output()
    test.check_output(no_check_set=["Out"])
    test.check_output(atol=10.0)


def test_6_check_output_equal_nan():
    def setup(self):
        self.op_type = "scale"
        x = np.array([[1.0, np.nan]])
        self.inputs = {"X": x}
        self.attrs = {"scale": 2.0}
        self.outputs = {"Out": 2 * x}

    test = _optest(setup)
    test.check_output(equal_nan=True)
    with pytest.raises(AssertionError):
        test.check_output(equal_nan=False)


def test_6_check_grad_user_defined_grads():
    test = _optest(_clip_setup)
    x = test.inputs["X"]
    right = ((x > -0.5) & (x < 0.5)).astype("float64") / x.size   # d mean(Out) / dX
    test.check_grad(["X"], "Out", user_defined_grads=[right])
    with pytest.raises(AssertionError):
        test.check_grad(["X"], "Out", user_defined_grads=[right * 3 + 1])


def test_6_lod_inputs_and_outputs():
    test = _optest(lambda self: _clip_setup(self, lengths=[[2, 0, 3]]))
    test.check_output()
    test.check_grad(["X"], "Out")
    wrong = _optest(lambda self: (_clip_setup(self, lengths=[[2, 0, 3]]),
                                  self.outputs.update(Out=(self.outputs["Out"][0],
                                                           [[1, 1, 3]]))))
    with pytest.raises(AssertionError):
        wrong.check_output()                        # the output LoD is checked too


def test_6_duplicable_inputs():
    def setup(self):
        self.op_type = "sum"
        a0 = np.random.RandomState(0).rand(2, 3)
        a1 = np.random.RandomState(1).rand(2, 3)
        self.inputs = {"X": [("x0", a0), ("x1", a1)]}
        self.outputs = {"Out": a0 + a1}

    test = _optest(setup)
    test.check_output()
    test.check_grad(["x0", "x1"], "Out")


def test_6_check_grad_no_grad_set():
    def setup(self):
        self.op_type = "elementwise_add"
        rng = np.random.RandomState(3)
        x, y = rng.rand(3, 4), rng.rand(3, 4)
        self.inputs = {"X": x, "Y": y}
        self.outputs = {"Out": x + y}

    test = _optest(setup)
    test.check_grad(["X"], "Out", no_grad_set={"Y"})
    test.check_grad(["X", "Y"], "Out")


PLAIN_PYTEST_FILE = '''
import numpy as np
from harness import OpTest

class TestClipOp(OpTest):
    def setUp(self):
        self.op_type = "clip"
        x = np.random.uniform(-1, 1, (4, 5)).astype("float64")
        x[np.abs(np.abs(x) - 0.5) < 0.02] = 0.0
        self.inputs = {"X": x}
        self.attrs = {"min": -0.5, "max": 0.5}
        self.outputs = {"Out": np.clip(x, -0.5, 0.5)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")

class TestClipOpWrong(TestClipOp):
    def setUp(self):
        super().setUp()
        self.outputs = {"Out": self.outputs["Out"] + 1}

    def test_check_grad(self):
        pass
'''


def test_6_plain_pytest_collects_optest(tmp_path):
    (tmp_path / "test_plain_clip.py").write_text(PLAIN_PYTEST_FILE)
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", "test_plain_clip.py"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120)
    assert "1 failed, 3 passed" in p.stdout, p.stdout[-3000:]


# ====================================================================== 7. command line

COMMANDS = ("lint", "test", "dump", "compat", "ops")


def test_7_commands_and_formats():
    from opkit.cli.main import COMMANDS as registered

    assert set(COMMANDS) <= set(registered)
    import argparse
    import importlib

    for name in COMMANDS:
        parser = argparse.ArgumentParser()
        importlib.import_module(f"opkit.cli.{name}").add_arguments(parser)
        fmt = next(a for a in parser._actions if "--format" in a.option_strings)
        want = {"text", "json", "sarif", "github"} if name == "lint" else {"text", "json"}
        assert want <= set(fmt.choices), (name, fmt.choices)
        if name in ("test", "dump", "ops"):
            ops = next(a for a in parser._actions if "--ops" in a.option_strings)
            assert isinstance(ops, argparse._AppendAction), name
        if name == "test":
            assert any("--tests" in a.option_strings for a in parser._actions)
            assert any("--all" in a.option_strings for a in parser._actions)
            assert any("--fuzz" in a.option_strings for a in parser._actions)
        if name == "dump":
            assert any("-o" in a.option_strings for a in parser._actions)


def test_7_unknown_command_and_bad_format_exit_2():
    assert run_opkit("no-such-command").returncode == 2
    for name, args in (("ops", ()), ("dump", ()), ("compat", ("a.json", "b.json")),
                       ("test", ("clip",)), ("lint", ("x.py",))):
        assert run_opkit(name, *args, "--format", "xml").returncode == 2, name


LINT_FILE = '''
from opkit import enforce, errors

def check(x):
    enforce(x, "")
    enforce(x, "")  # opkit: ignore[OPK002]
    raise errors.InvalidArgument("")
'''


def test_7_lint_exit_codes_formats_and_ignore(tmp_path):
    (tmp_path / "bad.py").write_text(LINT_FILE)
    (tmp_path / "good.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    lint = ("lint", "--no-cache")
    assert run_opkit(*lint, "good.py", cwd=tmp_path).returncode == 0
    assert run_opkit(*lint, "missing_file.py", cwd=tmp_path).returncode == 2
    p = run_opkit(*lint, "--format", "json", "bad.py", "broken.py", cwd=tmp_path)
    assert p.returncode == 1
    findings = json_stdout(p)
    assert isinstance(findings, list)
    for f in findings:
        assert {"path", "line", "col", "rule", "name", "message"} <= set(f)
    got = sorted((f["path"], f["line"], f["rule"], f["name"]) for f in findings)
    assert got == [("bad.py", 5, "OPK002", "empty-enforce-message"),
                   ("bad.py", 7, "OPK002", "empty-enforce-message"),
                   ("broken.py", 1, "OPK000", "syntax-error")]
    p = run_opkit(*lint, "--format", "text", "bad.py", cwd=tmp_path)
    assert p.returncode == 1 and "OPK002" in p.stdout
    p = run_opkit(*lint, "--format", "sarif", "bad.py", cwd=tmp_path)
    assert p.returncode == 1 and json_stdout(p)["version"] == "2.1.0"
    p = run_opkit(*lint, "--format", "github", "bad.py", cwd=tmp_path)
    assert p.returncode == 1 and p.stdout.startswith("::error ")
    p = run_opkit(*lint, "--format", "json", tmp_path / "good.py", cwd=tmp_path)
    assert p.returncode == 0 and json_stdout(p) == []


def test_7_lint_without_paths_checks_the_current_folder(tmp_path):
    (tmp_path / "bad.py").write_text(LINT_FILE)
    p = run_opkit("lint", "--no-cache", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1 and {f["path"] for f in json_stdout(p)} == {"bad.py"}


def test_7_lint_takes_folders(tmp_path):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "bad.py").write_text(LINT_FILE)
    p = run_opkit("lint", "--no-cache", "--format", "json", "pkg", cwd=tmp_path)
    assert p.returncode == 1 and {f["rule"] for f in json_stdout(p)} == {"OPK002"}


def test_7_ops_command_with_repeatable_ops_option(tmp_path):
    op_file, _ = write_clip_project(tmp_path)
    other = tmp_path / "ops" / "contract_other_op.py"
    other.write_text(CLIP_OP_SOURCE.replace("contract_clip", "contract_other"))
    p = run_opkit("ops", "--ops", op_file, "--ops", other, "--format", "json", cwd=tmp_path)
    assert p.returncode == 0
    rows = {r["op"]: r for r in json_stdout(p)}
    assert {"clip", "contract_clip", "contract_other"} <= set(rows)
    p = run_opkit("ops", "--ops", op_file, "--format", "text", cwd=tmp_path)
    assert p.returncode == 0 and "contract_clip" in p.stdout
    assert run_opkit("ops", "--ops", tmp_path / "nope_op.py").returncode == 2


def test_7_ops_module_names_resolve_from_the_project_folder(tmp_path):
    """`--ops pkg.module` and `[tool.opkit] ops = ["pkg.module"]` import from the project
    folder, also through the `opkit` console script (whose sys.path lacks the cwd)."""
    op_file, _ = write_clip_project(tmp_path)
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "mypkg" / "contract_clip_op.py").write_text(op_file.read_text())
    script = Path(sys.executable).parent / "opkit"
    if not script.exists():
        pytest.skip("the opkit console script is not installed next to this Python")
    env = dict(os.environ, NO_COLOR="1")
    env.pop("PYTHONPATH", None)
    p = subprocess.run([str(script), "ops", "--ops", "mypkg.contract_clip_op", "--format",
                        "json"], cwd=tmp_path, capture_output=True, text=True, env=env,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert "contract_clip" in {r["op"] for r in json_stdout(p)}
    (tmp_path / "pyproject.toml").write_text('[tool.opkit]\nops = ["mypkg.contract_clip_op"]\n')
    (tmp_path / "sub").mkdir()
    p = subprocess.run([str(script), "ops", "--format", "json"], cwd=tmp_path / "sub",
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "contract_clip" in {r["op"] for r in json_stdout(p)}


def test_7_pyproject_tool_opkit_ops_and_tests(tmp_path):
    write_clip_project(tmp_path, pyproject=True)
    p = run_opkit("ops", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0 and "contract_clip" in {r["op"] for r in json_stdout(p)}
    p = run_opkit("test", "--checks", "output", "--format", "text", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "contract_clip" in p.stdout


def test_7_dump_exit_codes(tmp_path):
    out = tmp_path / "ops.json"
    p = run_opkit("dump", "-o", out)
    assert p.returncode == 0 and "clip" in json.loads(out.read_text())
    assert run_opkit("dump", "-o", tmp_path / "no" / "such" / "dir.json").returncode == 2
    p = run_opkit("dump", "--format", "text")
    assert p.returncode == 0 and "clip" in json.loads(p.stdout)


def test_7_compat_exit_codes(tmp_path):
    same = {"op": {"Inputs": {}, "Outputs": {}, "Attrs": {}}}
    (tmp_path / "a.json").write_text(json.dumps(same))
    (tmp_path / "b.json").write_text(json.dumps({}))
    (tmp_path / "bad.json").write_text("{not json")
    assert run_opkit("compat", "a.json", "a.json", cwd=tmp_path).returncode == 0
    p = run_opkit("compat", "a.json", "b.json", cwd=tmp_path)
    assert p.returncode == 1 and "op-deleted" in p.stdout
    assert run_opkit("compat", "a.json", "bad.json", cwd=tmp_path).returncode == 2
    assert run_opkit("compat", "a.json", "missing.json", cwd=tmp_path).returncode == 2
    assert run_opkit("compat", "a.json", cwd=tmp_path).returncode == 2


def test_7_test_command_exit_codes(tmp_path):
    op_file, tests = write_clip_project(tmp_path)
    base = ("test", "--ops", op_file, "--tests", tests)
    assert run_opkit(*base, "no_such_op_contract", cwd=tmp_path).returncode == 2
    assert run_opkit("test", cwd=tmp_path).returncode == 2            # nothing to test
    assert run_opkit(*base, "contract_clip", "--checks", "nope", cwd=tmp_path).returncode == 2
    broken = tmp_path / "broken"
    broken.mkdir()
    op_file, tests = write_clip_project(broken, broken_grad=True)
    p = run_opkit("test", "--ops", op_file, "--tests", tests, "contract_clip",
                  "--checks", "output,grad", "--format", "json", cwd=broken)
    assert p.returncode == 1
    (op,) = json_stdout(p)["ops"]
    assert op["op"] == "contract_clip" and op["status"] == "fail"
    assert {c["check"] for c in op["checks"] if c["status"] == "fail"} == {"grad"}


def test_7_test_all_covers_every_forward_op(tmp_path):
    p = run_opkit("test", "--all", "--checks", "dtypes", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    ops = {r["op"]: r for r in json_stdout(p)["ops"]}
    from opkit.registry import all_op_types

    forward = {t for t in all_op_types() if not t.endswith("_grad")}
    assert set(ops) == forward
    assert all(r["status"] in ("pass", "skip") for r in ops.values())


# The bad op file of tests/lint_fixtures, self-contained: every rule OPK001-OPK008 once.
EVERY_RULE_FILE = '''
import numpy as np
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator, enforce


class ReluOpMaker(OpMaker):
    def make(self):
        self.add_input("x", "(Tensor) input")  # OPK007
        self.add_output("Out", "(Tensor) output")
                                                # OPK008: no add_comment


class ReluOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "")  # OPK002

    def get_expected_kernel_type(self, ctx):
        return ctx.input("X").dtype  # OPK005


register_operator("relu", ReluOp, ReluOpMaker)
register_operator("gelu", ReluOp)  # OPK006


@register_kernel("relu", dtypes="float32")  # OPK003
def relu_kernel(ctx):
    x = ctx.input("X")
    x[x < 0] = 0  # OPK001
    ctx.set_output("Out", x)  # OPK004
'''


def test_7_lint_every_rule_fires(tmp_path):
    (tmp_path / "relu_op.py").write_text(EVERY_RULE_FILE)
    (tmp_path / "syntax_op.py").write_text("class (:\n")
    p = run_opkit("lint", "--no-cache", "--format", "json", ".", cwd=tmp_path)
    assert p.returncode == 1
    findings = json_stdout(p)
    got = {(f["rule"], f["name"]) for f in findings}
    assert got == set(RULES.items()), got ^ set(RULES.items())
    lines = EVERY_RULE_FILE.splitlines()
    for f in findings:
        if f["rule"] not in ("OPK000", "OPK008"):
            assert f["rule"] in lines[f["line"] - 1], f
    ignored = EVERY_RULE_FILE.replace("x[x < 0] = 0  # OPK001",
                                      "x[x < 0] = 0  # opkit: ignore[OPK001]")
    (tmp_path / "relu_op.py").write_text(ignored)
    (tmp_path / "syntax_op.py").unlink()
    p = run_opkit("lint", "--no-cache", "--format", "json", "relu_op.py", cwd=tmp_path)
    assert "OPK001" not in {f["rule"] for f in json_stdout(p)} and p.returncode == 1


# ============================================================= 8. op description JSON

ALL_ATTRS_OP = '''
from opkit import OpMaker, OperatorWithKernel, register_operator, register_kernel

TYPES = %r

class Maker(OpMaker):
    def make(self):
        self.add_input("X", "x")
        self.add_input("Y", "y").as_dispensable().as_duplicable()
        self.add_output("Out", "out").as_intermediate()
        self.add_output("XShape", "shape").as_extra()
        for name in TYPES:
            self.add_attr("req_" + name, name, "required")
        self.add_attr("with_default", "float", "has one", default=0.5)
        self.add_attr("flag", bool, "has one", default=True)
        self.add_comment("every attr type")

class Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

register_operator("contract_all_attrs", Op, Maker)

@register_kernel("contract_all_attrs")
def kernel(ctx):
    ctx.set_output("Out", ctx.input("X"))
''' % (sorted(ATTR_TYPES),)


def test_8_dump_format(tmp_path):
    op_file = tmp_path / "contract_all_attrs_op.py"
    op_file.write_text(ALL_ATTRS_OP)
    p = run_opkit("dump", "--ops", op_file, "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    descs = json_stdout(p)
    assert descs["clip"]["Attrs"]["min"]["type"] == 1
    desc = descs["contract_all_attrs"]
    assert set(desc) >= {"Inputs", "Outputs", "Attrs"}
    var_keys = {"duplicable", "dispensable", "intermediate", "extra", "quant"}
    for section in ("Inputs", "Outputs"):
        for flags in desc[section].values():
            assert var_keys <= set(flags) and all(isinstance(v, bool) for v in flags.values())
    assert desc["Inputs"]["X"] == dict.fromkeys(var_keys, False)
    assert desc["Inputs"]["Y"]["dispensable"] and desc["Inputs"]["Y"]["duplicable"]
    assert desc["Outputs"]["Out"]["intermediate"] and desc["Outputs"]["XShape"]["extra"]
    for name, type_id in ATTR_TYPES.items():
        attr = desc["Attrs"]["req_" + name]
        assert {"type", "generated", "default_value", "extra", "quant"} <= set(attr)
        assert attr["type"] == type_id and attr["default_value"] is None, name
    assert desc["Attrs"]["with_default"]["default_value"] == 0.5
    assert desc["Attrs"]["flag"] == {"type": 6, "generated": False, "default_value": True,
                                     "extra": False, "quant": False}


def test_8_compat_reads_paddle_format_and_ignores_unknown_keys(tmp_path):
    old = {"clip": {"Inputs": {"X": {"duplicable": False, "dispensable": False,
                                     "intermediate": False, "extra": False, "quant": False}},
                    "Outputs": {"Out": {"duplicable": False, "dispensable": False,
                                        "intermediate": False, "extra": False,
                                        "quant": False}},
                    "Attrs": {"min": {"type": 1, "generated": False, "default_value": None,
                                      "extra": False, "quant": False}},
                    "comment": "an unknown key"}}
    new = json.loads(json.dumps(old))
    new["clip"]["Attrs"]["min"]["some_future_key"] = 1
    new["clip"]["Inputs"]["X"]["another"] = "x"
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    p = run_opkit("compat", "old.json", "new.json", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0 and json_stdout(p)["breaking"] == []


# ====================================================== 9. machine-readable output

RULES = {"OPK000": "syntax-error", "OPK001": "input-mutation",
         "OPK002": "empty-enforce-message", "OPK003": "missing-float-double-kernel",
         "OPK004": "output-shares-input", "OPK005": "unchecked-kernel-dtype",
         "OPK006": "op-file-layout", "OPK007": "slot-naming", "OPK008": "missing-op-comment"}
CHECKS = ("output", "grad", "dtypes", "mutation", "aliasing", "determinism", "lod",
          "no_need_buffer", "inplace", "places", "fuzz",
          # the input variants (harness issue 11)
          "layout", "empty", "extremal", "kinks", "repeated_input", "infer_shape")


def test_9_rule_codes_and_names():
    from checkers.lint.catalog import RULES as catalog

    assert {code: name for code, (name, _) in catalog.items()} == RULES


def test_9_check_names():
    from harness.checks.registry import check_names

    assert set(CHECKS) - {"fuzz"} <= set(check_names())


def test_9_test_json(tmp_path):
    op_file, tests = write_clip_project(tmp_path)
    p = run_opkit("test", "--ops", op_file, "--tests", tests, "contract_clip", "--fuzz", "2",
                  "--format", "json", cwd=tmp_path, timeout=300)
    doc = json_stdout(p)
    assert p.returncode == 0, json.dumps(doc, indent=1)[:4000]
    assert list(doc["ops"][0])[:3] == ["op", "status", "checks"] and len(doc["ops"]) == 1
    op = doc["ops"][0]
    assert op["op"] == "contract_clip" and op["status"] == "pass"
    names = set()
    for c in op["checks"]:
        assert {"check", "status", "place", "dtype", "case", "message"} <= set(c)
        assert c["status"] in ("pass", "fail", "skip")
        names.add(c["check"])
    assert names <= set(CHECKS), names - set(CHECKS)
    assert {"output", "grad", "dtypes", "mutation", "aliasing", "determinism", "lod",
            "places", "fuzz"} <= names
    assert any(c["case"] == "TestContractClipOp" for c in op["checks"])
    assert any(c["check"] == "lod" and c["status"] == "pass" for c in op["checks"])
    if not opkit.cuda_device_count():
        places = [c for c in op["checks"] if c["check"] == "places"]
        assert places and all(c["status"] == "skip" and c["message"] for c in places)


def test_9_compat_json(tmp_path):
    var = {"duplicable": False, "dispensable": False, "intermediate": False, "extra": False,
           "quant": False}

    def attr(type_id, default):
        return {"type": type_id, "generated": False, "default_value": default, "extra": False,
                "quant": False}

    old = {"gone": {"Inputs": {}, "Outputs": {}, "Attrs": {}},
           "fc": {"Inputs": {"X": var, "W": var}, "Outputs": {"Out": var, "Tmp": var},
                  "Attrs": {"use_mkldnn": attr(6, False), "axis": attr(0, 1),
                            "scale": attr(1, 1.0), "flagged": attr(6, False)}}}
    new = {"fc": {"Inputs": {"X": {**var, "duplicable": True}, "Bias": var,
                             "Opt": {**var, "dispensable": True}},
                  "Outputs": {"Out": {**var, "intermediate": True}, "Extra": var,
                              "OptOut": {**var, "dispensable": True}},
                  "Attrs": {"axis": attr(0, 2), "scale": attr(4, [1.0]),
                            "flagged": {**attr(6, False), "extra": True},
                            "new_req": attr(0, None), "new_opt": attr(0, 3)}},
           "born": {"Inputs": {}, "Outputs": {}, "Attrs": {}}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    p = run_opkit("compat", "old.json", "new.json", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1
    doc = json_stdout(p)
    assert set(doc) >= {"breaking", "notes"}
    for e in doc["breaking"]:
        assert {"op", "kind", "name", "old", "new", "message"} <= set(e), e
    for e in doc["notes"]:
        assert {"op", "kind", "name", "message"} <= set(e), e
    breaking = {(e["op"], e["kind"], e["name"]) for e in doc["breaking"]}
    assert {("gone", "op-deleted", "gone"), ("fc", "input-deleted", "W"),
            ("fc", "output-deleted", "Tmp"), ("fc", "attr-deleted", "use_mkldnn"),
            ("fc", "input-added-required", "Bias"), ("fc", "output-added-required", "Extra"),
            ("fc", "attr-added-no-default", "new_req"), ("fc", "attr-type-changed", "scale"),
            ("fc", "attr-default-changed", "axis"), ("fc", "input-flag-changed", "X"),
            ("fc", "output-flag-changed", "Out")} <= {
                (op, kind, name if op != "gone" else "gone") for op, kind, name in breaking}
    fields = {(e["kind"], e["name"]): e.get("field") for e in doc["breaking"]
              if e["kind"].endswith("-flag-changed")}
    assert fields[("input-flag-changed", "X")] == "duplicable"
    assert fields[("output-flag-changed", "Out")] == "intermediate"
    gone = next(e for e in doc["breaking"] if e["kind"] == "attr-deleted")
    assert gone["new"] is None and gone["old"]["type"] == 6
    notes = {(e["op"], e["kind"], e["name"]) for e in doc["notes"]}
    assert {("fc", "input-added", "Opt"), ("fc", "output-added", "OptOut"),
            ("fc", "attr-added", "new_opt")} <= notes
    assert any(kind == "op-added" and op == "born" for op, kind, _ in notes)
    all_kinds = {e["kind"] for e in doc["breaking"]} | {e["kind"] for e in doc["notes"]}
    assert "attr-flag-changed" in all_kinds


def test_9_compat_kind_names():
    from checkers.compat.kinds import BREAKING_KINDS, NOTE_KINDS

    assert set(BREAKING_KINDS) == {
        "op-deleted", "input-deleted", "output-deleted", "attr-deleted",
        "input-added-required", "output-added-required", "attr-added-no-default",
        "attr-type-changed", "attr-default-changed", "input-flag-changed",
        "output-flag-changed", "attr-flag-changed"}
    assert set(NOTE_KINDS) == {"input-added", "output-added", "attr-added", "op-added"}


@pytest.mark.parametrize("args", [("ops",), ("dump",)])
def test_9_json_stdout_only(args):
    p = run_opkit(*args, "--format", "json")
    assert p.returncode == 0
    json_stdout(p)
