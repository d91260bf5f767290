"""OpTests of torch's pooling, normalisation, loss and matmul ops (aten). Several outputs
are out0, out1, ... unless the schema names them (nll_loss_forward: output, total_weight)."""
import numpy as np

from harness import OpTest


def _rng(seed):
    return np.random.default_rng(seed)


class TestMaxPool2dWithIndices(OpTest):
    def setUp(self):
        self.op_type = "aten::max_pool2d_with_indices"
        x = _rng(41).permutation(2 * 3 * 6 * 6).reshape(2, 3, 6, 6) / 10.0   # no ties
        self.inputs = {"self": x}
        self.attrs = {"kernel_size": [2, 2], "stride": [2, 2]}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        k = attrs["kernel_size"]
        s = attrs.get("stride") or k
        n, c, h, w = x.shape
        oh, ow = (h - k[0]) // s[0] + 1, (w - k[1]) // s[1] + 1
        out, idx = np.zeros((n, c, oh, ow)), np.zeros((n, c, oh, ow), np.int64)
        for i in range(oh):
            for j in range(ow):
                win = x[:, :, i * s[0]:i * s[0] + k[0], j * s[1]:j * s[1] + k[1]]
                flat = win.reshape(n, c, -1)
                a = flat.argmax(-1)
                out[:, :, i, j] = flat.max(-1)
                idx[:, :, i, j] = (i * s[0] + a // k[1]) * w + j * s[1] + a % k[1]
        return {"out0": out, "out1": idx}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out0")


class TestAvgPool2d(OpTest):
    def setUp(self):
        self.op_type = "aten::avg_pool2d"
        self.inputs = {"self": _rng(42).uniform(-1, 1, (2, 2, 5, 5))}
        self.attrs = {"kernel_size": [3, 3], "stride": [2, 2], "padding": [1, 1]}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        k, s = attrs["kernel_size"], attrs.get("stride") or attrs["kernel_size"]
        p = attrs.get("padding", [0, 0])
        p = [p, p] if isinstance(p, int) else p
        xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
        oh = (xp.shape[2] - k[0]) // s[0] + 1
        ow = (xp.shape[3] - k[1]) // s[1] + 1
        out = np.zeros(x.shape[:2] + (oh, ow))
        for i in range(oh):
            for j in range(ow):
                out[:, :, i, j] = xp[:, :, i * s[0]:i * s[0] + k[0],
                                     j * s[1]:j * s[1] + k[1]].mean(axis=(2, 3))
        return {"out": out}        # count_include_pad=True: the padding counts

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")


class TestAdaptiveAvgPool2d(OpTest):
    def setUp(self):
        self.op_type = "aten::_adaptive_avg_pool2d"
        self.inputs = {"self": _rng(43).uniform(-1, 1, (2, 3, 6, 4))}
        self.attrs = {"output_size": [3, 2]}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["self"]
        oh, ow = attrs["output_size"]
        n, c, h, w = x.shape
        return {"out": x.reshape(n, c, oh, h // oh, ow, w // ow).mean(axis=(3, 5))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")


class TestNativeLayerNorm(OpTest):
    def setUp(self):
        self.op_type = "aten::native_layer_norm"
        r = _rng(44)
        self.inputs = {"input": r.uniform(-1, 1, (3, 4, 5)), "weight": r.uniform(0.5, 1.5, 5),
                       "bias": r.uniform(-1, 1, 5)}
        self.attrs = {"normalized_shape": [5], "eps": 1e-5}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["input"]
        mean = x.mean(-1, keepdims=True)
        rstd = 1 / np.sqrt(x.var(-1, keepdims=True) + attrs["eps"])
        out = (x - mean) * rstd * inputs["weight"] + inputs["bias"]
        return {"out0": out, "out1": mean, "out2": rstd}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input", "weight", "bias"], "out0")


class TestNativeGroupNorm(OpTest):
    def setUp(self):
        self.op_type = "aten::native_group_norm"
        r = _rng(45)
        self.inputs = {"input": r.uniform(-1, 1, (2, 4, 3)), "weight": r.uniform(0.5, 1.5, 4),
                       "bias": r.uniform(-1, 1, 4)}
        self.attrs = {"N": 2, "C": 4, "HxW": 3, "group": 2, "eps": 1e-5}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["input"]
        n, g = attrs["N"], attrs["group"]
        xg = x.reshape(n, g, -1)
        mean = xg.mean(-1)
        rstd = 1 / np.sqrt(xg.var(-1) + attrs["eps"])
        y = ((xg - mean[..., None]) * rstd[..., None]).reshape(x.shape)
        y = y * inputs["weight"][None, :, None] + inputs["bias"][None, :, None]
        return {"out0": y, "out1": mean, "out2": rstd}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input", "weight", "bias"], "out0")


class _Loss:
    """A loss of `self` against `target` with reduction (0 none, 1 mean, 2 sum)."""

    low, high = -1.0, 1.0

    def setUp(self):
        r = _rng(self.seed)
        self.inputs = {"self": r.uniform(self.low, self.high, (4, 3)),
                       "target": r.uniform(self.low, self.high, (4, 3))}
        self.attrs = dict(self.given_attrs)
        self.outputs = self.reference(self.inputs, self.attrs)

    @staticmethod
    def reduce(loss, attrs):
        reduction = attrs.get("reduction", 1)
        return {"out": loss if reduction == 0 else
                np.array(loss.mean() if reduction == 1 else loss.sum())}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self", "target"], "out")


class TestMseLoss(_Loss, OpTest):
    op_type, seed, given_attrs = "aten::mse_loss", 46, {"reduction": 1}

    def reference(self, inputs, attrs):
        return self.reduce((inputs["self"] - inputs["target"]) ** 2, attrs)


class TestL1Loss(_Loss, OpTest):
    op_type, seed, given_attrs = "aten::l1_loss", 47, {"reduction": 2}

    def reference(self, inputs, attrs):
        return self.reduce(np.abs(inputs["self"] - inputs["target"]), attrs)


class TestSmoothL1Loss(_Loss, OpTest):
    op_type, seed, given_attrs = "aten::smooth_l1_loss", 48, {"reduction": 0, "beta": 0.5}

    def reference(self, inputs, attrs):
        d, b = np.abs(inputs["self"] - inputs["target"]), attrs.get("beta", 1.0)
        return self.reduce(np.where(d < b, 0.5 * d * d / b, d - 0.5 * b), attrs)


class TestHuberLoss(_Loss, OpTest):
    op_type, seed, given_attrs = "aten::huber_loss", 49, {"reduction": 1, "delta": 0.5}

    def reference(self, inputs, attrs):
        d, t = np.abs(inputs["self"] - inputs["target"]), attrs.get("delta", 1.0)
        return self.reduce(np.where(d < t, 0.5 * d * d, t * (d - 0.5 * t)), attrs)


class TestBinaryCrossEntropy(_Loss, OpTest):
    op_type, seed, given_attrs, low, high = "aten::binary_cross_entropy", 50, \
        {"reduction": 1}, 0.05, 0.95

    def reference(self, inputs, attrs):
        p, t = inputs["self"], inputs["target"]
        return self.reduce(-(t * np.log(p) + (1 - t) * np.log(1 - p)), attrs)


class TestNllLossForward(OpTest):
    def setUp(self):
        self.op_type = "aten::nll_loss_forward"
        r = _rng(51)
        logp = np.log(r.dirichlet(np.ones(5), size=6))
        self.inputs = {"self": logp, "target": r.integers(0, 5, 6)}
        self.attrs = {"reduction": 1, "ignore_index": -100}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x, t = inputs["self"], inputs["target"]
        picked = -x[np.arange(len(t)), t]
        reduction = attrs["reduction"]
        out = picked if reduction == 0 else (picked.mean() if reduction == 1 else picked.sum())
        # total_weight: computed for the mean and sum reductions only (0 for "none")
        return {"output": np.asarray(out),
                "total_weight": np.asarray(float(len(t)) if reduction else 0.0)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "output")


class TestAddmm(OpTest):
    def setUp(self):
        self.op_type = "aten::addmm"
        r = _rng(52)
        self.inputs = {"self": r.uniform(-1, 1, (3, 4)), "mat1": r.uniform(-1, 1, (3, 5)),
                       "mat2": r.uniform(-1, 1, (5, 4))}
        self.attrs = {"beta": 0.5, "alpha": 2.0}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        beta, product = attrs.get("beta", 1), attrs.get("alpha", 1) * inputs["mat1"] @ \
            inputs["mat2"]
        if beta == 0:       # torch's documented rule: beta 0 ignores self (NaN and inf too)
            return {"out": product + 0 * np.nan_to_num(inputs["self"])}
        return {"out": beta * inputs["self"] + product}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self", "mat1", "mat2"], "out")


class TestClamp(OpTest):
    def setUp(self):
        self.op_type = "aten::clamp"
        x = _rng(53).uniform(-2, 2, (4, 6))
        for k in (-0.5, 1.0):
            x[np.abs(x - k) < 0.02] = k + 0.1
        self.inputs = {"self": x}
        self.attrs = {"min": -0.5, "max": 1.0}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": np.clip(inputs["self"], attrs.get("min"), attrs.get("max"))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["self"], "out")


class TestNativeBatchNormTraining(OpTest):
    """Training mode updates running_mean / running_var in place, which the schema does not
    declare (examples/torch_bugs/native_batch_norm_undeclared_write.py): `mutation` fails."""

    def setUp(self):
        self.op_type = "aten::native_batch_norm"
        r = _rng(54)
        self.inputs = {"input": r.uniform(-1, 1, (6, 3)), "weight": r.uniform(0.5, 1.5, 3),
                       "bias": r.uniform(-1, 1, 3), "running_mean": np.zeros(3),
                       "running_var": np.ones(3)}
        self.attrs = {"training": True, "momentum": 0.1, "eps": 1e-5}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["input"]
        mean, var = x.mean(0), x.var(0)
        rstd = 1 / np.sqrt(var + attrs["eps"])
        out = (x - mean) * rstd * inputs["weight"] + inputs["bias"]
        return {"out0": out, "out1": mean, "out2": rstd}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input", "weight", "bias"], "out0")
