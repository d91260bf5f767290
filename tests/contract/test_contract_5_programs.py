"""The public contract, section 5. programs."""
from __future__ import annotations

import numpy as np

import opkit

from contract_helpers import assert_signature


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
