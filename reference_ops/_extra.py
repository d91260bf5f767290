"""Paddle's implementation-switch attrs, declared ``.as_extra()`` on the ops that have them.

Not an op module (no ``_op.py`` suffix): nothing here registers anything.

Paddle's op protos carry attrs that only choose an implementation (MKL-DNN, cuDNN, fused
activations, int8 scales, workspace size, ...).  Their values never change what a reference
kernel computes, so opkit accepts them, carries them, dumps them with ``"extra": true`` and
its kernels ignore them.  The types and defaults below are Paddle's (Fluid 1.8 protos).
"""
from __future__ import annotations

__all__ = ["EXTRA_ATTRS", "add_extra_attrs"]

# name -> (type, default, comment)
EXTRA_ATTRS = {
    "use_mkldnn": ("bool", False, "(bool, default false) Use the MKL-DNN kernel (a switch)."),
    "use_cudnn": ("bool", False, "(bool, default false) Use the cuDNN kernel (a switch)."),
    "use_quantizer": ("bool", False, "(bool, default false) Quantize for MKL-DNN int8."),
    "mkldnn_data_type": ("string", "float32", "(string, default float32) The MKL-DNN data "
                         "type: float32, int8 or bfloat16."),
    "exhaustive_search": ("bool", False, "(bool, default false) cuDNN: search every "
                          "algorithm for the fastest."),
    "workspace_size_MB": ("int", 512, "(int, default 512) cuDNN workspace limit in MB."),
    "fuse_relu": ("bool", False, "(bool, default false) MKL-DNN: fuse a relu."),
    "fuse_brelu": ("bool", False, "(bool, default false) MKL-DNN: fuse a bounded relu."),
    "fuse_brelu_threshold": ("float", 6.0, "(float, default 6.0) The fused brelu's bound."),
    "fuse_activation": ("string", "", "(string, default \"\") MKL-DNN: fused activation."),
    "fuse_alpha": ("float", 0.0, "(float, default 0.0) The fused activation's alpha."),
    "fuse_beta": ("float", 0.0, "(float, default 0.0) The fused activation's beta."),
    "fuse_residual_connection": ("bool", False, "(bool, default false) MKL-DNN: fuse a "
                                 "residual addition."),
    "fuse_relu_before_depthwise_conv": ("bool", False, "(bool, default false) CUDA: fuse a "
                                        "relu before a depthwise conv."),
    "force_fp32_output": ("bool", False, "(bool, default false) int8: force float32 output."),
    "Scale_in": ("float", 1.0, "(float, default 1.0) int8 input scale."),
    "Scale_out": ("float", 1.0, "(float, default 1.0) int8 output scale."),
    "Scale_in_eltwise": ("float", 1.0, "(float, default 1.0) int8 residual input scale."),
    "Scale_weights": ("floats", [1.0], "(vector<float>, default {1.0}) int8 weight scales."),
    "Scale_x": ("float", 1.0, "(float, default 1.0) int8 scale of X."),
    "Scale_y": ("float", 1.0, "(float, default 1.0) int8 scale of Y."),
    "x_data_format": ("string", "", "(string, default \"\") MKL-DNN layout of X."),
    "y_data_format": ("string", "", "(string, default \"\") MKL-DNN layout of Y."),
    "fuse_with_relu": ("bool", False, "(bool, default false) MKL-DNN: fuse a relu."),
    "scale_x": ("float", 1.0, "(float, default 1.0) int8 scale of X."),
    "scale_y": ("floats", [1.0], "(vector<float>, default {1.0}) int8 scales of Y."),
    "scale_out": ("float", 1.0, "(float, default 1.0) int8 scale of Out."),
    "is_distributed": ("bool", False, "(bool, default false) Distributed training: the "
                       "table is split over parameter servers."),
    "remote_prefetch": ("bool", False, "(bool, default false) Distributed training: "
                        "prefetch the rows from the parameter servers."),
    "trainer_id": ("int", 0, "(int, default 0) Distributed training: this trainer's id."),
    "height_sections": ("longs", [], "(vector<int64>, default {}) Distributed training: "
                        "the height of each table slice."),
    "epmap": ("strings", [], "(vector<string>, default {}) Distributed training: the "
              "parameter server endpoints."),
    "table_names": ("strings", [], "(vector<string>, default {}) Distributed training: the "
                    "table slice names."),
    "force_cpu": ("bool", False, "(bool, default false) Place the output in CPU memory (a "
                  "placement switch: the values do not change)."),
    "is_test": ("bool", False, "(bool, default false) Inference only (a switch here)."),
    "data_format": ("string", "AnyLayout", "(string, default AnyLayout) A layout hint for "
                    "MKL-DNN/cuDNN; it does not change the result."),
}


def add_extra_attrs(maker, *names) -> None:
    """Declare each named switch attr on ``maker`` as extra, with Paddle's type and default."""
    for name in names:
        attr_type, default, comment = EXTRA_ATTRS[name]
        maker.add_attr(name, attr_type, comment, default=default).as_extra()
