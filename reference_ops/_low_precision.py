"""Which built-in ops have float16 / bfloat16 kernels: Paddle's (CPU or GPU) low-precision
kernels of these ops compute in float32 (`MPTypeTrait`) and round the result once; opkit's do
the same (`opkit.framework.low_precision.register_low_precision`: the op's float32 kernel in
float32, its outputs rounded to nearest even in the storage dtype).

Not an op module (no ``_op.py`` suffix): `reference_ops.load_op` calls `register_module`
after importing an op's module, so the twins register with their op, lazily.
"""
from __future__ import annotations

from opkit.framework.low_precision import register_low_precision

__all__ = ["LOW_PRECISION_OPS", "register_module"]

_ACT = ("relu", "sigmoid", "tanh", "exp", "abs", "square", "sqrt", "gelu", "leaky_relu",
        "softplus", "log")
_CMP = ("equal", "not_equal", "less_than", "less_equal", "greater_than", "greater_equal")

# op module -> the op types (forward and grad) given float16 and bfloat16 kernels
LOW_PRECISION_OPS: dict[str, tuple] = {
    **{f"{a}_op": (a, f"{a}_grad") for a in _ACT},
    **{f"{c}_op": (c,) for c in _CMP},
    "elementwise_add_op": ("elementwise_add", "elementwise_add_grad"),
    "elementwise_sub_op": ("elementwise_sub", "elementwise_sub_grad"),
    "elementwise_mul_op": ("elementwise_mul", "elementwise_mul_grad"),
    "scale_op": ("scale", "scale_grad"),
    "mean_op": ("mean", "mean_grad"),
    "sum_op": ("sum",),
    "softmax_op": ("softmax", "softmax_grad"),
    "clip_op": ("clip", "clip_grad"),
    "concat_op": ("concat", "concat_grad"),
    "slice_op": ("slice", "slice_grad"),
    "transpose_op": ("transpose", "transpose_grad"),
    "transpose2_op": ("transpose2", "transpose2_grad"),
    "reshape2_op": ("reshape2", "reshape2_grad"),
    "reduce_sum_op": ("reduce_sum", "reduce_sum_grad"),
    "reduce_mean_op": ("reduce_mean", "reduce_mean_grad"),
    "reduce_max_op": ("reduce_max", "reduce_max_grad"),
    "reduce_min_op": ("reduce_min", "reduce_min_grad"),
    "mul_op": ("mul", "mul_grad"),
    "accuracy_op": ("accuracy",),
    "dropout_op": ("dropout", "dropout_grad"),
    "sgd_op": ("sgd",),
    "uniform_random_op": ("uniform_random",),
    "fill_constant_op": ("fill_constant",),
    "fill_any_like_op": ("fill_any_like",),
    "fill_zeros_like_op": ("fill_zeros_like",),
    "batch_norm_op": ("batch_norm", "batch_norm_grad"),
    "pool2d_op": ("pool2d", "pool2d_grad"),
    "cross_entropy_op": ("cross_entropy", "cross_entropy_grad"),
    "lookup_table_op": ("lookup_table", "lookup_table_grad"),
}

_DONE: set = set()


def register_module(module: str) -> None:
    """The float16 / bfloat16 kernels of the ops of `module` (once)."""
    if module in _DONE:
        return
    _DONE.add(module)
    from opkit.framework.registry import kernels_of

    for op_type in LOW_PRECISION_OPS.get(module, ()):
        have = {e.dtype for e in kernels_of(op_type).values()}
        missing = tuple(d for d in ("float16", "bfloat16") if d not in have)
        if missing and "float32" in have:
            register_low_precision(op_type, dtypes=missing)
