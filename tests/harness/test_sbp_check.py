"""Declared parallel signatures (opkit.sbp) and the `sbp` check (opkit_fluid/checks/sbp.py).

The declaration: templates, their resolution against logical shapes and attrs, physical
shapes (OneFlow's balanced split), and the errors of a bad declaration. The check: split /
broadcast / partial_sum inputs on 2 and 3 simulated devices, merge, compare; and bug kinds
that the broken ops of tests/broken_ops/sbp_breakers_op.py were not designed for (a kernel
pairing neighbouring rows, a running sum across the split, a per-device broadcast that is
not the same everywhere, a signature that leaves a slot out or names an axis out of range).
"""
from __future__ import annotations

import numpy as np
import pytest

from harness.backend.case import Case
from harness.backend.context import CheckContext
from opkit_fluid.checks.sbp import CHECK
from opkit import (OperatorWithKernel, OpMaker, errors, grad_var_name, register_kernel,
                   register_operator, register_sbp)
from opkit.sbp import (Axis, SbpContext, Signature, Where, broadcast, not_attr_axis,
                       partial_sum, physical_shape, sbp_signatures, split, split_bounds)


# -- the declaration ---------------------------------------------------------------------------
def test_balanced_split_gives_the_first_devices_one_more():
    assert split_bounds(5, 3) == [(0, 2), (2, 4), (4, 5)]
    assert split_bounds(6, 2) == [(0, 3), (3, 6)]
    assert physical_shape((5, 4), split(0).__class__("S", 0), 3, 2) == (1, 4)
    assert physical_shape((5, 4), broadcast, 3, 1) == (5, 4)
    assert physical_shape((5, 4), partial_sum, 3, 1) == (5, 4)


def test_template_resolves_per_axis_with_conditions_and_relative_axes():
    ctx = SbpContext("softmax", {"X": [(2, 3, 4)], "Out": [(2, 3, 4)]}, {"axis": -1})
    sig = Signature({"X": split("i"), "Out": split("i")}, each="X",
                    where=not_attr_axis("axis"))
    assert [i.text() for i in sig.resolve(ctx)] == ["Out:S(0) X:S(0)", "Out:S(1) X:S(1)"]
    assert sig.text() == "for i in axes(X) if i != attr(axis): Out:S(i) X:S(i)"
    last = Signature({"X": split(-1), "Out": partial_sum})
    assert last.resolve(ctx)[0].specs["X"].axis == 2          # -1: relative to X's rank
    odd = Axis("P when odd", lambda c, i: partial_sum if i % 2 else i)
    got = Signature({"X": split("i"), "Out": split(odd)}, each="X").resolve(ctx)
    assert [i.text() for i in got] == ["Out:S(0) X:S(0)", "Out:P X:S(1)", "Out:S(2) X:S(2)"]
    absent = Signature({"X": split(0), "Bias": broadcast, "Out": split(0)}).resolve(ctx)
    assert set(absent[0].specs) == {"X", "Out"}                # absent slots are left out


@pytest.mark.parametrize("make, words", [
    (lambda: split("j"), "axis must be an int"),
    (lambda: split(True), "axis must be an int"),
    (lambda: Signature({"X": split("i")}), "no each=SLOT"),
    (lambda: Signature({"X": "S(0)"}), "use split(axis), broadcast or partial_sum"),
    (lambda: Signature({}), "non-empty"),
    (lambda: Signature({"X": broadcast}, where=lambda c, i: True), "opkit.sbp.Where"),
    (lambda: register_sbp("softmax", Signature({"Q": split(0)})), "slot 'Q'"),
    (lambda: register_sbp("softmax", "X:S(0)"), "Signature objects"),
])
def test_bad_declarations_are_refused_with_a_message(make, words):
    from opkit.registry import op_info

    op_info("softmax")      # registered: its slots are known
    before = sbp_signatures("softmax")
    with pytest.raises(errors.InvalidArgument) as err:
        make()
    assert words in str(err.value)
    assert sbp_signatures("softmax") == before


def test_builtin_declarations_are_registered():
    assert sbp_signatures("accuracy") is None
    texts = {s.text() for s in sbp_signatures("softmax")}
    assert texts == {"for i in axes(X) if i != attr(axis): Out:S(i) X:S(i)"}
    assert any("Out:P" in s.text() for s in sbp_signatures("reduce_sum"))
    assert not any("Out:P" in s.text() and "S(i)" in s.text()
                   for s in sbp_signatures("reduce_mean"))     # a mean is no partial sum


# -- the check on small ops registered for the test -------------------------------------------
class _Maker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_input("Y", "(Tensor) second input.").as_dispensable()
        self.add_output("Out", "(Tensor) output.")
        self.add_comment("a test op")


def _op(op_type, fn, out_shape=lambda d: d):
    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", out_shape(list(ctx.get_input_dim("X"))))

    register_operator(op_type, Op, _Maker)
    register_kernel(op_type, dtypes=("float64", "int64"))(
        lambda ctx: ctx.set_output("Out", fn(ctx)))


def _run(op_type, inputs, outputs=None):
    case = Case(f"Test_{op_type}", op_type, inputs, {}, outputs or {})
    return CHECK(case, CheckContext())


def _status(results):
    return [r.status for r in results]


def test_undeclared_op_is_a_skip_with_the_reason(ops):
    _op("t_plain", lambda ctx: ctx.input("X") * 2)
    got = _run("t_plain", {"X": np.ones((4, 3))})
    assert _status(got) == ["skip"] and "declares no parallel signatures" in got[0].message


def test_right_declaration_passes_on_two_and_three_devices(ops):
    _op("t_double", lambda ctx: ctx.input("X") * 2)
    register_sbp("t_double", Signature({"X": split("i"), "Out": split("i")}, each="X"),
                 Signature({"X": partial_sum, "Out": partial_sum}))
    got = _run("t_double", {"X": np.random.default_rng(0).uniform(-1, 1, (5, 7))})
    assert _status(got) == ["pass"], got
    assert "3 signature(s) x 2 device counts" in got[0].message


def test_integer_partial_sums_pass(ops):
    _op("t_int_neg", lambda ctx: -ctx.input("X"))
    register_sbp("t_int_neg", Signature({"X": partial_sum, "Out": partial_sum}))
    got = _run("t_int_neg", {"X": np.arange(12, dtype=np.int64).reshape(3, 4)})
    assert _status(got) == ["pass"], got


def test_kernel_pairing_neighbour_rows_fails_on_an_uneven_split(ops):
    # Out[k] = X[2k] + X[2k+1]: 8 rows split over 2 devices is 4 + 4 (pairs intact); over 3
    # it is 3 + 3 + 2 and the pairs straddle devices
    _op("t_pairs", lambda ctx: ctx.input("X")[0::2] + ctx.input("X")[1::2],
        out_shape=lambda d: [d[0] // 2] + d[1:])
    register_sbp("t_pairs", Signature({"X": split(0), "Out": split(0)}))
    got = _run("t_pairs", {"X": np.random.default_rng(1).uniform(-1, 1, (8, 2))})
    assert _status(got) == ["fail"], got
    assert "on 3 devices" in got[0].message and "'Out:S(0) X:S(0)'" in got[0].message


def test_running_sum_across_the_split_names_the_device_and_element(ops):
    _op("t_cumsum", lambda ctx: np.cumsum(ctx.input("X"), axis=0))
    register_sbp("t_cumsum", Signature({"X": split(1), "Out": split(1)}),
                 Signature({"X": split(0), "Out": split(0)}))     # wrong: rows depend
    x = np.random.default_rng(2).uniform(0.5, 1, (4, 3))
    got = _run("t_cumsum", {"X": x})
    assert _status(got) == ["fail"], got
    msg = got[0].message
    assert "signature 'Out:S(0) X:S(0)' on 2 devices" in msg
    assert "Out[2, 0]" in msg and "device 1 computed it, its element [0, 0]" in msg
    assert got[0].kind == "wrong-value"


def test_broadcast_output_that_differs_per_device_fails(ops):
    _op("t_total", lambda ctx: np.full((1,), ctx.input("X").sum()), out_shape=lambda d: [1])
    register_sbp("t_total", Signature({"X": split(0), "Out": broadcast}))   # wrong: P
    got = _run("t_total", {"X": np.random.default_rng(3).uniform(0, 1, (6, 2))})
    assert _status(got) == ["fail"] and "broadcast output 'Out' differs on device 0" in \
        got[0].message


def test_signature_leaving_a_slot_out_fails(ops):
    _op("t_add", lambda ctx: ctx.input("X") + ctx.input("Y"))
    register_sbp("t_add", Signature({"X": split(0), "Out": split(0)}))
    got = _run("t_add", {"X": np.ones((4, 2)), "Y": np.ones((4, 2))})
    assert _status(got) == ["fail"] and "does not say how 'Y' is distributed" in got[0].message


def test_axis_out_of_range_fails_naming_the_signature(ops):
    _op("t_copy", lambda ctx: ctx.input("X").copy())
    register_sbp("t_copy", Signature({"X": split(3), "Out": split(3)}))
    got = _run("t_copy", {"X": np.ones((4, 2))})
    assert _status(got) == ["fail"] and "split axis 3 of slot" in got[0].message


def test_axis_smaller_than_the_device_count_is_left_out(ops):
    _op("t_copy1", lambda ctx: ctx.input("X").copy())
    register_sbp("t_copy1", Signature({"X": split("i"), "Out": split("i")}, each="X"))
    got = _run("t_copy1", {"X": np.ones((1, 1))})
    assert _status(got) == ["skip"] and "no signature can run" in got[0].message
    got = _run("t_copy1", {"X": np.ones((2, 4))})
    assert _status(got) == ["pass"] and "1 left out" in got[0].message


def test_split_of_a_size_one_output_is_left_out(ops):
    _op("t_total2", lambda ctx: np.full((1,), ctx.input("X").sum()), out_shape=lambda d: [1])
    register_sbp("t_total2", Signature({"X": split(1), "Out": split(0)}))
    got = _run("t_total2", {"X": np.ones((2, 6))})
    # Out has 1 element: split along it is left out on 2 and 3 devices, nothing runs
    assert _status(got) == ["skip"]


def test_grad_op_signature_is_checked_with_the_gradients(ops):
    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))

    class GradOp(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))

    from opkit import DefaultGradOpMaker

    register_operator("t_sq", Op, _Maker, grad_maker=DefaultGradOpMaker)
    register_operator("t_sq_grad", GradOp)
    register_kernel("t_sq", dtypes="float64")(
        lambda ctx: ctx.set_output("Out", ctx.input("X") ** 2))
    register_kernel("t_sq_grad", dtypes="float64")(lambda ctx: ctx.set_output(
        grad_var_name("X"), 2 * ctx.input("X") * ctx.input(grad_var_name("Out"))))
    register_sbp("t_sq", Signature({"X": split("i"), "Out": split("i")}, each="X"))
    g = grad_var_name
    register_sbp("t_sq_grad",      # wrong: 2 X dOut is not linear in X and dOut at once
                 Signature({"X": partial_sum, "Out": broadcast, g("Out"): partial_sum,
                            g("X"): partial_sum}))
    x = np.random.default_rng(4).uniform(-1, 1, (4, 3))
    case = Case("Test_t_sq", "t_sq", {"X": x}, {}, {"Out": x ** 2}, grad_inputs=["X"],
                grad_outputs=["Out"])
    got = CHECK(case, CheckContext())
    assert _status(got) == ["pass", "fail"], got
    assert "op 't_sq_grad', signature 'Out:B Out@GRAD:P X:P X@GRAD:P'" in got[1].message


def test_generated_cases_are_left_to_the_optest_cases(ops):
    _op("t_double2", lambda ctx: ctx.input("X") * 2)
    register_sbp("t_double2", Signature({"X": split(0), "Out": split(0)}))
    case = Case("Test_gen", "t_double2", {"X": np.ones((4, 2))}, {}, {})
    got = CHECK(case, CheckContext(generated=True))
    assert _status(got) == ["skip"] and "generated case" in got[0].message


def test_where_condition_is_part_of_the_text():
    w = Where("attr(bias) == 0", lambda c, i: True)
    assert Signature({"X": partial_sum, "Out": partial_sum}, where=w).text() == \
        "if attr(bias) == 0: Out:P X:P"


def test_attr_axis_conditions():
    from opkit.sbp import attr_axes, not_attr_axes

    ctx = SbpContext("reduce_sum", {"X": [(2, 3, 4)]},
                     {"dim": [-1, 0], "reduce_all": False})
    assert [i for i in range(3) if attr_axes("dim", all_attr="reduce_all").fn(ctx, i)] == [0, 2]
    assert [i for i in range(3) if not_attr_axes("dim").fn(ctx, i)] == [1]
    ctx.attrs["reduce_all"] = True
    assert [i for i in range(3) if attr_axes("dim", all_attr="reduce_all").fn(ctx, i)] == \
        [0, 1, 2]
    assert attr_axes("dim", all_attr="reduce_all").label == "i in attr(dim) or attr(reduce_all)"
