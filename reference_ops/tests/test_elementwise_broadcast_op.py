"""elementwise_add / _sub / _mul: Paddle's general broadcast (either input broadcasts,
rank(Y) > rank(X) with `axis`), outputs and gradients against numpy broadcasting."""
import numpy as np
import pytest
from harness import OpTest

from opkit import errors
from reference_ops._common import elementwise_broadcast

FNS = {"elementwise_add": np.add, "elementwise_sub": np.subtract,
       "elementwise_mul": np.multiply}


def aligned(shape, rank, axis):
    return (1,) * axis + tuple(shape) + (1,) * (rank - axis - len(shape))


class _Broadcast:
    op = "elementwise_add"
    x_shape, y_shape, axis = (1, 1, 5, 4), (5, 4, 1, 1), -1

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(2501)
        x = rng.uniform(0.5, 1.5, self.x_shape)
        y = rng.uniform(0.5, 1.5, self.y_shape)
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"axis": self.axis}
        rank = max(x.ndim, y.ndim)
        axis = abs(x.ndim - y.ndim) if self.axis == -1 else self.axis
        xa = x.reshape(aligned(x.shape, rank, axis)) if x.ndim < rank else x
        ya = y.reshape(aligned(y.shape, rank, axis)) if y.ndim < rank else y
        self.outputs = {"Out": FNS[self.op](xa, ya)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")

    def test_check_grad_ignore_x(self):
        self.check_grad(["Y"], "Out", no_grad_set={"X"})


class TestAddBothBroadcast(_Broadcast, OpTest):
    pass


class TestAddSameRankCommon(_Broadcast, OpTest):
    x_shape, y_shape = (3, 2, 1, 4), (3, 1, 5, 1)


class TestAddYRankGreater(_Broadcast, OpTest):
    x_shape, y_shape, axis = (5, 4), (2, 3, 5, 4), 2


class TestSubYRankGreaterAxis1(_Broadcast, OpTest):
    op = "elementwise_sub"
    x_shape, y_shape, axis = (3,), (2, 3, 4), 1


class TestSubBothBroadcast(_Broadcast, OpTest):
    op = "elementwise_sub"
    x_shape, y_shape = (4, 1, 3), (4, 5, 1)


class TestMulYRankGreaterDefaultAxis(_Broadcast, OpTest):
    op = "elementwise_mul"
    x_shape, y_shape = (5, 1), (3, 4, 5, 6)


class TestMulXBroadcastsOnly(_Broadcast, OpTest):
    op = "elementwise_mul"
    x_shape, y_shape = (2, 1, 4), (2, 3, 4)


def test_broadcast_shapes():
    assert elementwise_broadcast([1, 1, 5, 4], [5, 4, 1, 1], -1)[2] == [5, 4, 5, 4]
    assert elementwise_broadcast([5, 4], [2, 3, 5, 4], 2) == (
        [1, 1, 5, 4], [2, 3, 5, 4], [2, 3, 5, 4])
    # the old rule still holds: trailing 1s of Y dropped when it would not fit
    assert elementwise_broadcast([2, 3], [3, 1], 1) == ([2, 3], [1, 3], [2, 3])
    # unknown dims are not compared
    assert elementwise_broadcast([-1, 3], [1, 3], -1)[2] == [-1, 3]


@pytest.mark.parametrize("x, y, axis", [((2, 3), (4, 3), -1), ((2, 3, 4), (3, 5), 1),
                                        ((2, 3), (3,), 2)])
def test_broadcast_mismatch_is_a_clear_error(x, y, axis):
    with pytest.raises(errors.InvalidArgument, match="shape"):
        elementwise_broadcast(x, y, axis)
