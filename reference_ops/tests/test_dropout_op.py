import numpy as np
import pytest

import opkit
from harness import OpTest
from harness.judging.distributions import dropout_laws

# the `distribution` check: Mask ~ Bernoulli(1 - p); Out / X (X != 0) is 0 with probability p
# and the kept scale otherwise; both implementations are tried (the check would infer these
# laws for dropout anyway: declared here as an example)
DROPOUT_DISTRIBUTION = dropout_laws()


class TestDropoutOpZeroProb(OpTest):
    """dropout_prob = 0: the mask keeps everything, so the output is deterministic."""

    def setUp(self):
        self.op_type = "dropout"
        x = np.random.default_rng(1801).uniform(-1, 1, (10, 12)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"dropout_prob": 0.0, "fix_seed": True, "seed": 3}
        self.outputs = {"Out": x, "Mask": np.ones(x.shape, dtype="uint8")}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestDropoutOpFixSeed(OpTest):
    """With fix_seed the mask is reproducible: the output is checked against the mask."""

    def setUp(self):
        self.op_type = "dropout"
        x = np.random.default_rng(1802).uniform(-1, 1, (12, 15)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"dropout_prob": 0.35, "fix_seed": True, "seed": 11,
                      "dropout_implementation": "upscale_in_train"}
        self.outputs = {"Out": x, "Mask": np.ones(x.shape, dtype="uint8")}
        self.distribution = DROPOUT_DISTRIBUTION

    def test_check_output(self):
        # the sampled values are not reproduced here; statistics are tested below
        self.check_output(no_check_set=["Out", "Mask"])

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


class TestDropoutOpInference(OpTest):
    impl = "downgrade_in_infer"

    def setUp(self):
        self.op_type = "dropout"
        x = np.random.default_rng(1803).uniform(-1, 1, (10, 12)).astype("float64")
        self.inputs = {"X": x}
        self.attrs = {"dropout_prob": 0.3, "is_test": True, "dropout_implementation": self.impl}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        x = inputs["X"]
        if attrs.get("dropout_implementation") == "upscale_in_train":
            return {"Out": x}
        return {"Out": x * (1.0 - attrs["dropout_prob"])}

    def test_check_output(self):
        self.check_output()


class TestDropoutOpInferenceUpscale(TestDropoutOpInference):
    impl = "upscale_in_train"


def _run_dropout(x, attrs):
    program = opkit.Program()
    block = program.global_block()
    xv = block.create_var(name="x", shape=list(x.shape), dtype=str(x.dtype))
    out = block.create_var(name="out", dtype=str(x.dtype))
    mask = block.create_var(name="mask", dtype="uint8")
    block.append_op("dropout", inputs={"X": xv}, outputs={"Out": out, "Mask": mask},
                    attrs=attrs)
    return opkit.Executor(opkit.CPUPlace()).run(program, feed={"x": x}, fetch_list=[out, mask])


@pytest.mark.parametrize("impl", ["downgrade_in_infer", "upscale_in_train"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_statistics_and_mask(impl, dtype):
    x = np.random.default_rng(1804).uniform(0.5, 1.5, (400, 250)).astype(dtype)
    p = 0.3
    out, mask = _run_dropout(x, {"dropout_prob": p, "dropout_implementation": impl})
    assert mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 1}
    assert abs(mask.mean() - (1 - p)) < 0.01
    scale = 1.0 / (1.0 - p) if impl == "upscale_in_train" else 1.0
    np.testing.assert_allclose(out, x * mask * scale, rtol=1e-6)


def test_dropout_fix_seed_is_reproducible():
    x = np.random.default_rng(1805).uniform(size=(30, 40))
    attrs = {"dropout_prob": 0.5, "fix_seed": True, "seed": 42}
    a, ma = _run_dropout(x, attrs)
    b, mb = _run_dropout(x, attrs)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(ma, mb)
    _, mc = _run_dropout(x, dict(attrs, seed=43))
    assert not np.array_equal(ma, mc)
