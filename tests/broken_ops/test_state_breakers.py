import numpy as np
from harness import OpTest


class _Case:
    """Shared setUp (a mixin: not an OpTest itself)."""

    op = ""
    attrs_ = {}
    shape = (4, 5)
    seed = 21

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(self.seed).uniform(-1, 1, self.shape)
        self.inputs = {"X": x}
        self.attrs = {k: (list(v) if isinstance(v, list) else v) for k, v in self.attrs_.items()}
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestBrokenBufferCache(_Case, OpTest):
    op = "broken_buffer_cache"

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * 2.0}


class TestGoodBufferCache(TestBrokenBufferCache):
    op = "good_buffer_cache"


class TestBrokenAttrSort(_Case, OpTest):
    op = "broken_attr_sort"
    attrs_ = {"axes": [2, 0]}
    shape = (3, 4, 5)

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"].sum(axis=(0, 2))}


class TestGoodAttrSort(TestBrokenAttrSort):
    op = "good_attr_sort"


class TestBrokenScaleCache(_Case, OpTest):
    op = "broken_scale_cache"
    attrs_ = {"factor": 2.0}

    def reference(self, inputs, attrs):
        return {"Out": inputs["X"] * attrs["factor"]}


class TestBrokenScaleCacheOtherFactor(TestBrokenScaleCache):
    attrs_ = {"factor": -3.0}
    seed = 22


class TestGoodScaleCache(TestBrokenScaleCache):
    op = "good_scale_cache"


class TestGoodScaleCacheOtherFactor(TestBrokenScaleCacheOtherFactor):
    op = "good_scale_cache"


class TestBrokenF16Tanh(_Case, OpTest):
    op = "broken_f16_tanh"

    def reference(self, inputs, attrs):
        return {"Out": np.tanh(inputs["X"])}


class TestGoodF16Tanh(TestBrokenF16Tanh):
    op = "good_f16_tanh"
