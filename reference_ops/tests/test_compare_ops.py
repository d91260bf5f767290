"""equal, not_equal, greater_than, greater_equal, less_equal: float and integer inputs,
ties included (so that > and >=, < and <= differ), and Y broadcast from axis."""
import numpy as np
from harness import OpTest


class _Compare:
    op_type_ = "equal"
    fn = staticmethod(np.equal)
    dtype = "float64"
    y_shape, axis = (6, 7), -1

    def setUp(self):
        self.op_type = self.op_type_
        rng = np.random.default_rng(2901)
        if self.dtype.startswith("int"):
            x = rng.integers(-3, 3, (6, 7)).astype(self.dtype)
            y = rng.integers(-3, 3, self.y_shape).astype(self.dtype)
        else:
            x = rng.uniform(-1, 1, (6, 7)).astype(self.dtype)
            y = rng.uniform(-1, 1, self.y_shape).astype(self.dtype)
            if y.shape == x.shape:
                y[::2] = x[::2]          # ties
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"axis": self.axis}
        view = y.shape + (1,) * (x.ndim - self.axis - y.ndim) if self.axis >= 0 else y.shape
        self.outputs = {"Out": type(self).fn(x, y.reshape(view))}

    def test_check_output(self):
        self.check_output()


class TestEqual(_Compare, OpTest):
    pass


class TestEqualInt32(_Compare, OpTest):
    dtype = "int32"


class TestNotEqual(_Compare, OpTest):
    op_type_, fn = "not_equal", staticmethod(np.not_equal)


class TestNotEqualInt64(_Compare, OpTest):
    op_type_, fn, dtype = "not_equal", staticmethod(np.not_equal), "int64"


class TestGreaterThan(_Compare, OpTest):
    op_type_, fn = "greater_than", staticmethod(np.greater)


class TestGreaterThanInt64(_Compare, OpTest):
    op_type_, fn, dtype = "greater_than", staticmethod(np.greater), "int64"


class TestGreaterEqual(_Compare, OpTest):
    op_type_, fn = "greater_equal", staticmethod(np.greater_equal)


class TestGreaterEqualInt32(_Compare, OpTest):
    op_type_, fn, dtype = "greater_equal", staticmethod(np.greater_equal), "int32"


class TestLessEqual(_Compare, OpTest):
    op_type_, fn = "less_equal", staticmethod(np.less_equal)


class TestLessEqualInt32(_Compare, OpTest):
    op_type_, fn, dtype = "less_equal", staticmethod(np.less_equal), "int32"


class TestLessEqualBroadcastAxis0(_Compare, OpTest):
    op_type_, fn = "less_equal", staticmethod(np.less_equal)
    y_shape, axis = (6,), 0
