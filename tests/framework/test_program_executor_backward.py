"""Programs, the executor, append_backward, layers and SGD, end to end."""
import json

import numpy as np
import pytest

import opkit
from opkit import errors


def build_linear(seed=1):
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = seed
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[3], dtype="float64")
        y = opkit.layers.data("y", shape=[1], dtype="float64")
        pred = opkit.layers.fc(x, size=1, name="lin")
        loss = opkit.layers.mean(opkit.layers.square_error_cost(pred, y))
    return main, startup, x, y, pred, loss


def test_compile_time_infer_shape_at_append_op():
    main, _, x, y, pred, loss = build_linear()
    assert x.shape == [-1, 3]
    assert pred.shape == [-1, 1]
    assert loss.shape == [1]
    assert pred.dtype == "float64"


def test_compile_time_errors_name_the_op():
    main = opkit.Program()
    block = main.global_block()
    block.create_var(name="a", shape=[2, 3], dtype="float32")
    block.create_var(name="b", shape=[4, 5], dtype="float32")
    with pytest.raises(opkit.EnforceNotMet) as info:
        block.append_op("mul", {"X": "a", "Y": "b"}, {"Out": "c"})
    assert "mul" in str(info.value)


def test_append_op_needs_existing_inputs():
    block = opkit.Program().global_block()
    with pytest.raises(errors.NotFound, match="'ghost'"):
        block.append_op("relu", {"X": "ghost"}, {"Out": "o"})


def test_lod_level_propagates_at_compile_time():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[4], dtype="float32", lod_level=1)
        r = opkit.layers.relu(x)
    assert r.lod_level == 1


def test_executor_runs_with_feeds_and_lod_feed():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[2], dtype="float32", lod_level=1)
        r = opkit.layers.relu(x)
    exe = opkit.Executor(opkit.CPUPlace())
    data = np.array([[-1, 2], [3, -4], [5, 6]], dtype="float32")
    (out,) = exe.run(main, feed={"x": (data, [[1, 2]])}, fetch_list=[r], scope=opkit.Scope())
    np.testing.assert_array_equal(out, np.maximum(data, 0))
    (t,) = exe.run(main, feed={"x": (data, [[1, 2]])}, fetch_list=[r.name], scope=opkit.Scope(),
                   return_numpy=False)
    assert isinstance(t, opkit.LoDTensor)
    assert t.recursive_sequence_lengths() == [[1, 2]]


def test_executor_feed_errors_are_clear():
    main, startup, *_ = build_linear()
    exe = opkit.Executor(opkit.CPUPlace())
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    good_y = np.zeros((2, 1))
    with pytest.raises(errors.InvalidArgument, match="feed 'x' is float32.*declared float64"):
        exe.run(main, feed={"x": np.zeros((2, 3), "float32"), "y": good_y}, scope=scope)
    with pytest.raises(errors.InvalidArgument, match=r"feed 'x' has shape \[2, 4\].*\[-1, 3\]"):
        exe.run(main, feed={"x": np.zeros((2, 4)), "y": good_y}, scope=scope)
    with pytest.raises(errors.NotFound, match="feed 'z'"):
        exe.run(main, feed={"z": np.zeros((2, 3))}, scope=scope)
    with pytest.raises(errors.InvalidArgument, match="bad sequence lengths"):
        exe.run(main, feed={"x": (np.zeros((2, 3)), [[1, 5]]), "y": good_y}, scope=scope)


def test_missing_feed_names_op_and_variable():
    main, startup, *_ = build_linear()
    exe = opkit.Executor(opkit.CPUPlace())
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    with pytest.raises(errors.PreconditionNotMet) as info:
        exe.run(main, feed={"x": np.zeros((2, 3))}, scope=scope)
    assert "'y'" in str(info.value) and "elementwise_sub" in str(info.value)


def test_fetch_unknown_variable():
    main, startup, x, y, pred, loss = build_linear()
    exe = opkit.Executor()
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    with pytest.raises(errors.NotFound, match="fetch 'nope'"):
        exe.run(main, feed={"x": np.zeros((2, 3)), "y": np.zeros((2, 1))}, fetch_list=["nope"],
                scope=scope)


def test_scope_per_run_keeps_only_persistables():
    main, startup, x, y, pred, loss = build_linear()
    exe = opkit.Executor()
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed={"x": np.zeros((2, 3)), "y": np.zeros((2, 1))}, fetch_list=[loss],
            scope=scope)
    assert scope.find_var("lin.w_0") is not None
    assert scope.find_var(loss.name) is None
    assert scope.kids() == []


def test_append_backward_matches_closed_form_gradient():
    main, startup, x, y, pred, loss = build_linear()
    with opkit.program_guard(main, startup):
        params_grads = opkit.append_backward(loss)
    names = sorted(p.name for p, _ in params_grads)
    assert names == ["lin.b_0", "lin.w_0"]
    assert all(g.name == p.name + "@GRAD" for p, g in params_grads)
    exe = opkit.Executor()
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(0)
    xs, ys = rng.normal(size=(5, 3)), rng.normal(size=(5, 1))
    w = scope.find_var("lin.w_0").get_tensor().numpy()
    b = scope.find_var("lin.b_0").get_tensor().numpy()
    gw, gb = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=["lin.w_0@GRAD", "lin.b_0@GRAD"],
                     scope=scope)
    resid = xs @ w + b - ys
    np.testing.assert_allclose(gw, 2 * xs.T @ resid / 5, rtol=1e-10)
    np.testing.assert_allclose(gb, 2 * resid.sum(0) / 5, rtol=1e-10)


def test_gradient_of_a_variable_used_twice_is_summed():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = main.global_block().create_var(name="x", shape=[4], dtype="float64")
        sq = opkit.layers.elementwise_mul(x, x)
        loss = opkit.layers.mean(sq)
        opkit.append_backward(loss, parameter_list=[x])
    types = [op.type for op in main.global_block().ops]
    assert "sum" in types
    exe = opkit.Executor()
    xs = np.array([1.0, -2.0, 3.0, 0.5])
    (gx,) = exe.run(main, feed={"x": xs}, fetch_list=["x@GRAD"], scope=opkit.Scope())
    np.testing.assert_allclose(gx, 2 * xs / 4)


def test_no_grad_set_and_data_variables_stop_gradients():
    main, startup, x, y, pred, loss = build_linear()
    with opkit.program_guard(main, startup):
        params_grads = opkit.append_backward(loss, no_grad_set={"lin.b_0"})
    assert [p.name for p, _ in params_grads] == ["lin.w_0"]
    block = main.global_block()
    assert not block.has_var("x@GRAD")
    assert not block.has_var("lin.b_0@GRAD")


def test_loss_gradient_is_filled_with_ones():
    main, startup, x, y, pred, loss = build_linear()
    with opkit.program_guard(main, startup):
        opkit.append_backward(loss)
    fill = [op for op in main.global_block().ops if op.output_arg_names() == [loss.name + "@GRAD"]]
    assert fill and fill[0].type == "fill_constant" and fill[0].attrs["value"] == 1.0


def test_program_json_round_trip_runs_the_same():
    main, startup, x, y, pred, loss = build_linear()
    with opkit.program_guard(main, startup):
        opkit.optimizer.SGD(learning_rate=0.1).minimize(loss)
    text = main.to_json()
    json.loads(text)
    clone = opkit.Program.from_json(text)
    assert [op.type for op in clone.global_block().ops] == [op.type for op in main.global_block().ops]
    assert clone.to_json() == text
    exe = opkit.Executor()
    feeds = {"x": np.ones((2, 3)), "y": np.ones((2, 1))}
    results = []
    for prog in (main, clone):
        scope = opkit.Scope()
        exe.run(startup, scope=scope)
        results.append(exe.run(prog, feed=feeds, fetch_list=[loss.name], scope=scope)[0])
    np.testing.assert_array_equal(*results)


def test_from_json_rejects_garbage():
    with pytest.raises(errors.InvalidArgument, match="not a program JSON"):
        opkit.Program.from_json("{}")


def test_default_programs_and_guard_restore():
    before = opkit.framework.program.default_main_program()
    main = opkit.Program()
    with opkit.program_guard(main):
        assert opkit.framework.program.default_main_program() is main
    assert opkit.framework.program.default_main_program() is before
    with pytest.raises(errors.InvalidArgument):
        with opkit.program_guard("not a program"):
            pass


def test_sgd_minimize_trains():
    main, startup, x, y, pred, loss = build_linear(seed=3)
    with opkit.program_guard(main, startup):
        opkit.optimizer.SGD(learning_rate=0.1).minimize(loss)
    exe = opkit.Executor()
    scope = opkit.Scope()
    exe.run(startup, scope=scope)
    rng = np.random.default_rng(1)
    xs = rng.normal(size=(64, 3))
    ys = xs @ np.array([[1.0], [-2.0], [0.5]]) + 0.3
    first = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss], scope=scope)[0]
    for _ in range(200):
        last = exe.run(main, feed={"x": xs, "y": ys}, fetch_list=[loss], scope=scope)[0]
    assert last[0] < first[0] / 100
    np.testing.assert_allclose(scope.find_var("lin.w_0").get_tensor().numpy().ravel(),
                               [1.0, -2.0, 0.5], atol=1e-3)


def test_sgd_rejects_bad_learning_rate():
    with pytest.raises(errors.InvalidArgument, match="learning_rate"):
        opkit.optimizer.SGD(learning_rate=0)


def test_executor_checks_compile_time_lod_level_against_run_time_lod():
    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator
    from opkit.registry import scratch

    class M(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "o")
            self.add_comment("Drops the LoD although infer_shape shares it. $$Out = X$$")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))
            ctx.share_lod("X", "Out")

    with scratch():
        register_operator("lod_dropper", Op, M)

        @register_kernel("lod_dropper")
        def kernel(ctx):
            ctx.set_output("Out", ctx.input("X").copy(), lod=[])

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[2], dtype="float64", lod_level=1)
            out = opkit.layers.append_op("lod_dropper", {"X": x})
        assert out.lod_level == 1
        with pytest.raises(errors.InvalidArgument) as info:
            opkit.Executor().run(main, feed={"x": (np.ones((3, 2)), [[1, 2]])},
                                 fetch_list=[out], scope=opkit.Scope())
        msg = str(info.value)
        assert "lod_dropper" in msg and out.name in msg and "lod_level 1" in msg


def test_feeding_a_lod_variable_without_lengths_says_how():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[2], dtype="float64", lod_level=1)
        r = opkit.layers.relu(x)
    with pytest.raises(errors.InvalidArgument, match=r"feed 'x' has no LoD.*lod_level=1.*\(x, "):
        opkit.Executor().run(main, feed={"x": np.ones((3, 2))}, fetch_list=[r],
                             scope=opkit.Scope())
