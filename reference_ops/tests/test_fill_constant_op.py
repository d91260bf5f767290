import numpy as np

import opkit
from harness import OpTest


class TestFillConstantOp(OpTest):
    shape, value, dtype = [12, 13], 3.8, "float64"

    def setUp(self):
        self.op_type = "fill_constant"
        self.inputs = {}
        self.attrs = {"shape": self.shape, "value": self.value, "dtype": self.dtype}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": np.full(attrs["shape"], attrs["value"], dtype=attrs["dtype"])}

    def test_check_output(self):
        self.check_output()


class TestFillConstantOpFloat32(TestFillConstantOp):
    shape, value, dtype = [4, 5, 6], -1.5, "float32"


class TestFillConstantOpInt64(TestFillConstantOp):
    shape, value, dtype = [200], 7, "int64"


class TestFillConstantOpInt32(TestFillConstantOp):
    shape, value, dtype = [10, 10], 3, "int32"


class TestFillConstantOpBool(TestFillConstantOp):
    shape, value, dtype = [10, 11], 1, "bool"


def test_fill_constant_in_program_has_attr_dtype():
    program = opkit.Program()
    block = program.global_block()
    out = block.create_var(name="out", dtype="int64")
    block.append_op("fill_constant", outputs={"Out": out},
                    attrs={"shape": [3, 4], "value": 2.0, "dtype": "int64"})
    assert list(out.shape) == [3, 4]
    (value,) = opkit.Executor(opkit.CPUPlace()).run(program, fetch_list=[out])
    assert value.dtype == np.int64 and value.shape == (3, 4) and (value == 2).all()
