"""OpTests of torchvision's CPU ops through the torch backend (docs/torch.md,
"torchvision"). The references are numpy (vision_reference.py, written from torchvision's
documentation); the boxes are valid as documented (0 <= x1 < x2, 0 <= y1 < y2, a batch
index in [0, N - 1]), and opkit_torch.declared keeps derived boxes inside that range.

Run: opkit test torchvision::roi_align --backend torch --tests opkit_torch/vision_optests
(torchvision is imported when a torchvision:: op is named)."""
import numpy as np

from harness import OpTest
from opkit_torch.vision_optests import vision_reference as ref


def _rng(seed):
    return np.random.default_rng(seed)


def boxes(r, batch, k, lo=0.0, hi=2.0, min_size=0.3):
    """k rows (batch index, x1, y1, x2, y2), each box inside [lo, hi)."""
    rows = []
    for i in range(k):
        x1, y1 = r.uniform(lo, hi - min_size - 0.05, 2)
        x2 = r.uniform(x1 + min_size, hi - 0.01)
        y2 = r.uniform(y1 + min_size, hi - 0.01)
        rows.append([i % batch, x1, y1, x2, y2])
    return np.array(rows)


class TestRoiAlign(OpTest):
    """aligned=False (legacy: a box at least one pixel), 2 x 2 samples per bin."""

    given = {"spatial_scale": 4.0, "pooled_height": 3, "pooled_width": 2,
             "sampling_ratio": 2, "aligned": False}

    def setUp(self):
        self.op_type = "torchvision::roi_align"
        r = _rng(101)
        self.inputs = {"input": r.uniform(-1, 1, (2, 3, 8, 8)), "rois": boxes(r, 2, 4)}
        self.attrs = dict(self.given)
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": ref.roi_align(inputs["input"], inputs["rois"],
                                     attrs.get("spatial_scale", 1.0), attrs["pooled_height"],
                                     attrs["pooled_width"], attrs.get("sampling_ratio", -1),
                                     attrs.get("aligned", False))}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input"], "out")


class TestRoiAlignAlignedAdaptive(TestRoiAlign):
    """aligned=True (half-pixel shift), sampling_ratio=-1: ceil(size / bins) samples."""

    given = {"spatial_scale": 4.0, "pooled_height": 2, "pooled_width": 3,
             "sampling_ratio": -1, "aligned": True}


class TestRoiPool(OpTest):
    def setUp(self):
        self.op_type = "torchvision::roi_pool"
        r = _rng(102)
        x = r.permutation(2 * 3 * 8 * 8).reshape(2, 3, 8, 8) / 50.0 - 1.0   # no ties
        self.inputs = {"input": x, "rois": boxes(r, 2, 4)}
        self.attrs = {"spatial_scale": 4.0, "pooled_height": 2, "pooled_width": 2}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        out, arg = ref.roi_pool(inputs["input"], inputs["rois"],
                                attrs.get("spatial_scale", 1.0), attrs["pooled_height"],
                                attrs["pooled_width"])
        return {"out0": out, "out1": arg}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input"], "out0")


class TestPsRoiAlign(OpTest):
    """Position-sensitive: 2 output channels x 2 x 2 bins = 8 input channels."""

    sampling_ratio = 2

    def setUp(self):
        self.op_type = "torchvision::ps_roi_align"
        r = _rng(103)
        self.inputs = {"input": r.uniform(-1, 1, (2, 8, 6, 6)), "rois": boxes(r, 2, 3)}
        self.attrs = {"spatial_scale": 3.0, "pooled_height": 2, "pooled_width": 2,
                      "sampling_ratio": self.sampling_ratio}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        out, mapping = ref.ps_roi_align(inputs["input"], inputs["rois"],
                                        attrs.get("spatial_scale", 1.0),
                                        attrs["pooled_height"], attrs["pooled_width"],
                                        attrs.get("sampling_ratio", -1))
        return {"out0": out, "out1": mapping}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input"], "out0")


class TestPsRoiAlignAdaptive(TestPsRoiAlign):
    sampling_ratio = -1


class TestPsRoiPool(OpTest):
    """The last box ends on the map's last row and column (x2 = y2 = 1.95 * 3 = 5.85)."""

    def setUp(self):
        self.op_type = "torchvision::ps_roi_pool"
        r = _rng(104)
        rois = boxes(r, 2, 3)
        rois[-1, 3:] = 1.95
        self.inputs = {"input": r.uniform(-1, 1, (2, 8, 6, 6)), "rois": rois}
        self.attrs = {"spatial_scale": 3.0, "pooled_height": 2, "pooled_width": 2}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        out, mapping = ref.ps_roi_pool(inputs["input"], inputs["rois"],
                                       attrs.get("spatial_scale", 1.0),
                                       attrs["pooled_height"], attrs["pooled_width"])
        return {"out0": out, "out1": mapping}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input"], "out0")


class TestNms(OpTest):
    def setUp(self):
        self.op_type = "torchvision::nms"
        r = _rng(105)
        xy = r.uniform(0, 4, (10, 2))
        wh = r.uniform(1, 3, (10, 2))
        self.inputs = {"dets": np.concatenate([xy, xy + wh], 1),
                       "scores": r.permutation(10) / 10.0 + 0.05}        # no ties
        self.attrs = {"iou_threshold": 0.3}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": ref.iou_suppress(inputs["dets"], inputs["scores"],
                                        attrs["iou_threshold"])}

    def test_check_output(self):
        self.check_output()


class TestDeformConv2d(OpTest):
    """Modulated (use_mask), 2 groups, 2 offset groups, stride 1, padding 1."""

    def setUp(self):
        self.op_type = "torchvision::deform_conv2d"
        r = _rng(106)
        self.inputs = {"input": r.uniform(-1, 1, (2, 4, 5, 5)),
                       "weight": r.uniform(-1, 1, (4, 2, 3, 3)),
                       "offset": r.uniform(0.05, 0.45, (2, 2 * 2 * 9, 5, 5)) *
                       r.choice([-1.0, 1.0], (2, 2 * 2 * 9, 5, 5)),   # off integer taps
                       "mask": r.uniform(0, 1, (2, 2 * 9, 5, 5)),
                       "bias": r.uniform(-1, 1, 4)}
        self.attrs = {"stride_h": 1, "stride_w": 1, "pad_h": 1, "pad_w": 1,
                      "dilation_h": 1, "dilation_w": 1, "groups": 2, "offset_groups": 2,
                      "use_mask": True}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        return {"out": ref.deform_conv2d(inputs["input"], inputs["weight"], inputs["offset"],
                                         inputs["mask"], inputs["bias"], attrs)}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["input", "weight", "offset", "mask", "bias"], "out")


class TestRoiAlignBackward(OpTest):
    """The backward op alone: the adjoint of roi_align's bilinear sampling."""

    opkit_skip = {"grad": "torchvision gives its backward ops no derivative: their "
                          "autograd raises 'double backwards on roi_align not supported'"}

    def setUp(self):
        self.op_type = "torchvision::_roi_align_backward"
        r = _rng(107)
        self.inputs = {"grad": r.uniform(-1, 1, (4, 3, 3, 2)), "rois": boxes(r, 2, 4)}
        self.attrs = {"spatial_scale": 4.0, "pooled_height": 3, "pooled_width": 2,
                      "batch_size": 2, "channels": 3, "height": 8, "width": 8,
                      "sampling_ratio": 2, "aligned": False}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        a = attrs
        shape = (a["batch_size"], a["channels"], a["height"], a["width"])
        return {"out": ref.roi_align_backward(inputs["grad"], inputs["rois"],
                                              a["spatial_scale"], a["pooled_height"],
                                              a["pooled_width"], shape, a["sampling_ratio"],
                                              a["aligned"])}

    def test_check_output(self):
        self.check_output()


class TestPsRoiPoolBackward(OpTest):
    """The backward op alone, on TestPsRoiPool's boxes (the last one reaching the map's last
    row and column): the adjoint of the documented pooling."""

    opkit_skip = {"grad": "torchvision gives its backward ops no derivative: their "
                          "autograd raises 'double backwards on ps_roi_pool not supported'"}

    def setUp(self):
        self.op_type = "torchvision::_ps_roi_pool_backward"
        r = _rng(108)
        rois = boxes(r, 2, 3)
        rois[-1, 3:] = 1.95
        k, cout, ph, pw = 3, 2, 2, 2
        self.inputs = {"grad": r.uniform(-1, 1, (k, cout, ph, pw)), "rois": rois,
                       "channel_mapping": np.broadcast_to(
                           np.arange(cout * ph * pw, dtype=np.int32).reshape(1, cout, ph, pw),
                           (k, cout, ph, pw)).copy()}
        self.attrs = {"spatial_scale": 3.0, "pooled_height": ph, "pooled_width": pw,
                      "batch_size": 2, "channels": cout * ph * pw, "height": 6, "width": 6}
        self.outputs = self.reference(self.inputs, self.attrs)

    def reference(self, inputs, attrs):
        a = attrs
        shape = (a["batch_size"], a["channels"], a["height"], a["width"])
        return {"out": ref.ps_roi_pool_backward(inputs["grad"], inputs["rois"],
                                                a["spatial_scale"], a["pooled_height"],
                                                a["pooled_width"], shape)}

    def test_check_output(self):
        self.check_output()
