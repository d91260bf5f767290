"""Layers: functions that append ops (and parameters) to the default programs."""
from __future__ import annotations

import math

import numpy as np

from opkit.framework import errors
from opkit.framework.program import default_main_program, default_startup_program, unique_name

__all__ = ["data", "fc", "mean", "square_error_cost", "relu", "append_op", "create_parameter",
           "fill_constant", "elementwise_add", "elementwise_sub", "elementwise_mul", "mul",
           "scale", "square", "sums", "softmax", "cross_entropy", "accuracy", "concat",
           "reshape", "transpose", "dropout", "clip"]


def _block():
    return default_main_program().current_block()


def append_op(op_type: str, inputs: dict, out_slots=("Out",), attrs=None, dtype=None,
              lod_level=None, **var_kwargs):
    """Append `op_type` with fresh output variables; returns the first output (or a tuple)."""
    block = _block()
    first = next((v for vs in inputs.values() for v in (vs if isinstance(vs, (list, tuple))
                                                          else [vs]) if v is not None), None)
    outs = {}
    for slot in out_slots:
        outs[slot] = block.create_var(name=unique_name(f"{op_type}.tmp"),
                                      dtype=dtype or getattr(first, "dtype", None) or "float32",
                                      lod_level=getattr(first, "lod_level", 0)
                                      if lod_level is None else lod_level, **var_kwargs)
    block.append_op(op_type, inputs=inputs, outputs=outs, attrs=attrs or {})
    values = tuple(outs[s] for s in out_slots)
    return values[0] if len(values) == 1 else values


def data(name: str, shape, dtype="float32", lod_level: int = 0, append_batch_size: bool = True):
    """A variable fed by the user; its shape gets a leading -1 batch dimension."""
    shape = list(shape)
    if append_batch_size:
        shape = [-1] + shape
    return _block().create_var(name=name, shape=shape, dtype=dtype, lod_level=lod_level,
                               stop_gradient=True, is_data=True)


def create_parameter(shape, dtype="float32", name=None, initializer=None):
    """A persistable parameter in the main program, initialized by the startup program."""
    name = name or unique_name("param")
    main, startup = default_main_program(), default_startup_program()
    param = main.global_block().create_parameter(name, shape, dtype)
    sblock = startup.global_block()
    sblock.create_var(name=name, shape=shape, dtype=dtype, persistable=True)
    kind, kwargs = initializer or ("constant", {"value": 0.0})
    seed = startup.random_seed
    if kind == "uniform":
        attrs = {"shape": list(shape), "min": kwargs["low"], "max": kwargs["high"], "seed": seed,
                 "dtype": dtype}
        sblock.append_op("uniform_random", outputs={"Out": name}, attrs=attrs)
        if seed:
            startup.random_seed = seed + 1
    elif kind == "normal":
        attrs = {"shape": list(shape), "mean": kwargs.get("mean", 0.0),
                 "std": kwargs.get("std", 1.0), "seed": seed, "dtype": dtype}
        sblock.append_op("gaussian_random", outputs={"Out": name}, attrs=attrs)
        if seed:
            startup.random_seed = seed + 1
    else:
        sblock.append_op("fill_constant", outputs={"Out": name},
                         attrs={"shape": list(shape), "value": float(kwargs["value"]),
                                "dtype": dtype})
    return param


def xavier(fan_in: int, fan_out: int):
    limit = math.sqrt(6.0 / (fan_in + fan_out))
    return ("uniform", {"low": -limit, "high": limit})


def fc(input, size: int, num_flatten_dims: int = 1, act: str | None = None, name: str | None = None,
       bias: bool = True):
    """Fully connected: act(flatten(input) @ W + b)."""
    if input.shape is None:
        raise errors.InvalidArgument("fc: input '%s' has no shape", input.name)
    in_dims = input.shape[num_flatten_dims:]
    if any(d < 0 for d in in_dims):
        raise errors.InvalidArgument("fc: input '%s' dims after num_flatten_dims=%d must be "
                                     "known, got %s", input.name, num_flatten_dims, input.shape)
    fan_in = int(np.prod(in_dims))
    prefix = name or unique_name("fc")
    w = create_parameter([fan_in, size], input.dtype, f"{prefix}.w_0", xavier(fan_in, size))
    out = append_op("mul", {"X": input, "Y": w}, attrs={"x_num_col_dims": num_flatten_dims,
                                                          "y_num_col_dims": 1})
    if bias:
        b = create_parameter([size], input.dtype, f"{prefix}.b_0")
        out = append_op("elementwise_add", {"X": out, "Y": b}, attrs={"axis": num_flatten_dims})
    if act:
        out = append_op(act, {"X": out})
    return out


def mean(x):
    return append_op("mean", {"X": x})


def square(x):
    return append_op("square", {"X": x})


def relu(x):
    return append_op("relu", {"X": x})


def clip(x, min: float, max: float):
    return append_op("clip", {"X": x}, attrs={"min": min, "max": max})


def scale(x, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True):
    return append_op("scale", {"X": x}, attrs={"scale": scale, "bias": bias,
                                                "bias_after_scale": bias_after_scale})


def elementwise_add(x, y, axis: int = -1):
    return append_op("elementwise_add", {"X": x, "Y": y}, attrs={"axis": axis})


def elementwise_sub(x, y, axis: int = -1):
    return append_op("elementwise_sub", {"X": x, "Y": y}, attrs={"axis": axis})


def elementwise_mul(x, y, axis: int = -1):
    return append_op("elementwise_mul", {"X": x, "Y": y}, attrs={"axis": axis})


def mul(x, y, x_num_col_dims: int = 1, y_num_col_dims: int = 1):
    return append_op("mul", {"X": x, "Y": y}, attrs={"x_num_col_dims": x_num_col_dims,
                                                      "y_num_col_dims": y_num_col_dims})


def sums(inputs):
    return append_op("sum", {"X": list(inputs)})


def square_error_cost(input, label):
    """(input - label)^2, element-wise."""
    return square(elementwise_sub(input, label))


def fill_constant(shape, dtype, value, persistable: bool = False, name: str | None = None):
    block = _block()
    out = block.create_var(name=name or unique_name("fill_constant"), shape=list(shape),
                           dtype=dtype, persistable=persistable)
    block.append_op("fill_constant", outputs={"Out": out},
                    attrs={"shape": list(shape), "dtype": dtype, "value": float(value)})
    return out


def softmax(x, axis: int = -1):
    return append_op("softmax", {"X": x}, attrs={"axis": axis})


def cross_entropy(input, label, soft_label: bool = False, ignore_index: int = -100):
    return append_op("cross_entropy", {"X": input, "Label": label}, out_slots=("Y",),
                     attrs={"soft_label": soft_label, "ignore_index": ignore_index})


def accuracy(input, label, k: int = 1):
    """Top-k accuracy of `input` scores against int64 `label` ([N, 1])."""
    block = _block()
    values = block.create_var(name=unique_name("topk_values"), dtype=input.dtype)
    indices = block.create_var(name=unique_name("topk_indices"), dtype="int64")
    block.append_op("top_k", {"X": input}, {"Out": values, "Indices": indices}, {"k": k})
    return append_op("accuracy", {"Out": values, "Indices": indices, "Label": label},
                     out_slots=("Accuracy", "Correct", "Total"), dtype="float32")[0]


def concat(inputs, axis: int = 0):
    return append_op("concat", {"X": list(inputs)}, attrs={"axis": axis})


def reshape(x, shape):
    return append_op("reshape", {"X": x}, attrs={"shape": list(shape)})


def transpose(x, perm):
    return append_op("transpose", {"X": x}, attrs={"axis": list(perm)})


def dropout(x, dropout_prob: float, is_test: bool = False, seed: int = 0):
    return append_op("dropout", {"X": x}, out_slots=("Out", "Mask"),
                     attrs={"dropout_prob": dropout_prob, "is_test": is_test, "seed": seed,
                            "fix_seed": bool(seed)})[0]


# ----------------------------------------------------------------------------------------
# embedding, counters, comparisons and tensor arrays (lookup_table, increment, less_than,
# array_write, array_read); `opkit.control_flow.While` builds loops out of them
# ----------------------------------------------------------------------------------------
__all__ += ["embedding", "increment", "less_than", "create_array", "array_write",
            "array_read", "top_k"]


def embedding(input, size, is_sparse: bool = False, padding_idx=None, name: str | None = None,
              dtype="float32", initializer=None):
    """Rows of a [size[0], size[1]] table looked up by int64 ids `input` ([N, 1])."""
    vocab, width = int(size[0]), int(size[1])
    if padding_idx is None:
        padding_idx = -1
    elif padding_idx < 0:
        padding_idx += vocab
    w = create_parameter([vocab, width], dtype, name or unique_name("embedding.w"),
                         initializer or ("normal", {"mean": 0.0, "std": 1.0 / math.sqrt(width)}))
    return append_op("lookup_table", {"W": w, "Ids": input}, dtype=dtype,
                     attrs={"is_sparse": bool(is_sparse), "padding_idx": int(padding_idx)})


def increment(x, value: float = 1.0, in_place: bool = True):
    """x + value; with in_place the result is written back to `x` (a loop counter)."""
    if not in_place:
        return append_op("increment", {"X": x}, attrs={"step": float(value)})
    _block().append_op("increment", inputs={"X": x}, outputs={"Out": x},
                       attrs={"step": float(value)})
    return x


def less_than(x, y, cond=None, force_cpu: bool = False):
    """x < y as a bool variable (written into `cond` when given)."""
    attrs = {"force_cpu": bool(force_cpu)}
    if cond is None:
        return append_op("less_than", {"X": x, "Y": y}, dtype="bool", attrs=attrs)
    _block().append_op("less_than", inputs={"X": x, "Y": y}, outputs={"Out": cond},
                       attrs=attrs)
    return cond


def create_array(dtype="float32", name: str | None = None):
    """An empty LoDTensorArray variable (filled by array_write)."""
    return _block().create_var(name=name or unique_name("array"), dtype=dtype,
                               type="lod_tensor_array")


def array_write(x, i, array=None):
    """array[i] = x; makes the array when none is given. Returns the array."""
    if array is None:
        array = create_array(x.dtype)
    _block().append_op("array_write", inputs={"X": x, "I": i}, outputs={"Out": array})
    return array


def array_read(array, i):
    """array[i] (a copy)."""
    block = _block()
    out = block.create_var(name=unique_name("array_read.tmp"), dtype=array.dtype,
                           shape=getattr(array, "shape", None))
    block.append_op("array_read", inputs={"Array": array, "I": i}, outputs={"Out": out})
    return out


def top_k(input, k: int = 1):
    """(values, indices) of the k largest entries of the last dimension."""
    return append_op("top_k", {"X": input}, out_slots=("Out", "Indices"), attrs={"k": int(k)})
