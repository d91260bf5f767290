"""OpTests of the red team's custom ops (red_team_ops.py), one per broken op and one per
twin, on the same sample: run them with
`opkit test --all --backend torch --ops tests/torch_backend/red_team/red_team_ops.py
--tests tests/torch_backend/red_team`."""
import numpy as np

from harness import OpTest


def _x(seed=0, shape=(3, 4), low=-2.0, high=2.0):
    return np.random.default_rng(seed).uniform(low, high, shape)


class _Unary:
    """`rt::<name>` and `rt::<name>_ok` on one input x (a mixin: not collected itself)."""

    grad = True
    low, high = -2.0, 2.0

    def setUp(self):
        self.op_type = f"rt::{self.name}"
        self.inputs = {"x": _x(self.seed, (3, 4), self.low, self.high)}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        if self.grad:
            self.check_grad(["x"], "out")


def _pair(name, seed, reference, **extra):
    def ref(self, inputs, attrs):
        return {"out": reference(inputs["x"])}

    body = dict(name=name, seed=seed, reference=ref, **extra)
    broken = type(f"Test_{name}", (_Unary, OpTest), body)
    twin = type(f"Test_{name}_ok", (_Unary, OpTest), dict(body, name=name + "_ok"))
    return broken, twin


Test_softsign_bad_grad, Test_softsign_bad_grad_ok = _pair(
    "softsign_bad_grad", 1, lambda x: x / (1 + np.abs(x)))
Test_square_bad_fake, Test_square_bad_fake_ok = _pair("square_bad_fake", 2, lambda x: x * x)
Test_scale_inplace_undeclared, Test_scale_inplace_undeclared_ok = _pair(
    "scale_inplace_undeclared", 3, lambda x: 2 * x)
Test_flatten_view, Test_flatten_view_ok = _pair("flatten_view", 4, lambda x: x.reshape(-1),
                                                grad=False)
Test_running_sum_stale, Test_running_sum_stale_ok = _pair(
    "running_sum_stale", 5, lambda x: np.cumsum(x, -1))
Test_row_scale_contiguous_only, Test_row_scale_contiguous_only_ok = _pair(
    "row_scale_contiguous_only", 6, lambda x: x * np.arange(1, x.shape[-1] + 1))
Test_center_rows_empty, Test_center_rows_empty_ok = _pair(
    "center_rows_empty", 8, lambda x: x - x.max(-1, keepdims=True) + x.max(), grad=False)
Test_expm1_low_precision, Test_expm1_low_precision_ok = _pair(
    "expm1_low_precision", 9, np.expm1, low=-1e-3, high=1e-3)


class _Mul:
    def setUp(self):
        self.op_type = f"rt::{self.name}"
        self.inputs = {"x": _x(7), "y": _x(17)}
        self.attrs = {}
        self.outputs = {"out": self.inputs["x"] * self.inputs["y"]}

    def reference(self, inputs, attrs):
        return {"out": inputs["x"] * inputs["y"]}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["x", "y"], "out")

    def test_check_grad_x_only(self):
        self.check_grad(["x"], "out", no_grad_set={"y"})


class Test_mul_partial_grad(_Mul, OpTest):
    name = "mul_partial_grad"


class Test_mul_partial_grad_ok(_Mul, OpTest):
    name = "mul_partial_grad_ok"
