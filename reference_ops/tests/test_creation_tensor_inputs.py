"""fill_constant / uniform_random / gaussian_random with the shape given as ShapeTensor or
ShapeTensorList (priority over attr shape), fill_constant's ValueTensor, uniform_random's
diagonal init, and dtype attrs given as Paddle's VarType number (5 = float32, 6 = float64,
2 = int32, 3 = int64), fill_any_like's dtype."""
import numpy as np
import pytest
from harness import OpTest

import opkit


def _run(op_type, inputs, attrs, out_dtype="float32"):
    program = opkit.Program()
    block = program.global_block()
    feed, ins = {}, {}
    for slot, value in inputs.items():
        if isinstance(value, list):
            names = []
            for i, v in enumerate(value):
                name = f"{slot}_{i}"
                block.create_var(name=name, dtype=str(v.dtype), shape=list(v.shape))
                feed[name] = v
                names.append(name)
            ins[slot] = names
        else:
            block.create_var(name=slot, dtype=str(value.dtype), shape=list(value.shape))
            feed[slot] = value
            ins[slot] = [slot]
    out = block.create_var(name="out", dtype=out_dtype)
    block.append_op(op_type, inputs=ins, outputs={"Out": out}, attrs=attrs)
    (value,) = opkit.Executor(opkit.CPUPlace()).run(program, feed=feed, fetch_list=[out])
    return value


class TestFillConstantShapeTensor(OpTest):
    def setUp(self):
        self.op_type = "fill_constant"
        self.inputs = {"ShapeTensor": np.array([3, 4], dtype="int32")}
        self.attrs = {"shape": [7], "value": 2.5}
        self.outputs = {"Out": np.full((3, 4), 2.5, dtype="float32")}

    def test_check_output(self):
        self.check_output()


class TestFillConstantShapeTensorListValueTensor(OpTest):
    def setUp(self):
        self.op_type = "fill_constant"
        self.inputs = {"ShapeTensorList": [("d0", np.array([2], dtype="int64")),
                                           ("d1", np.array([5], dtype="int64"))],
                       "ValueTensor": np.array([4.0], dtype="float32")}
        self.attrs = {"shape": [1, 1], "value": 1.0, "dtype": 2}     # 2: int32
        self.outputs = {"Out": np.full((2, 5), 4, dtype="int32")}

    def test_check_output(self):
        self.check_output()


@pytest.mark.parametrize("number, name", [(5, "float32"), (6, "float64"), (3, "int64")])
def test_fill_constant_dtype_var_type_number(number, name):
    v = _run("fill_constant", {}, {"shape": [2, 3], "value": 7.0, "dtype": number}, name)
    assert v.dtype == np.dtype(name) and v.shape == (2, 3) and np.all(v == 7)


def test_unknown_var_type_number_is_a_clear_error():
    with pytest.raises(opkit.EnforceNotMet, match="VarType"):
        _run("fill_constant", {}, {"shape": [2], "dtype": 17})


@pytest.mark.parametrize("op_type", ["uniform_random", "gaussian_random"])
@pytest.mark.parametrize("slot", ["ShapeTensor", "ShapeTensorList"])
def test_random_ops_take_the_shape_from_tensors(op_type, slot):
    shape = np.array([40, 30], dtype="int64")
    value = shape if slot == "ShapeTensor" else [shape[:1], shape[1:]]
    v = _run(op_type, {slot: value}, {"shape": [1], "seed": 7, "dtype": 6}, "float64")
    assert v.shape == (40, 30) and v.dtype == np.float64
    assert len(np.unique(v)) > 1000


def test_uniform_random_diag_init():
    v = _run("uniform_random", {}, {"shape": [6, 8], "min": -5.0, "max": -1.0, "seed": 3,
                                    "diag_num": 5, "diag_step": 8, "diag_val": 2.0})
    flat = v.reshape(-1)
    diag = [i * 8 + i for i in range(5)]
    assert np.all(flat[diag] == 2.0)
    assert np.all(np.delete(flat, diag) < -1.0)


class TestFillAnyLikeDtypeNumber(OpTest):
    def setUp(self):
        self.op_type = "fill_any_like"
        self.inputs = {"X": np.ones((3, 4), dtype="int32")}
        self.attrs = {"value": 1.5, "dtype": 5}                       # 5: float32
        self.outputs = {"Out": np.full((3, 4), 1.5, dtype="float32")}

    def test_check_output(self):
        self.check_output()


class TestFillAnyLikeDtypeMinusOneIsX(OpTest):
    def setUp(self):
        self.op_type = "fill_any_like"
        self.inputs = {"X": np.ones((3, 4), dtype="float64")}
        self.attrs = {"value": 3.0, "dtype": -1}
        self.outputs = {"Out": np.full((3, 4), 3.0)}

    def test_check_output(self):
        self.check_output()


@pytest.mark.parametrize("text, dtype, expected", [("1e-40", "float64", 1e-40),
                                                   ("inf", "float32", np.inf),
                                                   ("9007199254740993", "int64",
                                                    9007199254740993)])
def test_fill_constant_str_value_takes_priority(text, dtype, expected):
    v = _run("fill_constant", {}, {"shape": [2], "value": 3.0, "str_value": text,
                                   "dtype": dtype, "force_cpu": True}, dtype)
    assert v.dtype == np.dtype(dtype) and v[0] == expected and v[1] == expected


def test_fill_constant_bad_str_value_is_a_clear_error():
    with pytest.raises(opkit.EnforceNotMet, match="str_value"):
        _run("fill_constant", {}, {"shape": [2], "str_value": "abc"})


@pytest.mark.parametrize("value, dtype", [(1e100, "int32"), (float("nan"), "float32"),
                                          (1e300, "float32"), (3e9, "int32")])
def test_fill_any_like_value_out_of_range_is_a_clear_error(value, dtype):
    with pytest.raises(opkit.EnforceNotMet, match="out of range"):
        _run("fill_any_like", {"X": np.ones((2, 3), dtype=dtype)}, {"value": value}, dtype)


def test_fill_any_like_value_at_the_edge_of_int32():
    v = _run("fill_any_like", {"X": np.ones((2,), dtype="int32")},
             {"value": float(2 ** 31 - 1)}, "int32")
    assert v.tolist() == [2 ** 31 - 1] * 2
