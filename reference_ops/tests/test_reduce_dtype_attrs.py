"""The reduce ops' in_dtype / out_dtype attrs (Paddle 2.x): out_dtype casts X and reduces in
that dtype (Out has it), in_dtype is the dtype Out@GRAD is cast to before X@GRAD is made
(X@GRAD keeps X's dtype); -1 means no cast. Values Paddle has no kernel for are rejected."""
import numpy as np
import pytest

import opkit

FP32, FP64, INT64 = 5, 6, 3


def _run(op_type, inputs, outputs, attrs):
    scope = opkit.Scope()
    for name, value in inputs.items():
        scope.var(name).get_tensor().set(value, opkit.CPUPlace())
    for name in outputs.values():
        scope.var(name)
    op = opkit.create_op(op_type, {k: k for k in inputs}, outputs, attrs)
    op.run(scope, opkit.CPUPlace())
    return {slot: scope.find_var(name).get_tensor().numpy() for slot, name in outputs.items()}


def test_out_dtype_float64_sums_float32_input_in_float64():
    # 1e8 + 24 ones: in float32 each +1 is lost (spacing 8 at 1e8); in float64 none is
    x = np.concatenate([[1e8], np.ones(24)]).astype("float32")
    plain = _run("reduce_sum", {"X": x}, {"Out": "out"}, {"reduce_all": True})["Out"]
    assert plain.dtype == np.float32
    out = _run("reduce_sum", {"X": x}, {"Out": "out"},
               {"reduce_all": True, "out_dtype": FP64})["Out"]
    assert out.dtype == np.float64
    assert out.tolist() == [1e8 + 24]


@pytest.mark.parametrize("op_type,fn", [("reduce_mean", np.mean), ("reduce_max", np.max),
                                        ("reduce_prod", np.prod)])
def test_out_dtype_float32_of_float64_input(op_type, fn):
    x = np.random.default_rng(7).uniform(0.5, 1.5, (3, 4))
    out = _run(op_type, {"X": x}, {"Out": "out"}, {"dim": [1], "out_dtype": FP32})["Out"]
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, fn(x.astype("float32"), axis=1), rtol=1e-6)


def test_out_dtype_int64_of_float_input_truncates_before_summing():
    x = np.array([[1.7, 2.9], [-1.5, 0.2]])
    out = _run("reduce_sum", {"X": x}, {"Out": "out"}, {"dim": [1], "out_dtype": INT64})["Out"]
    assert out.dtype == np.int64 and out.tolist() == [3, -1]


@pytest.mark.parametrize("in_dtype", [-1, FP32, FP64])
def test_grad_keeps_x_dtype_with_in_and_out_dtype(in_dtype):
    x = np.random.default_rng(8).random((2, 3)).astype("float64")
    dout = np.array([0.1, 1e-12 + 1.0], dtype="float64")
    grads = _run("reduce_sum_grad", {"X": x, "Out@GRAD": dout}, {"X@GRAD": "dx"},
                 {"dim": [1], "keep_dim": False, "reduce_all": False,
                  "in_dtype": in_dtype, "out_dtype": FP64})["X@GRAD"]
    assert grads.dtype == np.float64
    expected = dout.astype(np.float32 if in_dtype == FP32 else np.float64)
    np.testing.assert_array_equal(grads, np.repeat(expected[:, None].astype("float64"), 3, 1))


class TestReduceSumOutDtypeOpTest(__import__("harness").OpTest):
    """The OpTest path: output and numeric gradient with the attrs Paddle 2.x's tests set."""

    def setUp(self):
        self.op_type = "reduce_sum"
        x = np.random.default_rng(9).random((6, 2, 10))
        self.inputs = {"X": x}
        self.attrs = {"dim": [1], "keep_dim": True, "in_dtype": FP32, "out_dtype": FP64}
        self.outputs = {"Out": x.sum(axis=1, keepdims=True)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


@pytest.mark.parametrize("attr,value", [("out_dtype", 4), ("in_dtype", 7), ("out_dtype", 99)])
def test_unsupported_dtype_codes_are_rejected_by_name(attr, value):
    x = np.ones((2, 2))
    with pytest.raises(opkit.EnforceNotMet, match=attr):
        _run("reduce_sum", {"X": x}, {"Out": "out"}, {attr: value})
