import numpy as np
from harness import OpTest


def pool2d_reference(x, pooling_type, ksize, strides, paddings, global_pooling=False,
                     exclusive=True, ceil_mode=False):
    """Loop-over-windows pooling, independent of the strided kernel."""
    n, c, h, w = x.shape
    if global_pooling:
        ksize, paddings = [h, w], [0, 0]
    (kh, kw), (sh, sw), (ph, pw) = ksize, strides, paddings
    if ceil_mode:
        oh = (h + 2 * ph - kh + sh - 1) // sh + 1
        ow = (w + 2 * pw - kw + sw - 1) // sw + 1
    else:
        oh = (h + 2 * ph - kh) // sh + 1
        ow = (w + 2 * pw - kw) // sw + 1
    out = np.zeros((n, c, oh, ow))
    for i in range(oh):
        for j in range(ow):
            hs, ws = i * sh - ph, j * sw - pw
            he, we = min(hs + kh, h), min(ws + kw, w)
            hs, ws = max(hs, 0), max(ws, 0)
            block = x[:, :, hs:he, ws:we]
            if pooling_type == "max":
                out[:, :, i, j] = block.max(axis=(2, 3))
            else:
                size = (he - hs) * (we - ws) if (exclusive or global_pooling) else kh * kw
                out[:, :, i, j] = block.sum(axis=(2, 3)) / size
    return out


class TestPool2DMaxOp(OpTest):
    pooling_type, ksize, strides, paddings = "max", [2, 2], [2, 2], [0, 0]
    global_pooling, exclusive, ceil_mode = False, True, False
    shape = (2, 3, 6, 6)

    def setUp(self):
        self.op_type = "pool2d"
        # distinct values keep the max unique, so the numeric gradient is well defined
        rng = np.random.default_rng(2001)
        x = rng.permutation(np.prod(self.shape)).reshape(self.shape) / np.prod(self.shape)
        self.inputs = {"X": x.astype("float64")}
        self.attrs = {"pooling_type": self.pooling_type, "ksize": self.ksize,
                      "strides": self.strides, "paddings": self.paddings,
                      "global_pooling": self.global_pooling, "exclusive": self.exclusive,
                      "ceil_mode": self.ceil_mode}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"Out": pool2d_reference(inputs["X"], attrs["pooling_type"], attrs["ksize"],
                                        attrs["strides"], attrs["paddings"],
                                        attrs["global_pooling"], attrs["exclusive"],
                                        attrs["ceil_mode"])}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out", max_relative_error=0.02, numeric_grad_delta=1e-4)


class TestPool2DMaxOpPadding(TestPool2DMaxOp):
    ksize, strides, paddings = [3, 3], [1, 1], [1, 1]


class TestPool2DMaxOpCeil(TestPool2DMaxOp):
    shape = (2, 3, 7, 7)
    ksize, strides, ceil_mode = [2, 2], [2, 2], True


class TestPool2DMaxOpGlobal(TestPool2DMaxOp):
    global_pooling = True


class TestPool2DAvgOp(TestPool2DMaxOp):
    pooling_type = "avg"


class TestPool2DAvgOpPaddingExclusive(TestPool2DMaxOp):
    pooling_type, ksize, strides, paddings = "avg", [3, 3], [2, 2], [1, 1]
    shape = (2, 3, 7, 6)


class TestPool2DAvgOpPaddingInclusive(TestPool2DAvgOpPaddingExclusive):
    exclusive = False


class TestPool2DAvgOpGlobal(TestPool2DMaxOp):
    pooling_type, global_pooling = "avg", True
