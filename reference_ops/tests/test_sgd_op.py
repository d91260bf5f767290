import numpy as np

import opkit
from harness import OpTest


class TestSGDOp(OpTest):
    opkit_sparse_inputs = ["Grad"]   # check `sparse`: Grad as SelectedRows, duplicate rows

    def setUp(self):
        self.op_type = "sgd"
        rng = np.random.default_rng(901)
        self.inputs = {"Param": rng.uniform(-1, 1, (10, 20)).astype("float64"),
                       "Grad": rng.uniform(-1, 1, (10, 20)).astype("float64"),
                       "LearningRate": np.array([0.1], dtype="float64")}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"ParamOut": inputs["Param"] - inputs["LearningRate"][0] * inputs["Grad"]}

    def test_check_output(self):
        self.check_output()


def test_sgd_selected_rows_merges_duplicate_rows():
    rng = np.random.default_rng(902)
    param = rng.uniform(-1, 1, (10, 12)).astype("float64")
    rows = [7, 2, 7, 0, 2]
    values = rng.uniform(-1, 1, (len(rows), 12)).astype("float64")
    scope = opkit.Scope()
    scope.var("param").set_value(opkit.LoDTensor(param.copy()))
    scope.var("grad").set_value(opkit.SelectedRows(rows, 10, values))
    scope.var("lr").set_value(opkit.LoDTensor(np.array([0.5], dtype="float64")))
    program = opkit.Program()
    block = program.global_block()
    block.create_var(name="param", shape=[10, 12], dtype="float64", persistable=True)
    block.create_var(name="grad", shape=[10, 12], dtype="float64", persistable=True)
    block.create_var(name="lr", shape=[1], dtype="float64", persistable=True)
    block.append_op("sgd", inputs={"Param": "param", "Grad": "grad", "LearningRate": "lr"},
                    outputs={"ParamOut": "param"})
    opkit.Executor(opkit.CPUPlace()).run(program, scope=scope)
    expected = param.copy()
    dense = np.zeros_like(param)
    for r, v in zip(rows, values):
        dense[r] += v
    expected -= 0.5 * dense
    np.testing.assert_allclose(np.array(scope.find_var("param").value().data), expected,
                               rtol=1e-12, atol=1e-12)
