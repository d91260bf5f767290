"""reduce_sum / _mean / _max / _min / _prod: dim (negative too), keep_dim, reduce_all, the
[1]-shaped result of a full reduction; gradients checked numerically (max/min on distinct
values, prod on values away from 0)."""
import numpy as np
from harness import OpTest

FNS = {"reduce_sum": np.sum, "reduce_mean": np.mean, "reduce_max": np.max,
       "reduce_min": np.min, "reduce_prod": np.prod}


class _Reduce:
    op = "reduce_sum"
    shape, dim, keep_dim, reduce_all = (3, 4, 5), [1], False, False

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(3001)
        size = int(np.prod(self.shape))
        # distinct values 1/size apart in [0.5, 1.5): no ties for max/min, no 0 for prod
        x = (0.5 + rng.permutation(size) / size).reshape(self.shape)
        self.inputs = {"X": x}
        self.attrs = {"dim": self.dim, "keep_dim": self.keep_dim,
                      "reduce_all": self.reduce_all}
        axis = None if self.reduce_all else tuple(self.dim)
        out = FNS[self.op](x, axis=axis, keepdims=self.keep_dim)
        if np.ndim(out) == 0:
            out = np.reshape(out, (1,))
        self.outputs = {"Out": out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestReduceSum(_Reduce, OpTest):
    pass


class TestReduceSumKeepDimNegative(_Reduce, OpTest):
    dim, keep_dim = [-1, 0], True


class TestReduceSumAll(_Reduce, OpTest):
    reduce_all = True


class TestReduceMean(_Reduce, OpTest):
    op, dim = "reduce_mean", [0, 2]


class TestReduceMeanAllDimsListed(_Reduce, OpTest):
    op, dim = "reduce_mean", [0, 1, 2]


class TestReduceMax(_Reduce, OpTest):
    op, dim = "reduce_max", [2]


class TestReduceMaxKeepAll(_Reduce, OpTest):
    op, keep_dim, reduce_all = "reduce_max", True, True


class TestReduceMin(_Reduce, OpTest):
    op, dim = "reduce_min", [-2]


class TestReduceProd(_Reduce, OpTest):
    op, shape, dim = "reduce_prod", (4, 3), [1]


class TestReduceSumInt64(OpTest):
    def setUp(self):
        self.op_type = "reduce_sum"
        x = np.random.default_rng(3002).integers(-5, 5, (4, 6)).astype("int64")
        self.inputs = {"X": x}
        self.attrs = {"dim": [0]}
        self.outputs = {"Out": x.sum(axis=0)}

    def test_check_output(self):
        self.check_output()
