"""The executor's fast path (a step whose input signature was verified before skips
infer_shape, kernel choice and output checks) gives the plain path's results and errors, and a
run keeps nothing alive but fetched arrays and persistable variables."""
import gc
import weakref

import numpy as np
import pytest

import opkit
from opkit import OpMaker, OperatorWithKernel, errors, register_kernel, register_operator
from opkit.framework.operator import create_op
from opkit.registry import scratch


class _M(OpMaker):
    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "o")
        self.add_comment("A test op. $$Out = 2 X$$")


class _Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


def _fresh(main, feed, fetch):
    """The plain path: a new executor and scope, every op verified on this first run."""
    return opkit.Executor().run(main.clone(), feed=feed, fetch_list=fetch, scope=opkit.Scope())


def _error(fn):
    with pytest.raises(errors.EnforceNotMet) as info:
        fn()
    return type(info.value), str(info.value)


def test_a_run_keeps_only_fetched_and_persistable_values_alive():
    made = []
    with scratch():
        register_operator("record_double", _Op, _M)

        @register_kernel("record_double")
        def kernel(ctx):
            out = ctx.input("X") * 2
            made.append(weakref.ref(out))
            ctx.set_output("Out", out)

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[1000], dtype="float64")
            h = x
            for _ in range(4):
                h = opkit.layers.append_op("record_double", {"X": h})
        exe, scope = opkit.Executor(), opkit.Scope()
        for run in range(3):  # the first run verifies, the later ones take the fast path
            made.clear()
            feed_array = np.ones((2, 1000))
            fed = weakref.ref(feed_array)
            (result,) = exe.run(main, feed={"x": feed_array}, fetch_list=[h], scope=scope)
            del feed_array
            gc.collect()
            alive = [r() is not None for r in made]
            assert alive == [False, False, False, True], (run, alive)
            assert made[-1]() is result
            assert fed() is None, "the fed array outlives the run"
            np.testing.assert_array_equal(result, np.full((2, 1000), 16.0))
            del result


def test_the_fast_path_is_bitwise_the_plain_path_on_a_training_program():
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = 3
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[3], dtype="float64")
        y = opkit.layers.data("y", shape=[1], dtype="float64")
        pred = opkit.layers.fc(x, size=1, name="lin")
        loss = opkit.layers.mean(opkit.layers.square_error_cost(pred, y))
    exe, scope = opkit.Executor(), opkit.Scope()
    exe.run(startup, scope=scope)
    params = [v.name for v in main.global_block().all_parameters()]
    rng = np.random.default_rng(0)
    for batch in (4, 4, 7, 4, 1):  # repeated and new feed shapes
        feed = {"x": rng.random((batch, 3)), "y": rng.random((batch, 1))}
        plain_scope = opkit.Scope()
        for p in params:
            plain_scope.var(p).get_tensor().set(np.array(scope.find_var(p).get_tensor().data))
        fast = exe.run(main, feed=feed, fetch_list=[pred, loss], scope=scope)
        plain = opkit.Executor().run(main.clone(), feed=feed, fetch_list=[pred, loss],
                                     scope=plain_scope)
        for a, b in zip(fast, plain):
            assert a.dtype == b.dtype and a.shape == b.shape
            assert a.tobytes() == b.tobytes()


def test_new_lod_is_seen_by_the_fast_path():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[2], dtype="float64", lod_level=1)
        pooled = opkit.layers.append_op("sequence_pool", {"X": opkit.layers.relu(x)},
                                        attrs={"pooltype": "SUM"})
    exe, scope = opkit.Executor(), opkit.Scope()
    data = np.arange(12, dtype="float64").reshape(6, 2)
    for lengths in ([[1, 2, 3]], [[1, 2, 3]], [[3, 3]], [[6]], [[2, 0, 4]]):
        feed = {"x": (data, lengths)}
        (fast,) = exe.run(main, feed=feed, fetch_list=[pooled], scope=scope)
        (plain,) = _fresh(main, feed, [pooled])
        assert fast.tobytes() == plain.tobytes() and fast.shape == plain.shape
        assert fast.shape == (len(lengths[0]), 2)


def test_a_wrong_output_shape_is_caught_when_the_signature_changes():
    with scratch():
        register_operator("grows_wrong", _Op, _M)

        @register_kernel("grows_wrong")
        def kernel(ctx):
            x = ctx.input("X")
            ctx.set_output("Out", x[:2] * 2)  # right only while X has at most 2 rows

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[3], dtype="float64")
            out = opkit.layers.append_op("grows_wrong", {"X": x})
        exe, scope = opkit.Executor(), opkit.Scope()
        ok = {"x": np.ones((2, 3))}
        for _ in range(2):
            exe.run(main, feed=ok, fetch_list=[out], scope=scope)
        bad = {"x": np.ones((5, 3))}
        fast = _error(lambda: exe.run(main, feed=bad, fetch_list=[out], scope=scope))
        plain = _error(lambda: _fresh(main, bad, [out]))
        assert fast == plain
        # the framework's typed "the kernel broke its infer_shape" error (an InvalidArgument)
        assert issubclass(fast[0], errors.InvalidArgument) and "[2, 3]" in fast[1] and \
            "[5, 3]" in fast[1]
        # and back to a good signature: runs again
        (r,) = exe.run(main, feed=ok, fetch_list=[out], scope=scope)
        np.testing.assert_array_equal(r, np.full((2, 3), 2.0))


def test_a_new_dtype_invalidates_the_verified_step():
    with scratch():
        register_operator("always_f64", _Op, _M)

        @register_kernel("always_f64", dtypes=("float32", "float64"))
        def kernel(ctx):
            ctx.set_output("Out", ctx.input("X").astype("float64"))

        op = create_op("always_f64", {"X": "x"}, {"Out": "o"})
        place = opkit.CPUPlace()

        def run(dtype):
            scope = opkit.Scope()
            scope.var("x").get_tensor().set(np.ones((2, 2), dtype=dtype))
            op.run_impl(scope, place)
            return scope.find_var("o").get_tensor().data

        for _ in range(3):
            assert run("float64").dtype == np.float64
        fast = _error(lambda: op.run(_scope_with("float32"), place))
        plain_op = create_op("always_f64", {"X": "x"}, {"Out": "o"})
        plain = _error(lambda: plain_op.run(_scope_with("float32"), place))
        assert fast == plain
        assert "float32" in fast[1] and "float64" in fast[1]


def _scope_with(dtype):
    scope = opkit.Scope()
    scope.var("x").get_tensor().set(np.ones((2, 2), dtype=dtype))
    return scope


def test_errors_of_the_fast_path_match_the_plain_path():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[3], dtype="float32")
        r = opkit.layers.relu(x)
    exe, scope = opkit.Executor(), opkit.Scope()
    for _ in range(2):
        exe.run(main, feed={"x": np.ones((2, 3), "float32")}, fetch_list=[r], scope=scope)
    for feed in ({"x": np.ones((2, 3), "float64")}, {"x": np.ones((2, 4), "float32")}, {}):
        fast = _error(lambda feed=feed: exe.run(main, feed=feed, fetch_list=[r], scope=scope))
        plain = _error(lambda feed=feed: _fresh(main, feed, [r]))
        assert fast == plain


def test_harness_style_repeated_run_impl_with_hooks_still_checks_every_run():
    calls = []

    from opkit.framework.hooks import KernelHooks

    class Hooks(KernelHooks):
        def before_kernel(self, op, ctx):
            calls.append(("before", op.type))

        def after_kernel(self, op, ctx):
            calls.append(("after", op.type))

    op = create_op("relu", {"X": "x"}, {"Out": "o"})
    for _ in range(3):
        scope = _scope_with("float64")
        op.run_impl(scope, opkit.CPUPlace(), hooks=Hooks())
        np.testing.assert_array_equal(scope.find_var("o").get_tensor().data, np.ones((2, 2)))
    assert calls == [("before", "relu"), ("after", "relu")] * 3


def test_new_lod_values_of_the_same_level_reach_the_outputs():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[2], dtype="float64", lod_level=1)
        r = opkit.layers.relu(opkit.layers.relu(x))
    exe, scope = opkit.Executor(), opkit.Scope()
    data = np.arange(12, dtype="float64").reshape(6, 2)
    for lengths in ([[1, 2, 3]], [[1, 2, 3]], [[6]], [[2, 0, 4]]):
        (out,) = exe.run(main, feed={"x": (data, lengths)}, fetch_list=[r], scope=scope,
                         return_numpy=False)
        assert out.recursive_sequence_lengths() == lengths


# -- prepared plans (Executor.run keeps one per feed signature and fetch list) ------------
def _plans(exe, main):
    """The prepared plans the executor keeps for `main`'s global block (test-only peek)."""
    (prepared,) = [p for (pid, _), p in exe._cache.items() if pid == id(main)]
    return prepared.plans


def _chain(ops=3):
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        x = opkit.layers.data("x", shape=[3], dtype="float64")
        h = x
        for _ in range(ops):
            h = opkit.layers.relu(opkit.layers.scale(h, scale=2.0))
    return main, h


def test_a_feed_signature_run_again_takes_the_plan_and_matches_the_plain_path():
    main, h = _chain()
    exe, scope = opkit.Executor(), opkit.Scope()
    rng = np.random.default_rng(1)
    for i, batch in enumerate((2, 2, 2, 5, 2, 5)):
        feed = {"x": rng.standard_normal((batch, 3))}
        (fast,) = exe.run(main, feed=feed, fetch_list=[h], scope=scope)
        (plain,) = _fresh(main, feed, [h])
        assert fast.tobytes() == plain.tobytes() and fast.shape == plain.shape
        assert fast.flags.writeable, "a fetched array is the caller's, writeable as before"
        if i == 0:
            assert len(_plans(exe, main)) == 0  # a key's second plain run records its plan
        if i == 1:
            assert len(_plans(exe, main)) == 1
    assert len(_plans(exe, main)) == 2  # one per feed signature
    for plan in _plans(exe, main).values():  # every step a trusted one (kernel bound once)
        assert all(fn is not None for _, fn, _, _ in plan.steps)


def test_a_kernel_writing_into_its_input_fails_alike_on_the_plan():
    scribble = {"on": False}
    with scratch():
        register_operator("scribble_in", _Op, _M)

        @register_kernel("scribble_in")
        def kernel(ctx):
            x = ctx.input("X")
            if scribble["on"]:
                x[...] = 7.0  # an input is read-only: numpy raises
            ctx.set_output("Out", x * 2)

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[3], dtype="float64")
            out = opkit.layers.append_op("scribble_in", {"X": opkit.layers.scale(x, 2.0)})
        exe, scope = opkit.Executor(), opkit.Scope()
        feed = {"x": np.ones((2, 3))}
        for _ in range(2):
            exe.run(main, feed=feed, fetch_list=[out], scope=scope)
        (plan,) = _plans(exe, main).values()
        assert all(fn is not None for _, fn, _, _ in plan.steps)
        scribble["on"] = True  # the plan's runs: X is a temporary frozen in place
        fast = [_error(lambda: exe.run(main, feed=feed, fetch_list=[out], scope=scope))
                for _ in range(2)]
        plain = _error(lambda: _fresh(main, feed, [out]))
        assert fast == [plain, plain]
        assert plain[0] is errors.External and "scribble_in" in plain[1] and \
            "read-only" in plain[1]
        scribble["on"] = False  # the failed runs left the plan clean
        (r,) = exe.run(main, feed=feed, fetch_list=[out], scope=scope)
        np.testing.assert_array_equal(r, np.full((2, 3), 4.0))


def test_a_frozen_temporary_is_read_only_to_its_reader_on_the_plan():
    seen = []
    with scratch():
        register_operator("peek_writeable", _Op, _M)

        @register_kernel("peek_writeable")
        def kernel(ctx):
            x = ctx.input("X")
            seen.append(x.flags.writeable)
            ctx.set_output("Out", x + 1)

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[3], dtype="float64")
            mid = opkit.layers.scale(x, 2.0)
            out = opkit.layers.append_op("peek_writeable", {"X": mid})
            again = opkit.layers.append_op("peek_writeable", {"X": x})
        exe, scope = opkit.Executor(), opkit.Scope()
        feed_array = np.ones((2, 3))
        for _ in range(3):
            a, b = exe.run(main, feed={"x": feed_array}, fetch_list=[out, again], scope=scope)
            np.testing.assert_array_equal(a, np.full((2, 3), 3.0))
            np.testing.assert_array_equal(b, np.full((2, 3), 2.0))
            assert a.flags.writeable and b.flags.writeable
        assert seen == [False] * 6
        assert feed_array.flags.writeable, "the caller's fed array is never frozen"


def test_a_kernel_handing_out_a_stored_array_does_not_freeze_it():
    """A kernel that reads through the generic accessors (input_tensor().data: the stored
    array itself) and outputs it: the fed array must stay the caller's, writeable."""
    with scratch():
        register_operator("pass_through", _Op, _M)

        @register_kernel("pass_through")
        def kernel(ctx):
            ctx.set_output("Out", ctx.input_tensor("X").data)

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[3], dtype="float64")
            out = opkit.layers.scale(opkit.layers.append_op("pass_through", {"X": x}), 3.0)
        exe, scope = opkit.Executor(), opkit.Scope()
        feed_array = np.ones((2, 3))
        for _ in range(3):
            (r,) = exe.run(main, feed={"x": feed_array}, fetch_list=[out], scope=scope)
            np.testing.assert_array_equal(r, np.full((2, 3), 3.0))
        assert feed_array.flags.writeable


def test_a_parameter_of_another_shape_leaves_the_plan_for_the_plain_path():
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[3], dtype="float64")
        pred = opkit.layers.fc(x, size=2, name="p")
    exe, scope = opkit.Executor(), opkit.Scope()
    exe.run(startup, scope=scope)
    (w,) = [v.name for v in main.global_block().all_parameters() if v.name.endswith(".w_0")]
    feed = {"x": np.ones((4, 3))}
    for _ in range(2):
        exe.run(main, feed=feed, fetch_list=[pred], scope=scope)
    scope.find_var(w).get_tensor().set(np.ones((3, 5)))  # the plan verified [3, 2]
    fast = _error(lambda: exe.run(main, feed=feed, fetch_list=[pred], scope=scope))
    plain_scope = opkit.Scope()
    for p in main.global_block().all_parameters():
        plain_scope.var(p.name).get_tensor().set(
            np.array(scope.find_var(p.name).get_tensor().data))
    plain = _error(lambda: opkit.Executor().run(main.clone(), feed=feed, fetch_list=[pred],
                                                scope=plain_scope))
    assert fast == plain
    scope.find_var(w).get_tensor().set(np.full((3, 2), 0.5))
    for _ in range(2):
        (r,) = exe.run(main, feed=feed, fetch_list=[pred], scope=scope)
        np.testing.assert_allclose(r, np.full((4, 2), 1.5))


def test_a_data_dependent_shape_is_checked_on_every_run_of_the_plan():
    """An op whose output dims infer_shape leaves open (-1): its readers are not trusted
    steps, so a kernel that gets the shape wrong is caught on the run where it happens."""
    rows = {"n": 2}
    with scratch():
        class _Open(OperatorWithKernel):
            def infer_shape(self, ctx):
                ctx.set_output_dim("Out", [-1, ctx.get_input_dim("X")[1]])

        register_operator("open_rows", _Open, _M)

        @register_kernel("open_rows")
        def kernel(ctx):
            ctx.set_output("Out", ctx.input("X")[: rows["n"]] * 2)

        main = opkit.Program()
        with opkit.program_guard(main, opkit.Program()):
            x = opkit.layers.data("x", shape=[3], dtype="float64")
            out = opkit.layers.relu(opkit.layers.append_op("open_rows", {"X": x}))
        exe, scope = opkit.Executor(), opkit.Scope()
        feed = {"x": np.ones((4, 3))}
        for n in (2, 2, 3, 1, 1):
            rows["n"] = n
            (r,) = exe.run(main, feed=feed, fetch_list=[out], scope=scope)
            (plain,) = _fresh(main, feed, [out])
            assert r.shape == (n, 3) and r.tobytes() == plain.tobytes()
        (plan,) = _plans(exe, main).values()
        assert [fn is not None for _, fn, _, _ in plan.steps] == [True, False]


def test_a_plan_run_keeps_nothing_but_the_fetched_value_alive():
    main, h = _chain(ops=4)
    exe, scope = opkit.Executor(), opkit.Scope()
    feed = {"x": np.ones((3, 3))}
    for _ in range(3):
        (r,) = exe.run(main, feed=feed, fetch_list=[h], scope=scope)
    plan = next(iter(_plans(exe, main).values()))
    assert all(var.value() is None for var in plan.scope._vars.values())
    assert plan.scope.parent is None and not scope.kids()
    np.testing.assert_array_equal(r, np.full((3, 3), 16.0))


def test_a_new_feed_shape_every_run_records_no_plan():
    main, h = _chain()
    exe, scope = opkit.Executor(), opkit.Scope()
    for batch in range(1, 6):
        (r,) = exe.run(main, feed={"x": np.ones((batch, 3))}, fetch_list=[h], scope=scope)
        assert r.shape == (batch, 3)
    assert _plans(exe, main) == {}
