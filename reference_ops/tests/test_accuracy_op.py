import numpy as np
from harness import OpTest


class TestAccuracyOp(OpTest):
    def setUp(self):
        self.op_type = "accuracy"
        rng = np.random.default_rng(1201)
        n, k = 100, 3
        scores = rng.uniform(0, 1, (n, k)).astype("float64")
        indices = rng.integers(0, 6, (n, k)).astype("int64")
        label = rng.integers(0, 6, (n, 1)).astype("int64")
        self.inputs = {"Out": scores, "Indices": indices, "Label": label}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        indices, label = inputs["Indices"], inputs["Label"]
        correct = int(sum(label[i, 0] in indices[i] for i in range(indices.shape[0])))
        total = indices.shape[0]
        return {"Accuracy": np.array([correct / total], dtype="float32"),
                "Correct": np.array([correct], dtype="int32"),
                "Total": np.array([total], dtype="int32")}

    def test_check_output(self):
        self.check_output()
