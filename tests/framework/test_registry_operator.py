"""Registry, attr checker, kernel choice and the run of one operator."""
import numpy as np
import pytest

import opkit
from opkit import (OpKernel, OpKernelType, OpMaker, OperatorBase, OperatorWithKernel, errors,
                   register_kernel, register_operator)
from opkit.framework.operator import create_op
from opkit.registry import all_op_types, op_info, scratch


class ToyMaker(OpMaker):
    def make(self):
        self.add_input("X", "input")
        self.add_input("Bias", "optional bias").as_dispensable()
        self.add_output("Out", "output")
        self.add_attr("alpha", "float", "scale", default=1.0).greater_than(0.0)
        self.add_attr("mode", "string", "mode", default="a").in_set(["a", "b"])
        self.add_attr("k", int, "k").add_custom_checker(lambda v: v % 2 == 1, "odd")
        self.add_comment("Toy. $$Out = alpha X$$")


class ToyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


def run(op, scope, place=None):
    op.run(scope, place or opkit.CPUPlace())


def feed(scope, name, array, lod=None):
    t = scope.var(name).get_tensor()
    t.set(np.asarray(array))
    if lod:
        t.set_recursive_sequence_lengths(lod)


@pytest.fixture
def toy():
    with scratch():
        register_operator("toy", ToyOp, ToyMaker)

        @register_kernel("toy", place="CPU", dtypes=("float32", "float64"))
        def toy_kernel(ctx):
            ctx.set_output("Out", ctx.input("X") * ctx.attr("alpha"))

        yield


def test_registry_lists_and_describes(toy):
    assert "toy" in all_op_types()
    info = op_info("toy")
    assert info.proto.attr("alpha").default == 1.0
    assert info.kernel_places() == {"CPU": ["float32", "float64"]}


def test_unknown_op_suggests_close_names(toy):
    with pytest.raises(errors.NotFound, match="did you mean toy"):
        op_info("tyo")


def test_duplicate_registration_is_an_error(toy):
    class OtherToy(OperatorWithKernel):
        pass

    with pytest.raises(errors.AlreadyExists, match="registered twice"):
        register_operator("toy", OtherToy, ToyMaker)

    with pytest.raises(errors.AlreadyExists, match="CPU float32"):
        @register_kernel("toy", dtypes="float32")
        def other(ctx):
            pass


def test_attr_checker_defaults_ranges_sets_custom(toy):
    op = create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 3})
    assert op.attrs == {"alpha": 1.0, "mode": "a", "k": 3}
    with pytest.raises(errors.InvalidArgument, match="attr 'alpha' of op 'toy'.*> 0.0"):
        create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 3, "alpha": -1.0})
    with pytest.raises(errors.InvalidArgument, match=r"attr 'mode' of op 'toy'.*in \['a', 'b'\]"):
        create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 3, "mode": "c"})
    with pytest.raises(errors.InvalidArgument, match="attr 'k' of op 'toy'.*odd"):
        create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 2})
    with pytest.raises(errors.InvalidArgument, match="attr 'k' of op 'toy' is required"):
        create_op("toy", {"X": "x"}, {"Out": "o"}, {})
    with pytest.raises(errors.InvalidArgument, match="attr 'k' of op 'toy'.*expected int"):
        create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": "three"})
    with pytest.raises(errors.InvalidArgument, match="has no attr 'beta'"):
        create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 1, "beta": 2})


def test_bad_default_is_refused_at_registration():
    class BadMaker(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "o")
            self.add_attr("p", "float", "prob", default=2.0).less_than(1.0)

    with scratch():
        with pytest.raises(errors.InvalidArgument, match="attr 'p' of op 'bad'.*default"):
            register_operator("bad", ToyOp, BadMaker)


def test_slots_are_checked(toy):
    with pytest.raises(errors.InvalidArgument, match="has no input slot 'Y'"):
        create_op("toy", {"X": "x", "Y": "y"}, {"Out": "o"}, {"k": 1})
    with pytest.raises(errors.InvalidArgument, match="input 'X' is required"):
        create_op("toy", {}, {"Out": "o"}, {"k": 1})
    with pytest.raises(errors.InvalidArgument, match="not duplicable"):
        create_op("toy", {"X": ["a", "b"]}, {"Out": "o"}, {"k": 1})


def test_run_chooses_kernel_by_input_dtype_and_keeps_lod(toy):
    scope = opkit.Scope()
    feed(scope, "x", np.arange(6, dtype="float32").reshape(3, 2), [[1, 2]])
    op = create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 1, "alpha": 2.0})
    run(op, scope)
    out = scope.find_var("o").get_tensor()
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out.numpy(), np.arange(6).reshape(3, 2) * 2)
    assert out.recursive_sequence_lengths() == [[1, 2]]


def test_no_matching_kernel_lists_registered_kernels(toy):
    scope = opkit.Scope()
    feed(scope, "x", np.ones(3, dtype="float16"))
    op = create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 1})
    with pytest.raises(errors.NotFound) as info:
        run(op, scope)
    msg = str(info.value)
    assert "[operator < toy > error]" in msg
    assert "no kernel for float16 on CPU" in msg and "CPU float32, CPU float64" in msg


def test_uninitialized_input_names_op_and_variable(toy):
    scope = opkit.Scope()
    scope.var("x")
    op = create_op("toy", {"X": "x"}, {"Out": "o"}, {"k": 1})
    with pytest.raises(errors.PreconditionNotMet) as info:
        run(op, scope)
    msg = str(info.value)
    assert "toy" in msg and "'x'" in msg and "not initialized" in msg
    assert "holder_" not in msg


def test_inputs_reach_kernels_read_only():
    with scratch():
        register_operator("scribble", ToyOp, ToyMaker)

        @register_kernel("scribble", dtypes=("float32", "float64"))
        def scribble(ctx):
            x = ctx.input("X")
            x[0] = 42.0
            ctx.set_output("Out", x.copy())

        scope = opkit.Scope()
        data = np.zeros(3)
        feed(scope, "x", data)
        with pytest.raises(errors.External, match="scribble.*read-only"):
            run(create_op("scribble", {"X": "x"}, {"Out": "o"}, {"k": 1}), scope)
        assert data[0] == 0.0


def test_output_shape_and_dtype_are_checked_after_the_kernel():
    with scratch():
        register_operator("wrong_shape", ToyOp, ToyMaker)
        register_operator("wrong_dtype", ToyOp, ToyMaker)
        register_operator("no_output", ToyOp, ToyMaker)

        @register_kernel("wrong_shape")
        def wrong_shape(ctx):
            ctx.set_output("Out", ctx.input("X")[:1].copy())

        @register_kernel("wrong_dtype")
        def wrong_dtype(ctx):
            ctx.set_output("Out", ctx.input("X").astype("float64"))

        @register_kernel("no_output")
        def no_output(ctx):
            pass

        scope = opkit.Scope()
        feed(scope, "x", np.ones(3, dtype="float32"))
        with pytest.raises(errors.InvalidArgument, match=r"shape \[1\].*infer_shape says \[3\]"):
            run(create_op("wrong_shape", {"X": "x"}, {"Out": "o"}, {"k": 1}), scope)
        with pytest.raises(errors.InvalidArgument, match="as float64.*must be float32"):
            run(create_op("wrong_dtype", {"X": "x"}, {"Out": "o2"}, {"k": 1}), scope)
        with pytest.raises(errors.PreconditionNotMet, match="did not produce output variable 'o3'"):
            run(create_op("no_output", {"X": "x"}, {"Out": "o3"}, {"k": 1}), scope)


def test_class_kernel_tuple_places_and_expected_kernel_type():
    with scratch():
        class PickY(ToyOp):
            def get_expected_kernel_type(self, ctx):
                return OpKernelType(self.indicate_var_data_type(ctx, "Bias"), ctx.place)

        register_operator("pick", PickY, ToyMaker)

        @register_kernel("pick", place=("CPU",), dtypes="float64")
        class PickKernel(OpKernel):
            def compute(self, ctx):
                ctx.set_output("Out", ctx.input("X").astype(ctx.dtype))

        scope = opkit.Scope()
        feed(scope, "x", np.ones(2, dtype="float32"))
        feed(scope, "b", np.ones(2, dtype="float64"))
        run(create_op("pick", {"X": "x", "Bias": "b"}, {"Out": "o"}, {"k": 1}), scope)
        assert scope.find_var("o").get_tensor().dtype == np.float64
        scope.var("missing")
        with pytest.raises(errors.PreconditionNotMet, match="'missing'.*not initialized"):
            run(create_op("pick", {"X": "x", "Bias": "missing"}, {"Out": "o"}, {"k": 1}), scope)


def test_mixed_float_input_dtypes_are_an_error(toy):
    with scratch():
        register_operator("two", ToyOp, ToyMaker)

        @register_kernel("two")
        def two(ctx):
            ctx.set_output("Out", ctx.input("X").copy())

        scope = opkit.Scope()
        feed(scope, "x", np.ones(2, dtype="float32"))
        feed(scope, "b", np.ones(2, dtype="float64"))
        with pytest.raises(errors.InvalidArgument, match="data types of its inputs differ"):
            run(create_op("two", {"X": "x", "Bias": "b"}, {"Out": "o"}, {"k": 1}), scope)


def test_operator_base_runs_run_impl_and_errors_get_op_prefix():
    class Noop(OperatorBase):
        def run_impl(self, scope, place, **options):
            scope.var("ran").set_value(True)

    class Boom(OperatorBase):
        def run_impl(self, scope, place, **options):
            raise ZeroDivisionError("division by zero")

    with scratch():
        register_operator("noop", Noop)
        register_operator("boom", Boom)
        scope = opkit.Scope()
        create_op("noop").run(scope, opkit.CPUPlace())
        assert scope.find_var("ran").value() is True
        with pytest.raises(errors.External, match=r"\[operator < boom > error\].*ZeroDivisionError"):
            create_op("boom").run(scope, opkit.CPUPlace())


def test_inplace_declared_pair_reuses_buffer_only_when_enabled():
    with scratch():
        register_operator("ip", ToyOp, ToyMaker, inplace={"X": "Out"})

        @register_kernel("ip")
        def ip(ctx):
            x = ctx.input("X")
            out = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)
            np.multiply(x, 2, out=out)

        scope = opkit.Scope()
        data = np.ones(3)
        feed(scope, "x", data)
        op = create_op("ip", {"X": "x"}, {"Out": "o"}, {"k": 1})
        op.run(scope, opkit.CPUPlace())
        out = scope.find_var("o").get_tensor().data
        assert not np.shares_memory(out, data)
        op.run(scope, opkit.CPUPlace(), enable_inplace=True)
        out = scope.find_var("o").get_tensor().data
        assert np.shares_memory(out, scope.find_var("x").get_tensor().data)
        np.testing.assert_array_equal(out, [2, 2, 2])


def test_inplace_declaration_must_name_real_slots():
    with scratch():
        with pytest.raises(errors.InvalidArgument, match="inplace X -> Y"):
            register_operator("ip2", ToyOp, ToyMaker, inplace={"X": "Y"})


def test_register_kernel_rejects_bad_arguments():
    with pytest.raises(errors.InvalidArgument, match="unknown place"):
        register_kernel("toy", place="TPU")
    with pytest.raises(errors.InvalidArgument, match="unknown dtype"):
        register_kernel("toy", dtypes=("float33",))


def test_scratch_keeps_required_attrs_required():
    with scratch():
        pass
    assert not op_info("clip").proto.attr("min").has_default
    with pytest.raises(errors.InvalidArgument, match="attr 'min' of op 'clip' is required"):
        create_op("clip", {"X": "x"}, {"Out": "o"}, {"max": 1.0})


def test_same_file_registering_twice_is_not_a_clash(tmp_path):
    import importlib.util

    src = tmp_path / "twice_op.py"
    src.write_text(
        "from opkit import OpMaker, OperatorWithKernel, register_operator\n"
        "class M(OpMaker):\n"
        "    def make(self):\n"
        "        self.add_input('X', 'x')\n"
        "        self.add_output('Out', 'o')\n"
        "        self.add_comment('Twice. $$Out = X$$')\n"
        "class Op(OperatorWithKernel):\n"
        "    pass\n"
        "register_operator('twice', Op, M)\n")
    with scratch():
        for name in ("twice_a", "twice_b"):  # the same file loaded as two modules
            spec = importlib.util.spec_from_file_location(name, src)
            spec.loader.exec_module(importlib.util.module_from_spec(spec))
        assert "twice" in all_op_types()
