"""The public contract, section 2. writing an op."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import opkit
from opkit import errors
from opkit.registry import scratch

from contract_helpers import ATTR_TYPES, REQUIRED, assert_signature, register_probe, run_single


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


def test_2_infer_shape_runs_at_compile_and_run_time():
    record = {}
    with scratch():
        register_probe(record, kernel=lambda ctx: ctx.set_output("Out", ctx.input("X") * 2))
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
        register_probe({}, infer_shape=infer, kernel=kernel)
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
        register_probe({})

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
        register_probe({})
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
        register_probe({}, grad_maker=opkit.DefaultGradOpMaker, inplace={"X": "Out"},
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
        register_probe({}, grad_maker=opkit.DefaultGradOpMaker)
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
        register_probe({})
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
        register_probe({}, kernel=kernel)
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
        register_probe({}, kernel=_lod_probe(relod))
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
        register_probe({}, kernel=kernel, inplace={"X": "Out"})
        run_single("contract_probe", {"x": np.zeros((2, 2))}, {"X": "x"}, {"Out": "o"},
                   fetch=["o"], enable_inplace=enable)
    assert seen["shared"] is enable
