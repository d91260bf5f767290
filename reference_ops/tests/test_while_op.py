"""while: an OperatorBase (no kernel) running its sub-block in step scopes. It has no float
kernel and no gradient, so it is tested through programs rather than OpTest."""
import pytest

import opkit
from opkit import layers
from opkit.control_flow import While


def _counting_program(n_value, is_test=False):
    main, startup = opkit.Program(), opkit.Program()
    with opkit.program_guard(main, startup):
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", n_value)
        total = layers.fill_constant([1], "float64", 0.0)
        one = layers.fill_constant([1], "float64", 1.0)
        cond = layers.less_than(i, n)
        loop = While(cond, is_test=is_test)
        with loop.block():
            block = main.current_block()
            step_local = layers.scale(one, scale=2.0)      # declared in the sub-block
            block.append_op("sum", inputs={"X": [total, step_local]}, outputs={"Out": total})
            layers.increment(i)
            layers.less_than(i, n, cond=cond)
    return main, {"i": i, "total": total, "cond": cond, "local": step_local}


@pytest.mark.parametrize("n", [0, 1, 7])
def test_while_runs_until_condition_is_false(n):
    main, v = _counting_program(n)
    i, total, cond = opkit.Executor().run(main, fetch_list=[v["i"], v["total"], v["cond"]],
                                          scope=opkit.Scope())
    assert i.tolist() == [n]
    assert total.tolist() == [2.0 * n]
    assert cond.tolist() == [False]


def test_while_op_description():
    main, v = _counting_program(3)
    (op,) = [op for op in main.global_block().ops if op.type == "while"]
    assert op.attrs["sub_block"] is main.block(1)
    assert main.block(1).parent_idx == 0
    assert set(op.inputs["X"]) >= {v["i"].name, v["total"].name}
    assert v["local"].name not in op.inputs["X"] + op.outputs["Out"]
    assert set(op.outputs["Out"]) >= {v["i"].name, v["total"].name, v["cond"].name}
    assert main.global_block().var(op.outputs["StepScopes"][0]).type == "step_scopes"


def _run_op_directly(is_test):
    """The while op run in a scope: its step scopes are children of that scope and hold
    the sub-block's variables."""
    main, v = _counting_program(4, is_test=is_test)
    scope = opkit.Scope()
    from opkit.framework.executor import create_block_variables

    block = main.global_block()
    create_block_variables(block, scope, scope)
    for desc in block.ops:
        desc.op.run(scope, opkit.CPUPlace())
    (op,) = [d for d in block.ops if d.type == "while"]
    return scope, scope.find_var(op.outputs["StepScopes"][0]).value(), v


def test_step_scopes_hold_step_variables():
    scope, steps, v = _run_op_directly(is_test=False)
    assert len(steps) == 4
    assert all(s.parent is scope for s in steps)
    for s in steps:
        local = s.find_local_var(v["local"].name)
        assert local is not None and local.value().numpy().tolist() == [2.0]
        assert s.find_local_var(v["i"].name) is None      # enclosing-block var: not copied
    assert scope.find_local_var(v["local"].name) is None


def test_is_test_drops_step_scopes():
    scope, steps, v = _run_op_directly(is_test=True)
    assert steps == [] and scope.kids() == []
    assert scope.find_var(v["total"].name).value().numpy().tolist() == [8.0]


def test_nested_while():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", 3)
        m = layers.fill_constant([1], "int64", 4)
        count = layers.fill_constant([1], "int64", 0)
        c1 = layers.less_than(i, n)
        outer = While(c1)
        with outer.block():
            j = layers.fill_constant([1], "int64", 0)         # fresh in each outer step
            c2 = layers.less_than(j, m)
            inner = While(c2)
            with inner.block():
                layers.increment(count)
                layers.increment(j)
                layers.less_than(j, m, cond=c2)
            layers.increment(i)
            layers.less_than(i, n, cond=c1)
    (value,) = opkit.Executor().run(main, fetch_list=[count], scope=opkit.Scope())
    assert value.tolist() == [12]


def test_while_survives_json_round_trip():
    main, v = _counting_program(5)
    again = opkit.Program.from_json(main.to_json())
    (total,) = opkit.Executor().run(again, fetch_list=[v["total"].name], scope=opkit.Scope())
    assert total.tolist() == [10.0]


def test_condition_must_be_bool():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        f = layers.fill_constant([1], "float32", 1.0)
        with pytest.raises(opkit.EnforceNotMet, match="bool"):
            While(f)
        block = main.global_block()
        sub = main.create_block()
        main.rollback()
        block.append_op("while", inputs={"X": [], "Condition": f},
                        outputs={"Out": [], "StepScopes": []}, attrs={"sub_block": sub})
    with pytest.raises(opkit.EnforceNotMet, match="while.*bool|bool.*while"):
        opkit.Executor().run(main, scope=opkit.Scope())


def test_error_inside_the_loop_names_the_inner_op():
    main = opkit.Program()
    with opkit.program_guard(main, opkit.Program()):
        i = layers.fill_constant([1], "int64", 0)
        n = layers.fill_constant([1], "int64", 2)
        arr = layers.create_array("float32")
        cond = layers.less_than(i, n)
        loop = While(cond)
        with loop.block():
            layers.array_read(arr, i)                       # the array is empty
            layers.increment(i)
            layers.less_than(i, n, cond=cond)
    with pytest.raises(opkit.EnforceNotMet, match="array_read"):
        opkit.Executor().run(main, scope=opkit.Scope())
