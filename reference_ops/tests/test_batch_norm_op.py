import numpy as np
from harness import OpTest


def batch_norm_reference(x, scale, bias, mean, var, epsilon, momentum, global_stats,
                         layout="NCHW"):
    c_axis = x.ndim - 1 if layout == "NHWC" else 1
    axes = tuple(i for i in range(x.ndim) if i != c_axis)
    shape = [1] * x.ndim
    shape[c_axis] = -1
    if global_stats:
        mu, sigma2 = mean, var
        mean_out, var_out = mean, var
    else:
        mu, sigma2 = x.mean(axis=axes), x.var(axis=axes)
        mean_out = mean * momentum + mu * (1 - momentum)
        var_out = var * momentum + sigma2 * (1 - momentum)
    inv_std = 1.0 / np.sqrt(sigma2 + epsilon)
    y = (x - mu.reshape(shape)) * inv_std.reshape(shape) * scale.reshape(shape) \
        + bias.reshape(shape)
    return {"Y": y, "MeanOut": mean_out, "VarianceOut": var_out,
            "SavedMean": mu, "SavedVariance": inv_std}


class TestBatchNormOpTraining(OpTest):
    shape, layout, is_test, use_global_stats = (4, 3, 4, 5), "NCHW", False, False

    def setUp(self):
        self.op_type = "batch_norm"
        rng = np.random.default_rng(2101)
        c = self.shape[-1] if self.layout == "NHWC" else self.shape[1]
        self.inputs = {"X": rng.uniform(-1, 2, self.shape).astype("float64"),
                       "Scale": rng.uniform(0.5, 1.5, c).astype("float64"),
                       "Bias": rng.uniform(-1, 1, c).astype("float64"),
                       "Mean": rng.uniform(-0.5, 0.5, c).astype("float64"),
                       "Variance": rng.uniform(0.5, 1.5, c).astype("float64")}
        self.attrs = {"epsilon": 1e-5, "momentum": 0.9, "is_test": self.is_test,
                      "use_global_stats": self.use_global_stats, "data_layout": self.layout}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return batch_norm_reference(inputs["X"], inputs["Scale"], inputs["Bias"],
                                    inputs["Mean"], inputs["Variance"], attrs["epsilon"],
                                    attrs["momentum"],
                                    attrs["is_test"] or attrs["use_global_stats"],
                                    attrs["data_layout"])

    def test_check_output(self):
        self.check_output(atol=1e-6)

    def test_check_grad(self):
        self.check_grad(["X", "Scale", "Bias"], "Y", max_relative_error=0.02)


class TestBatchNormOpTraining2D(TestBatchNormOpTraining):
    shape = (40, 5)


class TestBatchNormOpTrainingNHWC(TestBatchNormOpTraining):
    shape, layout = (4, 4, 5, 3), "NHWC"


class TestBatchNormOpGlobalStats(TestBatchNormOpTraining):
    use_global_stats = True


class TestBatchNormOpInference(TestBatchNormOpTraining):
    is_test = True

    def test_check_grad(self):
        # inference: no gradient is needed; the forward output is what matters
        pass
