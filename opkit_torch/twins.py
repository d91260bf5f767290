"""opkit's built-in ops and their torch twins: the table behind `--against torch`
(docs/torch.md, "`--against torch`").

`opkit test relu --against torch` runs opkit's op and `aten::relu` side by side on the
OpTest's case and explore's derived cases (harness.checks.values.against). opkit's op type, slot
names and attrs are translated here: the torch backend takes an opkit op type listed in
TWINS, feeds the same variables to the torch op's schema arguments (`X` -> `self`), gives
its outputs back under opkit's output slots (`Out`), and translates the attrs (`alpha` ->
`negative_slope`). A case whose attrs have no torch equivalent (a `swish` beta, a
`clip` bound given as a tensor) is refused with `Untranslatable`: the check counts it as
refused by one side only.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from harness.backend.contract import OpRefused
from opkit_torch.op import TorchPreparedOp
from opkit_torch.schema import read

__all__ = ["TWINS", "Twin", "TwinOp", "Untranslatable", "make", "translate", "twin"]


class Untranslatable(OpRefused, ValueError):
    """The case's attrs or inputs have no equivalent in the torch op: the case is not
    compared (`no_equivalent`, read by harness.checks.values.against)."""

    no_equivalent = True


@dataclass(frozen=True)
class Twin:
    """One opkit op's torch equivalent. `attrs(a)` maps opkit's attrs (defaults filled in)
    to (the torch op type, its attrs); `inputs` / `outputs` map opkit's slots to the torch
    schema's (an output by name or by its position in the schema's returns); `y_axis`: opkit's elementwise broadcast of input Y at `axis` (reshaped to
    numpy's trailing-dims broadcast); `vector_scalar`: a 0-d torch output becomes opkit's
    shape [1]."""

    opkit: str
    attrs: object                      # callable(dict) -> (torch op type, dict)
    defaults: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=lambda: {"X": "self"})
    outputs: dict = field(default_factory=lambda: {"Out": 0})   # a name, or an index
    y_axis: bool = False
    vector_scalar: bool = False


def _fixed(aten, **const):
    return lambda a: (aten, dict(const))


def _renamed(aten, **names):
    """opkit attr -> torch attr, values unchanged."""
    return lambda a: (aten, {t: a[o] for o, t in names.items()})


def _only_default(aten, **defaults):
    """A torch op with no such attrs: only opkit's defaults translate."""
    def translate(a):
        other = {k: a[k] for k, v in defaults.items() if a[k] != v}
        if other:
            raise Untranslatable(f"{aten} has no attr for {other} (only {defaults})")
        return aten, {}
    return translate


def _reduce(aten, single=False):
    def translate(a):
        dims = [] if a["reduce_all"] else [int(d) for d in a["dim"]]
        if single:
            if a["reduce_all"]:
                if a["keep_dim"]:
                    raise Untranslatable("aten::prod reduces all dims without keepdim")
                return "aten::prod", {}
            if len(dims) != 1:
                raise Untranslatable(f"aten::prod.dim_int takes one dim, not {dims}")
            return aten, {"dim": dims[0], "keepdim": bool(a["keep_dim"])}
        return aten, {"dim": dims, "keepdim": bool(a["keep_dim"])}
    return translate


def _gelu(a):
    return "aten::gelu", {"approximate": "tanh" if a["approximate"] else "none"}


def _clip(a):
    return "aten::clamp", {"min": float(a["min"]), "max": float(a["max"])}


def _pool2d(a):
    if a["global_pooling"] or a["adaptive"] or a["padding_algorithm"] != "EXPLICIT" \
            or a["data_format"] != "NCHW" or len(a["paddings"]) != 2:
        raise Untranslatable("pool2d: only explicit, symmetric, NCHW, non-global, "
                             "non-adaptive pooling has an aten twin")
    common = {"kernel_size": list(a["ksize"]), "stride": list(a["strides"]),
              "padding": list(a["paddings"]), "ceil_mode": bool(a["ceil_mode"])}
    if a["pooling_type"] == "max":
        return "aten::max_pool2d_with_indices", common
    return "aten::avg_pool2d", {**common, "count_include_pad": not a["exclusive"]}


def _conv2d(a):
    pads = list(a["paddings"])
    if a["padding_algorithm"] != "EXPLICIT" or a["data_format"] not in ("NCHW", "AnyLayout") \
            or len(pads) != 2:
        raise Untranslatable("conv2d: only explicit symmetric paddings in NCHW have an "
                             "aten twin")
    return "aten::convolution", {
        "stride": list(a["strides"]), "padding": pads, "dilation": list(a["dilations"]),
        "transposed": False, "output_padding": [0, 0], "groups": int(a["groups"])}


_UNARY = {"abs": "abs", "acos": "acos", "asin": "asin", "atan": "atan", "ceil": "ceil",
          "cos": "cos", "exp": "exp", "floor": "floor", "log": "log", "log1p": "log1p",
          "reciprocal": "reciprocal", "rsqrt": "rsqrt", "sigmoid": "sigmoid", "sin": "sin",
          "sqrt": "sqrt", "square": "square", "tanh": "tanh", "relu": "relu",
          "logsigmoid": "log_sigmoid"}
_ELEMENTWISE = {"elementwise_add": "aten::add.Tensor", "elementwise_sub": "aten::sub.Tensor",
                "elementwise_mul": "aten::mul.Tensor"}
_REDUCE_DEFAULTS = {"dim": [0], "keep_dim": False, "reduce_all": False}


def _table() -> dict:
    t = [Twin(op, _fixed(f"aten::{aten}")) for op, aten in _UNARY.items()]
    t += [
        Twin("round", lambda a: ("aten::round", {}) if not a["decimals"] else
             ("aten::round.decimals", {"decimals": int(a["decimals"])}), {"decimals": 0}),
        Twin("gelu", _gelu, {"approximate": False}),
        Twin("elu", _renamed("aten::elu", alpha="alpha"), {"alpha": 1.0}),
        Twin("leaky_relu", _renamed("aten::leaky_relu", alpha="negative_slope"),
             {"alpha": 0.02}),
        Twin("hard_shrink", _renamed("aten::hardshrink", threshold="lambd"),
             {"threshold": 0.5}),
        Twin("softshrink", _renamed("aten::softshrink", **{"lambda": "lambd"}),
             {"lambda": 0.5}),
        Twin("relu6", lambda a: ("aten::hardtanh", {"min_val": 0.0,
                                                    "max_val": float(a["threshold"])}),
             {"threshold": 6.0}),
        Twin("brelu", _renamed("aten::hardtanh", t_min="min_val", t_max="max_val"),
             {"t_min": 0.0, "t_max": 24.0}),
        Twin("softplus", _renamed("aten::softplus", beta="beta", threshold="threshold"),
             {"beta": 1.0, "threshold": 20.0}),
        Twin("thresholded_relu", _renamed("aten::threshold", threshold="threshold",
                                          value="value"),
             {"threshold": 1.0, "value": 0.0}),
        Twin("hard_swish", _only_default("aten::hardswish", threshold=6.0, scale=6.0,
                                         offset=3.0),
             {"threshold": 6.0, "scale": 6.0, "offset": 3.0}),
        Twin("swish", _only_default("aten::silu", beta=1.0), {"beta": 1.0}),
        Twin("softmax", lambda a: ("aten::_softmax", {"dim": int(a["axis"]),
                                                      "half_to_float": False}),
             {"axis": -1}),
        Twin("pow", lambda a: ("aten::pow.Tensor_Scalar", {"exponent": float(a["factor"])}),
             {"factor": 1.0}),
        Twin("clip", _clip, {"min": None, "max": None}),
        Twin("mean", _fixed("aten::mean"), vector_scalar=True),
        Twin("concat", _renamed("aten::cat", axis="dim"), {"axis": 0},
             inputs={"X": "tensors"}),
        Twin("transpose", _renamed("aten::permute", axis="dims"), {"axis": None}),
        Twin("transpose2", _renamed("aten::permute", axis="dims"), {"axis": None}),
        Twin("top_k", _renamed("aten::topk", k="k"), {"k": 1},
             outputs={"Out": "values", "Indices": "indices"}),
        Twin("pool2d", _pool2d, {"pooling_type": "max", "ksize": None, "global_pooling": False,
                                 "strides": [1, 1], "paddings": [0, 0], "exclusive": True,
                                 "ceil_mode": False, "adaptive": False,
                                 "padding_algorithm": "EXPLICIT", "data_format": "NCHW"},
             ),
        Twin("conv2d", _conv2d, {"strides": [1, 1], "paddings": [0, 0], "dilations": [1, 1],
                                 "groups": 1, "padding_algorithm": "EXPLICIT",
                                 "data_format": "NCHW"},
             inputs={"Input": "input", "Filter": "weight"}, outputs={"Output": 0}),
    ]
    t += [Twin(op, _fixed(aten), {"axis": -1}, inputs={"X": "self", "Y": "other"},
               y_axis=True) for op, aten in _ELEMENTWISE.items()]
    for op, aten in (("reduce_sum", "aten::sum.dim_IntList"), ("reduce_mean", "aten::mean.dim"),
                     ("reduce_max", "aten::amax"), ("reduce_min", "aten::amin")):
        t.append(Twin(op, _reduce(aten), dict(_REDUCE_DEFAULTS), vector_scalar=True))
    t.append(Twin("reduce_prod", _reduce("aten::prod.dim_int", single=True),
                  dict(_REDUCE_DEFAULTS), vector_scalar=True))
    return {w.opkit: w for w in t}


TWINS = _table()
"""{opkit op type: Twin}: opkit's built-in ops with a torch equivalent."""


def twin(op_type: str) -> Twin | None:
    return TWINS.get(op_type)


def translate(op_type: str, attrs: dict | None) -> tuple[str, dict]:
    """(the torch op type, its attrs) of opkit's `op_type` with `attrs`; Untranslatable
    when they have no torch equivalent. opkit attrs the table does not read (use_mkldnn,
    ...) are dropped."""
    w = TWINS[op_type]
    given = dict(w.defaults)
    given.update({k: v for k, v in (attrs or {}).items() if k in w.defaults})
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise Untranslatable(f"{op_type}: attr {', '.join(missing)} not given")
    return w.attrs(given)


def make(op_type: str, inputs: dict, attrs: dict | None, outputs=None, place=None):
    """A TorchPreparedOp of opkit's `op_type` run as its torch twin, fed and read under
    opkit's variable names."""
    w = TWINS[op_type]
    aten, torch_attrs = translate(op_type, attrs)
    extra = [s for s, specs in inputs.items() if specs and s not in w.inputs]
    if extra:
        raise Untranslatable(f"{op_type}: input {', '.join(extra)} has no argument in {aten}")
    returns = [o[0] for o in read(aten).outputs]
    names = {s: (returns[t] if isinstance(t, int) else t) for s, t in w.outputs.items()}
    slots = {names[s]: list(v) for s, v in (outputs or {}).items() if s in names}
    for s, t in names.items():
        slots.setdefault(t, [s])
    fed = {w.inputs[s]: specs for s, specs in inputs.items()}
    return TwinOp(w, aten, fed, torch_attrs, slots, place, dict(attrs or {}))


class TwinOp(TorchPreparedOp):
    """The torch op under opkit's variable names, with opkit's broadcast of Y at `axis` and
    its shape-[1] scalars."""

    def __init__(self, w, aten, inputs, attrs, outputs, place, opkit_attrs):
        self.twin, self.opkit_attrs = w, opkit_attrs
        super().__init__(aten, inputs, attrs, outputs, place)

    def _with_required_outputs(self, given) -> dict:
        return {k: list(v) for k, v in (given or {}).items()}    # only the table's outputs

    def set_input(self, name: str, data, lod=None) -> None:
        if lod:
            raise Untranslatable(f"{self.twin.opkit}: input '{name}' has LoD, which torch "
                                 "tensors do not carry")
        super().set_input(name, data, lod)

    def _call(self, tensors: dict) -> dict:
        if self.twin.y_axis and self.inputs.get("other") and self.inputs.get("self"):
            x = tensors[self.inputs["self"][0].name]
            y_name = self.inputs["other"][0].name
            y = tensors[y_name]
            axis = int(self.opkit_attrs.get("axis", -1))
            axis = x.dim() - y.dim() if axis < 0 else axis
            trailing = x.dim() - axis - y.dim()
            if trailing < 0:
                raise Untranslatable(f"axis {axis}: Y of rank {y.dim()} does not fit X of "
                                     f"rank {x.dim()}")
            tensors = {**tensors, y_name: y.reshape(tuple(y.shape) + (1,) * trailing)}
        outs = super()._call(tensors)
        if self.twin.vector_scalar:
            outs = {n: t.reshape(1) if t.dim() == 0 else t for n, t in outs.items()}
        return outs
