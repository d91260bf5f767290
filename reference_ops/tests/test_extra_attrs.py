"""Paddle's implementation-switch attrs: declared extra, dumped so, accepted, ignored."""
import json

import numpy as np
import pytest

import reference_ops  # noqa: F401  registers the ops
from harness import OpTest
from opkit import errors, registry
from opkit.op_desc import dumps_op_descs

# op -> switch attrs Paddle's own OpTests pass to it
SWITCHES = {
    "conv2d": ["use_cudnn", "use_mkldnn", "exhaustive_search",
               "fuse_relu_before_depthwise_conv", "workspace_size_MB"],
    "pool2d": ["use_cudnn", "use_mkldnn", "is_test"],
    "elementwise_add": ["use_mkldnn"], "elementwise_mul": ["use_mkldnn"],
    "elementwise_sub": ["use_mkldnn"],
    "softmax": ["use_cudnn", "use_mkldnn"], "sum": ["use_mkldnn"],
    "gaussian_random": ["use_mkldnn"], "sequence_softmax": ["use_cudnn"],
    "relu": ["use_mkldnn", "use_cudnn"], "square": ["use_mkldnn", "use_cudnn"],
    "sigmoid": ["use_mkldnn", "use_cudnn"], "depthwise_conv2d": ["use_cudnn", "use_mkldnn"],
    "mul": ["use_mkldnn", "scale_x", "scale_y", "scale_out", "force_fp32_output"],
    "lookup_table": ["is_distributed", "remote_prefetch", "trainer_id", "height_sections",
                     "epmap", "table_names"],
    "fill_constant": ["force_cpu"], "reshape2": ["use_mkldnn"], "transpose2": ["use_mkldnn"],
}


@pytest.mark.parametrize("op_type", sorted(SWITCHES))
def test_switches_are_declared_extra_and_dumped_so(op_type):
    proto = registry.op_info(op_type).proto
    desc = json.loads(dumps_op_descs())[op_type]["Attrs"]
    for name in SWITCHES[op_type]:
        assert proto.attr(name) is not None, (op_type, name)
        assert proto.attr(name).extra, (op_type, name)
        assert desc[name]["extra"] is True, (op_type, name)


def test_semantic_attrs_are_not_extra():
    desc = json.loads(dumps_op_descs())
    assert desc["conv2d"]["Attrs"]["strides"]["extra"] is False
    assert desc["pool2d"]["Attrs"]["ksize"]["extra"] is False
    assert desc["elementwise_add"]["Attrs"]["axis"]["extra"] is False


def test_extra_attr_is_still_type_checked_and_unknown_attrs_refused():
    proto = registry.op_info("conv2d").proto
    with pytest.raises(errors.InvalidArgument, match="use_cudnn"):
        proto.check_attrs({"use_cudnn": "yes"})
    with pytest.raises(errors.InvalidArgument, match="use_cuda"):
        proto.check_attrs({"use_cuda": True})


class TestConv2DIgnoresSwitches(OpTest):
    """Every switch turned on: the reference result is unchanged."""

    def setUp(self):
        self.op_type = "conv2d"
        rng = np.random.default_rng(77)
        x = rng.uniform(-1, 1, (2, 3, 5, 5)).astype("float64")
        w = rng.uniform(-1, 1, (4, 3, 3, 3)).astype("float64")
        self.inputs = {"Input": x, "Filter": w}
        self.attrs = {"use_cudnn": True, "use_mkldnn": True, "exhaustive_search": True,
                      "fuse_relu_before_depthwise_conv": False, "workspace_size_MB": 4096}
        out = np.zeros((2, 4, 3, 3))
        for i in range(3):
            for j in range(3):
                out[:, :, i, j] = np.einsum("nchw,mchw->nm", x[:, :, i:i + 3, j:j + 3], w)
        self.outputs = {"Output": out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["Input", "Filter"], "Output", max_relative_error=0.02)


class TestElementwiseAddIgnoresUseMkldnn(OpTest):
    def setUp(self):
        self.op_type = "elementwise_add"
        rng = np.random.default_rng(78)
        x, y = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (3, 4))
        self.inputs = {"X": x, "Y": y}
        self.attrs = {"use_mkldnn": True, "x_data_format": "NCHW"}
        self.outputs = {"Out": x + y}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X", "Y"], "Out")
