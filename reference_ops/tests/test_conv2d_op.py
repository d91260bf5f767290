import numpy as np
from harness import OpTest


def conv2d_reference(x, w, strides, paddings, dilations, groups):
    """Direct (loop over output pixels) convolution, independent of the im2col kernel."""
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    p = paddings if len(paddings) == 4 else [paddings[0], paddings[0], paddings[1], paddings[1]]
    xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[1]), (p[2], p[3])))
    sh, sw = strides
    dh, dw = dilations
    oh = (h + p[0] + p[1] - (dh * (kh - 1) + 1)) // sh + 1
    ow = (wd + p[2] + p[3] - (dw * (kw - 1) + 1)) // sw + 1
    out = np.zeros((n, m, oh, ow))
    mg = m // groups
    for oc in range(m):
        g = oc // mg
        for y in range(oh):
            for xx in range(ow):
                patch = xp[:, g * cg:(g + 1) * cg,
                           y * sh:y * sh + dh * (kh - 1) + 1:dh,
                           xx * sw:xx * sw + dw * (kw - 1) + 1:dw]
                out[:, oc, y, xx] = np.sum(patch * w[oc], axis=(1, 2, 3))
    return out


class TestConv2DOp(OpTest):
    input_shape, filter_shape = (2, 3, 5, 5), (6, 3, 3, 3)
    strides, paddings, dilations, groups = [1, 1], [0, 0], [1, 1], 1

    def setUp(self):
        self.op_type = "conv2d"
        rng = np.random.default_rng(1901)
        self.inputs = {"Input": rng.uniform(-1, 1, self.input_shape).astype("float64"),
                       "Filter": rng.uniform(-1, 1, self.filter_shape).astype("float64")}
        self.attrs = {"strides": self.strides, "paddings": self.paddings,
                      "dilations": self.dilations, "groups": self.groups}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Output": conv2d_reference(inputs["Input"], inputs["Filter"], attrs["strides"],
                                           attrs["paddings"], attrs["dilations"],
                                           attrs["groups"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["Input", "Filter"], "Output", max_relative_error=0.02)

    def test_check_grad_no_filter(self):
        self.check_grad(["Input"], "Output", max_relative_error=0.02, no_grad_set={"Filter"})

    def test_check_grad_no_input(self):
        self.check_grad(["Filter"], "Output", max_relative_error=0.02, no_grad_set={"Input"})


class TestConv2DOpPadding(TestConv2DOp):
    paddings = [1, 1]


class TestConv2DOpStride(TestConv2DOp):
    input_shape = (2, 3, 7, 6)
    strides, paddings = [2, 2], [1, 0]


class TestConv2DOpGroups(TestConv2DOp):
    input_shape, filter_shape = (2, 4, 6, 6), (6, 2, 3, 3)
    groups, paddings = 2, [1, 1]


class TestConv2DOpDilation(TestConv2DOp):
    input_shape, filter_shape = (2, 3, 7, 7), (4, 3, 3, 3)
    dilations, paddings = [2, 2], [1, 1]


class TestConv2DOpAsymmetricPadding(TestConv2DOp):
    input_shape, filter_shape = (2, 3, 6, 5), (4, 3, 3, 2)
    strides, paddings = [1, 2], [1, 0, 2, 1]
