"""Declared domains of torch ops whose schema cannot say them (docs/domains.md).

A torch schema types an argument (`Tensor rois`, `float spatial_scale`) but says nothing of
its contract: torchvision's documentation does ("the first column should contain the index
of the corresponding element in the batch, i.e. a number in [0, N - 1]"; "a scaling
factor"; output sizes are counts). `DOMAINS` holds those contracts as opkit domains;
`apply(op_type, proto)` sets them on the op's OpProto (TorchBackend.proto), so that
`explore`, `extremal` and `kinks` derive only values inside them, and outside them a
refusal is right. One rule the domains cannot express stays the OpTests' business: a box's
x1 < x2 and y1 < y2 (their references follow torchvision's kernels there).

Box coordinates share one tensor with the batch index, so a `rois` input is declared in
[0, N) as a whole: the OpTests give boxes in [0, N) and a `spatial_scale` that maps them
onto the feature map.
"""
from __future__ import annotations

from opkit.framework import domains as D

__all__ = ["DOMAINS", "PROBES", "apply", "probe"]

_COUNT = D.between(1, None)                 # an output size in bins
_SCALE = D.between(0, None, lo_open=True)   # "a scaling factor"
_ROIS = D.between(0, D.dim("input", 0), hi_open=True)
_NO_ROI_GRAD = "box coordinates: torchvision's ops give them no gradient"

_ROI_OP = {"inputs": {"rois": _ROIS},
           "no_gradient": {"rois": _NO_ROI_GRAD},
           "attrs": {"spatial_scale": _SCALE, "pooled_height": _COUNT,
                     "pooled_width": _COUNT}}

_BACKWARD_OP = {"inputs": {"rois": D.between(0, D.attr("batch_size"), hi_open=True)},
                "no_gradient": {"rois": _NO_ROI_GRAD},
                "attrs": {"spatial_scale": _SCALE, "pooled_height": _COUNT,
                          "pooled_width": _COUNT, "batch_size": _COUNT, "channels": _COUNT,
                          "height": _COUNT, "width": _COUNT}}

#: {op type: {"inputs": {slot: Domain}, "attrs": {attr: Domain},
#:            "no_gradient": {slot: reason}, "parameters": (slot, ...)}}
DOMAINS = {
    "torchvision::roi_align": _ROI_OP,
    "torchvision::roi_pool": _ROI_OP,
    "torchvision::ps_roi_align": _ROI_OP,
    "torchvision::ps_roi_pool": _ROI_OP,
    # the backward ops (torchvision's autograd calls them): the map's sizes are attrs
    "torchvision::_roi_align_backward": _BACKWARD_OP,
    "torchvision::_roi_pool_backward": _BACKWARD_OP,
    "torchvision::_ps_roi_align_backward": _BACKWARD_OP,
    "torchvision::_ps_roi_pool_backward": _BACKWARD_OP,
    "torchvision::nms": {"inputs": {"dets": D.nonnegative(), "scores": D.finite()},
                         "attrs": {"iou_threshold": D.between(0, 1)}},
    "torchvision::deform_conv2d": {
        "inputs": {"offset": D.finite(), "mask": D.finite()},
        "parameters": ("weight", "bias"),
        "attrs": {"stride_h": _COUNT, "stride_w": _COUNT, "dilation_h": _COUNT,
                  "dilation_w": _COUNT, "pad_h": D.between(0, None),
                  "pad_w": D.between(0, None), "groups": _COUNT, "offset_groups": _COUNT}},
}


_ROI_PROBE = ({"input": (1, 4, 2, 2), "rois": (1, 5)},
              {"spatial_scale": 1.0, "pooled_height": 2, "pooled_width": 2,
               "sampling_ratio": 2, "aligned": False})

#: a small valid call of each op whose schema has arguments without defaults, so that
#: describe.kernel_places can probe which float dtypes its kernel takes ("not implemented
#: for 'BFloat16'"): ({tensor argument: shape (zeros of the probed dtype), or (dtype name,
#: shape) for an index input}, {attr: value})
PROBES = {
    "torchvision::roi_align": _ROI_PROBE,
    "torchvision::roi_pool": _ROI_PROBE,
    "torchvision::ps_roi_align": _ROI_PROBE,
    "torchvision::ps_roi_pool": _ROI_PROBE,
    "torchvision::_roi_align_backward": (
        {"grad": (1, 4, 2, 2), "rois": (1, 5)},
        {"spatial_scale": 1.0, "pooled_height": 2, "pooled_width": 2, "batch_size": 1,
         "channels": 4, "height": 2, "width": 2, "sampling_ratio": 2, "aligned": False}),
    "torchvision::_ps_roi_pool_backward": (
        {"grad": (1, 1, 2, 2), "rois": (1, 5), "channel_mapping": ("int32", (1, 1, 2, 2))},
        {"spatial_scale": 1.0, "pooled_height": 2, "pooled_width": 2, "batch_size": 1,
         "channels": 4, "height": 2, "width": 2}),
    "torchvision::nms": ({"dets": (2, 4), "scores": (2,)}, {"iou_threshold": 0.5}),
    "torchvision::deform_conv2d": (
        {"input": (1, 1, 2, 2), "weight": (1, 1, 1, 1), "offset": (1, 2, 2, 2),
         "mask": (1, 1, 2, 2), "bias": (1,)},
        {"stride_h": 1, "stride_w": 1, "pad_h": 0, "pad_w": 0, "dilation_h": 1,
         "dilation_w": 1, "groups": 1, "offset_groups": 1, "use_mask": True}),
}


def probe(op_type: str):
    """PROBES' sample of `op_type` (None: none declared)."""
    return PROBES.get(_key(op_type))


def _key(op_type: str) -> str:
    """"NS::OP" of "NS::OP" or "NS::OP.OVERLOAD" (".default" is the same op)."""
    return op_type[:-len(".default")] if op_type.endswith(".default") else op_type


def apply(op_type: str, proto):
    """`proto` with the declared domains of `op_type` set on its inputs and attrs (none
    declared: unchanged). Returns the proto."""
    spec = DOMAINS.get(_key(op_type))
    if spec is None or proto is None:
        return proto
    for slot, domain in spec.get("inputs", {}).items():
        var = proto.input(slot)
        if var is not None:
            var.set_domain(domain)
    for slot, reason in spec.get("no_gradient", {}).items():
        var = proto.input(slot)
        if var is not None:
            var.no_gradient(reason)
    for slot in spec.get("parameters", ()):
        var = proto.input(slot)
        if var is not None:
            var.as_parameter()
    for name, domain in spec.get("attrs", {}).items():
        attr = proto.attr(name)
        if attr is not None:
            attr.set_domain(domain)
    return proto
