"""conv2d / depthwise_conv2d: data_format NHWC (and AnyLayout) and padding_algorithm
SAME / VALID, against a direct loop convolution."""
import numpy as np
from harness import OpTest

from reference_ops.tests.test_conv2d_op import conv2d_reference


def same_paddings(hw, k, strides):
    pads = []
    for size, kk, s in zip(hw, k, strides):
        out = -(-size // s)
        total = max((out - 1) * s + kk - size, 0)
        pads += [total // 2, total - total // 2]
    return pads


class TestConv2DNHWC(OpTest):
    op = "conv2d"
    input_shape, filter_shape = (2, 5, 6, 3), (4, 3, 3, 3)    # NHWC input, MCHW filter
    strides, paddings, dilations, groups = [1, 1], [1, 0], [1, 1], 1
    data_format, padding_algorithm = "NHWC", "EXPLICIT"

    def setUp(self):
        self.op_type = self.op
        rng = np.random.default_rng(2301)
        self.inputs = {"Input": rng.uniform(-1, 1, self.input_shape),
                       "Filter": rng.uniform(-1, 1, self.filter_shape)}
        self.attrs = {"strides": self.strides, "paddings": self.paddings,
                      "dilations": self.dilations, "groups": self.groups,
                      "data_format": self.data_format,
                      "padding_algorithm": self.padding_algorithm}
        self.outputs = {"Output": self.reference()}

    def reference(self):
        x = self.inputs["Input"]
        last = self.data_format == "NHWC"
        if last:
            x = x.transpose(0, 3, 1, 2)
        pads, dil = list(self.paddings), list(self.dilations)
        if self.padding_algorithm == "VALID":
            pads = [0, 0, 0, 0]
        elif self.padding_algorithm == "SAME":
            pads, dil = same_paddings(x.shape[2:], self.filter_shape[2:], self.strides), [1, 1]
        out = conv2d_reference(x, self.inputs["Filter"], self.strides, pads, dil, self.groups)
        return out.transpose(0, 2, 3, 1) if last else out

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["Input", "Filter"], "Output", max_relative_error=0.02)


class TestConv2DNHWCStrideGroups(TestConv2DNHWC):
    input_shape, filter_shape = (2, 7, 5, 4), (6, 2, 3, 2)
    strides, paddings, groups = [2, 1], [1, 2, 0, 1], 2


class TestConv2DAnyLayoutIsNCHW(TestConv2DNHWC):
    input_shape = (2, 3, 5, 6)
    data_format = "AnyLayout"


class TestConv2DSame(TestConv2DNHWC):
    input_shape = (2, 3, 7, 6)
    strides, paddings, dilations = [2, 2], [5, 5], [2, 2]   # SAME ignores both
    data_format, padding_algorithm = "NCHW", "SAME"


class TestConv2DSameNHWC(TestConv2DSame):
    input_shape = (2, 6, 5, 3)
    strides = [1, 3]
    data_format = "NHWC"


class TestConv2DValid(TestConv2DNHWC):
    input_shape = (2, 3, 7, 6)
    paddings = [3, 3]                                       # VALID ignores them
    data_format, padding_algorithm = "NCHW", "VALID"


class TestConv2DValidNHWCDilated(TestConv2DValid):
    input_shape = (2, 8, 7, 3)
    dilations = [2, 1]
    data_format = "NHWC"


class TestDepthwiseConv2D(TestConv2DNHWC):
    op = "depthwise_conv2d"
    input_shape, filter_shape = (2, 3, 6, 6), (6, 1, 3, 3)
    strides, paddings, groups = [2, 2], [1, 1], 3
    data_format = "NCHW"


class TestDepthwiseConv2DNHWCSame(TestDepthwiseConv2D):
    input_shape = (2, 5, 6, 3)
    strides = [1, 1]
    data_format, padding_algorithm = "NHWC", "SAME"
