import numpy as np
from harness import OpTest


class TestBrokenAliasIdentity(OpTest):
    op = "broken_alias_identity"

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(18).uniform(-1, 1, (4, 5))
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].copy()}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestGoodAliasIdentity(TestBrokenAliasIdentity):
    op = "good_alias_identity"
