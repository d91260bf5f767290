"""`describe` on Paddle's kernels (opkit_paddle.backend.checks.PaddleDescribe): Paddle's
compile-time dtype and shape against the kernel's tensor; 0-D and [1] are one shape."""
import numpy as np
import pytest

from paddle_backend_helpers import paddle_missing

# never `pytest.importorskip("paddle")` here: importing paddle before the backend's
# environment (opkit_paddle.backend.env: the legacy static graph) turns PIR on for every
# later test of this process
pytestmark = pytest.mark.skipif(paddle_missing() is not None, reason=str(paddle_missing()))

from opkit_paddle.backend.checks import REPLACED, _described  # noqa: E402


def test_describe_is_judged_on_paddle():
    assert REPLACED["describe"].name == "describe"


def test_wrong_dtype_and_shape_are_named():
    out = np.zeros((3,), dtype=np.int64)
    assert _described(([3], "bool", 0), out) is None     # a VarDesc dtype no one set
    assert "describes it as float32, the kernel produces int64" in \
        _described(([3], "float32", 0), out)
    assert "describes shape [3, 1]" not in (_described(([3, 1], "int64", 0), out) or "")
    assert "describes shape [4]" in _described(([4], "int64", 0), out)
    assert "describes shape [3, 2]" in _described(([3, 2], "int64", 0), out)


def test_the_fluid_bridge_and_unknown_dims_pass():
    assert _described(([], "float32", 0), np.zeros((1,), np.float32)) is None
    assert _described(([1], "float32", 0), np.zeros((), np.float32)) is None
    assert _described(([-1, 4], "float64", 0), np.zeros((7, 4))) is None
    assert _described(([2], "bfloat16", 0), np.zeros((2,), np.uint16)) is None
