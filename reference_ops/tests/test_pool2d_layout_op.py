"""pool2d: data_format NHWC, padding_algorithm SAME / VALID and adaptive pooling, against a
window-by-window loop. Inputs are distinct values at least 0.05 apart, so that the max
windows have no ties and the numeric gradient of max pooling is sound."""
import numpy as np
from harness import OpTest


def _pads(h, w, ksize, strides, paddings, algorithm):
    if algorithm == "VALID":
        return [0, 0, 0, 0]
    if algorithm == "SAME":
        pads = []
        for size, k, s in ((h, ksize[0], strides[0]), (w, ksize[1], strides[1])):
            out = -(-size // s)
            total = max((out - 1) * s + k - size, 0)
            pads += [total // 2, total - total // 2]
        return pads
    p = list(paddings)
    return [p[0], p[0], p[1], p[1]] if len(p) == 2 else p


def pool_reference(x, pool_type, ksize, strides, paddings, algorithm, adaptive, exclusive):
    n, c, h, w = x.shape
    if adaptive:
        oh, ow = ksize
        rows = [(i * h // oh, -(-(i + 1) * h // oh)) for i in range(oh)]
        cols = [(j * w // ow, -(-(j + 1) * w // ow)) for j in range(ow)]
    else:
        pt, pb, pl, pr = _pads(h, w, ksize, strides, paddings, algorithm)
        oh = (h + pt + pb - ksize[0]) // strides[0] + 1
        ow = (w + pl + pr - ksize[1]) // strides[1] + 1
        rows = [(i * strides[0] - pt, i * strides[0] - pt + ksize[0]) for i in range(oh)]
        cols = [(j * strides[1] - pl, j * strides[1] - pl + ksize[1]) for j in range(ow)]
    out = np.zeros((n, c, oh, ow))
    for i, (r0, r1) in enumerate(rows):
        for j, (c0, c1) in enumerate(cols):
            win = x[:, :, max(r0, 0):min(r1, h), max(c0, 0):min(c1, w)]
            if pool_type == "max":
                out[:, :, i, j] = win.max(axis=(2, 3))
            else:
                size = win.shape[2] * win.shape[3] if (exclusive or adaptive) else \
                    ksize[0] * ksize[1]
                out[:, :, i, j] = win.sum(axis=(2, 3)) / size
    return out


class TestPool2DNHWCAvg(OpTest):
    shape = (2, 5, 6, 3)
    pool_type, ksize, strides, paddings = "avg", [3, 2], [2, 1], [1, 0]
    algorithm, adaptive, data_format, exclusive = "EXPLICIT", False, "NHWC", True

    def setUp(self):
        self.op_type = "pool2d"
        rng = np.random.default_rng(2401)
        size = int(np.prod(self.shape))
        x = (rng.permutation(size) * 0.05 - size * 0.025).reshape(self.shape)
        self.inputs = {"X": x}
        self.attrs = {"pooling_type": self.pool_type, "ksize": self.ksize,
                      "strides": self.strides, "paddings": self.paddings,
                      "padding_algorithm": self.algorithm, "adaptive": self.adaptive,
                      "data_format": self.data_format, "exclusive": self.exclusive}
        last = self.data_format == "NHWC"
        xc = x.transpose(0, 3, 1, 2) if last else x
        out = pool_reference(xc, self.pool_type, self.ksize, self.strides, self.paddings,
                             self.algorithm, self.adaptive, self.exclusive)
        self.outputs = {"Out": out.transpose(0, 2, 3, 1) if last else out}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out", max_relative_error=0.02)


class TestPool2DNHWCMax(TestPool2DNHWCAvg):
    pool_type = "max"


class TestPool2DNHWCAvgInclusive(TestPool2DNHWCAvg):
    exclusive = False


class TestPool2DSameAvg(TestPool2DNHWCAvg):
    shape = (2, 3, 7, 6)
    ksize, strides, paddings = [3, 3], [2, 2], [4, 4]     # SAME ignores the paddings
    algorithm, data_format = "SAME", "NCHW"


class TestPool2DSameMaxNHWC(TestPool2DSameAvg):
    shape = (2, 7, 6, 3)
    pool_type, data_format = "max", "NHWC"


class TestPool2DValidAvg(TestPool2DNHWCAvg):
    shape = (2, 3, 7, 6)
    ksize, strides, paddings = [2, 3], [2, 2], [1, 1]     # VALID ignores the paddings
    algorithm, data_format = "VALID", "NCHW"


class TestPool2DAdaptiveAvg(TestPool2DNHWCAvg):
    shape = (2, 3, 7, 5)
    ksize, strides, paddings = [3, 2], [1, 1], [0, 0]     # ksize is the output size
    adaptive, data_format = True, "NCHW"


class TestPool2DAdaptiveMax(TestPool2DAdaptiveAvg):
    pool_type = "max"


class TestPool2DAdaptiveMaxNHWC(TestPool2DAdaptiveAvg):
    shape = (2, 6, 7, 3)
    ksize, pool_type, data_format = [4, 3], "max", "NHWC"


class TestPool2DNHWCMaxOverlapping(TestPool2DNHWCAvg):
    """Overlapping 3x3 windows, stride 1, padding 1 (an element is the max of several)."""
    shape = (2, 7, 7, 3)
    pool_type, ksize, strides, paddings = "max", [3, 3], [1, 1], [1, 1]
