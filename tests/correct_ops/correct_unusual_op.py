"""Correct but unusual ops, each written from a real Paddle or PyTorch op (named in its
comment): stateful outputs, saved intermediates, hashed tables, accumulators, one-sided
domains, clamps with tiny epsilons, references naive about NaN, random ops with other laws,
optional outputs, integer outputs. `opkit test` must fail none of them
(tests/correct_ops/test_correct_ops.py)."""
import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, enforce, errors, grad_var_name,
                   register_kernel, register_operator)

DTYPES = ("float32", "float64")


def define(op_type, *, inputs, outputs, shapes, forward, attrs=(), grad=None,
           grad_inputs=(), grad_takes=("Out",), grad_fwd_inputs=None, grad_fwd_outputs=(),
           out_dtypes=None, inplace=None, decorate=None, comment="", dtypes=DTYPES,
           ranks=None, check=None):
    """Register `op_type` (one call: OpMaker, op, kernel and, with `grad`, a Paddle-style
    grad maker, grad op and grad kernel; the kernels live in this file, which the harness
    re-imports in fresh processes).

    inputs / outputs: slot names; an input ending in "?" is dispensable, an output ending
      in "~" is intermediate (AsIntermediate), one ending in "?" dispensable.
    attrs: (name, type, default[, decorate(attr_proto)]) tuples.
    shapes(dims, attrs) -> {output: dims}; out_dtypes: {output: dtype name}.
    forward(ins, attrs) -> {output: array}; ins holds the inputs fed (a dispensable one
      absent when not fed).
    grad(ins, outs, douts, attrs) -> {input: gradient}: ins are the forward inputs the grad
      op takes (grad_fwd_inputs, default every input), outs the forward outputs it takes
      (grad_fwd_outputs), douts the output gradients it takes (grad_takes).
    decorate(maker): a hook to declare domains, parameters, ... on the maker's slots.
    """
    plain_in = [s.rstrip("?") for s in inputs]
    plain_out = [s.rstrip("~?") for s in outputs]

    class Maker(OpMaker):
        def make(self):
            for slot in inputs:
                proto = self.add_input(slot.rstrip("?"), f"input {slot}")
                if slot.endswith("?"):
                    proto.as_dispensable()
            for slot in outputs:
                proto = self.add_output(slot.rstrip("~?"), f"output {slot}")
                if slot.endswith("~"):
                    proto.as_intermediate()
                if slot.endswith("?"):
                    proto.as_dispensable()
            for name, kind, default, *more in attrs:
                proto = self.add_attr(name, kind, f"attr {name}").set_default(default)
                for fn in more:
                    fn(proto)
            if decorate:
                decorate(self)
            self.add_comment(comment or f"{op_type}: a correct op of tests/correct_ops")

    class Op(OperatorWithKernel):
        def infer_shape(self, ctx):
            dims = {s: list(ctx.get_input_dim(s)) for s in plain_in if ctx.has_input(s)}
            for s, rank in (ranks or {}).items():        # the ranks the op takes
                enforce(s not in dims or len(dims[s]) == rank, errors.InvalidArgument(
                    "Input(%s) of %s must have rank %d, got %s", s, op_type, rank, dims[s]))
            if check:
                problem = check(dims, {n: ctx.attr(n) for n, *_ in attrs})
                enforce(not problem, errors.InvalidArgument("%s: %s", op_type, problem))
            got = shapes(dims, {n: ctx.attr(n) for n, *_ in attrs})
            for slot, d in got.items():
                if ctx.has_output(slot):
                    ctx.set_output_dim(slot, d)
                    if out_dtypes and slot in out_dtypes:
                        ctx.set_output_dtype(slot, out_dtypes[slot])

    kwargs = {"inplace": inplace} if inplace else {}
    takes_in = list(plain_in if grad_fwd_inputs is None else grad_fwd_inputs)
    if grad is not None:
        gtype = op_type + "_grad"

        class Grad(GradOpMaker):
            def apply(self):
                op = self.new_grad_op(gtype)
                for s in takes_in:
                    if self.input(s):
                        op.set_input(s, self.input(s))
                for s in grad_fwd_outputs:
                    op.set_input(s, self.output(s))
                for s in grad_takes:
                    op.set_input(grad_var_name(s), self.output_grad(s))
                for s in grad_inputs:
                    op.set_output(grad_var_name(s), self.input_grad(s))
                return [op]

        class GradOp(OperatorWithKernel):
            def infer_shape(self, ctx):
                for s in grad_inputs:
                    if ctx.has_output(grad_var_name(s)):
                        ctx.set_output_dim(grad_var_name(s), ctx.get_input_dim(s))

        register_operator(op_type, Op, Maker, grad_maker=Grad, **kwargs)
        register_operator(gtype, GradOp)

        @register_kernel(gtype, place=("CPU",), dtypes=DTYPES)
        def grad_kernel(ctx):
            ins = {s: ctx.input(s) for s in takes_in if ctx.has_input(s)}
            outs = {s: ctx.input(s) for s in grad_fwd_outputs}
            douts = {s: ctx.input(grad_var_name(s)) for s in grad_takes}
            got = grad(ins, outs, douts, ctx.attrs)
            for s in grad_inputs:
                if ctx.has_output(grad_var_name(s)):
                    ctx.set_output(grad_var_name(s), got[s].astype(ins[s].dtype))
    else:
        register_operator(op_type, Op, Maker, **kwargs)

    @register_kernel(op_type, place=("CPU",), dtypes=dtypes)
    def kernel(ctx):
        ins = {s: ctx.input(s) for s in plain_in if ctx.has_input(s)}
        got = forward(ins, ctx.attrs)
        for slot in plain_out:
            if slot in got and ctx.has_output(slot):
                ctx.set_output(slot, got[slot])
    return op_type


F = [("epsilon", "float", 1e-5)]


def _same(d, a):
    return {"Out": d["X"]}


# -- 1. stateful outputs beside the result: batch_norm's running statistics, not declared
# inplace (Paddle's own batch_norm declares them; many user ops do not) ------------------------
def _bn(ins, a):
    x = ins["X"]
    m, v = x.mean(0), x.var(0)
    t = x.dtype.type
    mo = t(a["momentum"])
    inv = 1 / np.sqrt(v + t(a["epsilon"]))
    return {"Y": (x - m) * inv, "MeanOut": ins["Mean"] * mo + m * (1 - mo),
            "VarianceOut": ins["Variance"] * mo + v * (1 - mo),
            "SavedMean": m, "SavedInvStd": inv.astype(x.dtype)}


def _bn_grad(ins, outs, d, a):
    x, dy = ins["X"], d["Y"]
    m, inv = outs["SavedMean"], outs["SavedInvStd"]
    xh = (x - m) * inv
    n = x.shape[0]
    return {"X": inv / n * (n * dy - dy.sum(0) - xh * (dy * xh).sum(0))}


define("bn_running_stats", inputs=["X", "Mean", "Variance"],
       outputs=["Y", "MeanOut", "VarianceOut", "SavedMean~", "SavedInvStd~"],
       attrs=[("momentum", "float", 0.9), ("epsilon", "float", 1e-5)],
       shapes=lambda d, a: {"Y": d["X"], "MeanOut": d["Mean"], "VarianceOut": d["Mean"],
                            "SavedMean": d["Mean"], "SavedInvStd": d["Mean"]},
       ranks={"X": 2, "Mean": 1, "Variance": 1},
       check=lambda d, a: None if d["Mean"] == d["X"][1:] == d["Variance"] or -1 in d["X"]
       else f"Mean and Variance must have shape [C] = {d['X'][1:]}",
       forward=_bn, grad=_bn_grad, grad_inputs=["X"], grad_takes=["Y"],
       grad_fwd_inputs=["X"], grad_fwd_outputs=["SavedMean", "SavedInvStd"])


# -- 2. softmax_with_cross_entropy: Softmax is saved for the gradient, not differentiated -------
def _swce(ins, a):
    x, lab = ins["Logits"], ins["Label"]
    m = x.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)          # a non-finite max is not subtracted
    e = np.exp(x - m)
    s = e / e.sum(-1, keepdims=True)
    logs = x - m - np.log(e.sum(-1, keepdims=True))     # log-softmax: no log(0)
    loss = -np.take_along_axis(logs, lab, -1)
    return {"Softmax": s, "Loss": loss.astype(x.dtype)}


def _swce_grad(ins, outs, d, a):
    s, lab = outs["Softmax"], ins["Label"]
    g = s.copy()
    np.put_along_axis(g, lab, np.take_along_axis(g, lab, -1) - 1, -1)
    return {"Logits": g * d["Loss"]}


define("softmax_xent", inputs=["Logits", "Label"], outputs=["Softmax", "Loss"],
       shapes=lambda d, a: {"Softmax": d["Logits"], "Loss": d["Logits"][:-1] + [1]},
       ranks={"Logits": 2, "Label": 2},
       forward=_swce, grad=_swce_grad, grad_inputs=["Logits"], grad_takes=["Loss"],
       grad_fwd_outputs=["Softmax"])


# -- 3. layer_norm: Mean and Variance are saved statistics --------------------------------------
def _ln(ins, a):
    x = ins["X"]
    m, v = x.mean(-1), x.var(-1)
    y = (x - m[:, None]) / np.sqrt(v[:, None] + x.dtype.type(a["epsilon"]))
    return {"Y": y.astype(x.dtype), "Mean": m, "Variance": v}


def _ln_grad(ins, outs, d, a):
    x, dy = ins["X"], d["Y"]
    m, v = outs["Mean"][:, None], outs["Variance"][:, None]
    inv = 1 / np.sqrt(v + a["epsilon"])
    xh = (x - m) * inv
    n = x.shape[-1]
    return {"X": inv / n * (n * dy - dy.sum(-1, keepdims=True)
                            - xh * (dy * xh).sum(-1, keepdims=True))}


define("layer_norm_stats", inputs=["X"], outputs=["Y", "Mean", "Variance"], attrs=F,
       ranks={"X": 2},
       shapes=lambda d, a: {"Y": d["X"], "Mean": d["X"][:1], "Variance": d["X"][:1]},
       forward=_ln, grad=_ln_grad, grad_inputs=["X"], grad_takes=["Y"],
       grad_fwd_outputs=["Mean", "Variance"])


# -- 4. hashed embedding (Paddle's hash op + lookup_table; PyTorch's EmbeddingBag with a
# hashing trick): ids are hashed into the table's rows ------------------------------------------
def _hash(ids, rows):
    return (ids.astype(np.int64) * 2654435761) % max(rows, 1)


def _hemb(ins, a):
    w = ins["W"]
    return {"Out": w[_hash(ins["Ids"][:, 0], w.shape[0])]}


def _hemb_grad(ins, outs, d, a):
    w = ins["W"]
    g = np.zeros_like(w)
    np.add.at(g, _hash(ins["Ids"][:, 0], w.shape[0]), d["Out"])
    return {"W": g}


define("hashed_embedding", inputs=["W", "Ids"], outputs=["Out"],
       shapes=lambda d, a: {"Out": [d["Ids"][0], d["W"][1]]}, ranks={"W": 2, "Ids": 2},
       forward=_hemb, grad=_hemb_grad, grad_inputs=["W"])


# -- 5. rmsprop / adagrad-style accumulators: a second moment, never negative in use -------------
def _rms(ins, a):
    p, g, ms = ins["Param"], ins["Grad"], ins["MeanSquare"]
    t = p.dtype.type
    ms2 = t(a["decay"]) * ms + (1 - t(a["decay"])) * g * g
    return {"ParamOut": p - t(a["lr"]) * g / (np.sqrt(ms2) + t(a["epsilon"])),
            "MeanSquareOut": ms2}


define("rmsprop_lite", inputs=["Param", "Grad", "MeanSquare"],
       outputs=["ParamOut", "MeanSquareOut"],
       attrs=[("decay", "float", 0.9), ("lr", "float", 0.01), ("epsilon", "float", 1e-6)],
       shapes=lambda d, a: {"ParamOut": d["Param"], "MeanSquareOut": d["Param"]},
       forward=_rms, inplace={"Param": "ParamOut", "MeanSquare": "MeanSquareOut"})


def _adagrad(ins, a):
    p, g, m = ins["Param"], ins["Grad"], ins["Moment"]
    t = p.dtype.type
    m2 = m + g * g
    root = np.sqrt(np.maximum(m2, 0))           # a guarded root: never NaN
    return {"ParamOut": p - t(a["lr"]) * g / (root + t(a["epsilon"])), "MomentOut": m2}


define("adagrad_lite", inputs=["Param", "Grad", "Moment"], outputs=["ParamOut", "MomentOut"],
       attrs=[("lr", "float", 0.01), ("epsilon", "float", 1e-6)],
       shapes=lambda d, a: {"ParamOut": d["Param"], "MomentOut": d["Param"]},
       forward=_adagrad)


# -- 6. exclusive cumsum (Paddle's cumsum with exclusive=True): the op excludes x_i -------------
def _excl(ins, a):
    x = ins["X"]
    out = np.zeros_like(x)
    out[:, 1:] = np.cumsum(x[:, :-1], axis=1)
    return {"Out": out}


def _excl_grad(ins, outs, d, a):
    dout = d["Out"]
    g = np.zeros_like(dout)
    g[:, :-1] = np.cumsum(dout[:, :0:-1], axis=1)[:, ::-1]
    return {"X": g}


define("exclusive_cumsum", inputs=["X"], outputs=["Out"], shapes=_same, forward=_excl,
       ranks={"X": 2},
       grad=_excl_grad, grad_inputs=["X"])


# -- 7. descending sort with indices (paddle.argsort(descending=True)) ----------------------------
def _sortd(ins, a):
    x = ins["X"]
    idx = np.argsort(-x, axis=-1, kind="stable")
    return {"Out": np.take_along_axis(x, idx, -1), "Indices": idx.astype(np.int64)}


def _sortd_grad(ins, outs, d, a):
    g = np.zeros_like(ins["X"])
    np.put_along_axis(g, outs["Indices"], d["Out"], -1)
    return {"X": g}


define("sort_descending", inputs=["X"], outputs=["Out", "Indices"],
       shapes=lambda d, a: {"Out": d["X"], "Indices": d["X"]}, out_dtypes={"Indices": "int64"},
       forward=_sortd, grad=_sortd_grad, grad_inputs=["X"], grad_fwd_outputs=["Indices"])


# -- 8/9. dropout that always upscales (PyTorch's F.dropout; no dropout_implementation attr) ----
def _rng(a):
    return np.random.default_rng(a["seed"] if a.get("fix_seed") else None)


def _dropout_up(ins, a):
    x = ins["X"]
    p = a["dropout_prob"]
    keep = (_rng(a).random(x.shape) >= p)
    return {"Out": (x * keep / (1 - p)).astype(x.dtype), "Mask": keep.astype(np.uint8)}


def _dropout_up_grad(ins, outs, d, a):
    return {"X": d["Out"] * outs["Mask"] / (1 - a["dropout_prob"])}


for _name in ("dropout_upscale", "feature_dropout"):
    define(_name, inputs=["X"], outputs=["Out", "Mask~"],
           attrs=[("dropout_prob", "float", 0.5), ("is_test", "bool", False),
                  ("fix_seed", "bool", False), ("seed", "int", 0)],
           shapes=lambda d, a: {"Out": d["X"], "Mask": d["X"]}, out_dtypes={"Mask": "uint8"},
           forward=_dropout_up, grad=_dropout_up_grad, grad_inputs=["X"],
           grad_fwd_inputs=["X"], grad_fwd_outputs=["Mask"])


# -- 10. log with a tiny clamp (a BCE's log(max(p, 1e-7))) ---------------------------------------
def _logc(ins, a):
    x = ins["X"]
    return {"Out": np.log(np.maximum(x, x.dtype.type(a["epsilon"])))}


def _logc_grad(ins, outs, d, a):
    x = ins["X"]
    return {"X": np.where(x >= x.dtype.type(a["epsilon"]), d["Out"] / x, 0)}


define("log_clamp", inputs=["X"], outputs=["Out"], attrs=[("epsilon", "float", 1e-7)],
       shapes=_same, forward=_logc, grad=_logc_grad, grad_inputs=["X"])


# -- 11. rsqrt with an epsilon (torch.rsqrt(x*x + eps)), l2_normalize (F.normalize) -------------
def _rsq(ins, a):
    x = ins["X"]
    return {"Out": 1 / np.sqrt(x * x + x.dtype.type(a["epsilon"]))}


def _rsq_grad(ins, outs, d, a):
    x = ins["X"]
    return {"X": -d["Out"] * x * (x * x + x.dtype.type(a["epsilon"])) ** -1.5}


define("rsqrt_eps", inputs=["X"], outputs=["Out"], attrs=[("epsilon", "float", 1e-12)],
       shapes=_same, forward=_rsq, grad=_rsq_grad, grad_inputs=["X"])


def _l2n(ins, a):
    x = ins["X"]
    # scaled by each row's largest magnitude before squaring (as LAPACK's nrm2 does): a row
    # whose norm fits the dtype never overflows or underflows on the way (extremal's spread)
    m = np.abs(x).max(-1, keepdims=True) if x.shape[-1] else np.zeros(x.shape[:-1] + (1,), x.dtype)
    s = np.where((m > 0) & np.isfinite(m), m, 1).astype(x.dtype)   # inf / NaN rows: as is
    n = (s * np.sqrt(((x / s) ** 2).sum(-1, keepdims=True))).astype(x.dtype)
    return {"Out": x / np.maximum(n, x.dtype.type(a["epsilon"])), "Norm": n}


def _l2n_grad(ins, outs, d, a):
    x, n, g = ins["X"], outs["Norm"], d["Out"]
    big = n > a["epsilon"]
    nn = np.maximum(n, a["epsilon"])
    gx = g / nn - np.where(big, x * (g * x).sum(-1, keepdims=True) / nn ** 3, 0)
    return {"X": gx}


define("l2_normalize", inputs=["X"], outputs=["Out", "Norm~"], attrs=[("epsilon", "float", 1e-12)],
       ranks={"X": 2},
       shapes=lambda d, a: {"Out": d["X"], "Norm": d["X"][:-1] + [1]}, forward=_l2n,
       grad=_l2n_grad, grad_inputs=["X"], grad_fwd_outputs=["Norm"])


# -- 12. avg pool over windows of a row, each window summed on its own (NaN stays local) --------
def _pool(ins, a):
    x, k = ins["X"], a["ksize"]
    out = np.zeros((x.shape[0], x.shape[1] // k), x.dtype)
    for j in range(x.shape[1] // k):            # each window on its own: a NaN stays in it
        out[:, j] = x[:, j * k:(j + 1) * k].mean(1)
    return {"Out": out}


def _pool_grad(ins, outs, d, a):
    x, k = ins["X"], a["ksize"]
    g = np.zeros_like(x)
    for j, i in enumerate(range(0, x.shape[1] - k + 1, k)):
        g[:, i:i + k] += d["Out"][:, j:j + 1] / k
    return {"X": g}


define("avg_pool_rows", inputs=["X"], outputs=["Out"],
       attrs=[("ksize", "int", 2, lambda p: p.greater_than(0))], ranks={"X": 2},
       shapes=lambda d, a: {"Out": [d["X"][0], -1 if d["X"][1] < 0 else d["X"][1] // a["ksize"]]},
       forward=_pool, grad=_pool_grad, grad_inputs=["X"])


# -- 13. integer outputs: argmax (paddle.argmax), hash buckets (Paddle's hash op) ---------------
define("argmax_rows", inputs=["X"], outputs=["Out"], ranks={"X": 2},
       shapes=lambda d, a: {"Out": [d["X"][0], 1]}, out_dtypes={"Out": "int64"},
       forward=lambda ins, a: {"Out": ins["X"].argmax(-1)[:, None].astype(np.int64)})

define("hash_bucket", inputs=["X"], outputs=["Out"], attrs=[("num_buckets", "int", 97)],
       shapes=lambda d, a: d and {"Out": d["X"]}, out_dtypes={"Out": "int64"},
       forward=lambda ins, a: {"Out": (np.abs(np.round(ins["X"] * 1000)).astype(np.int64)
                                       * 2654435761) % a["num_buckets"]})


# -- 14. top-k values with int64 indices (paddle.topk) ------------------------------------------
def _topk(ins, a):
    x, k = ins["X"], a["k"]
    idx = np.argsort(-x, -1, kind="stable")[:, :k]
    return {"Out": np.take_along_axis(x, idx, -1), "Indices": idx.astype(np.int64)}


define("topk_rows", inputs=["X"], outputs=["Out", "Indices"],
       attrs=[("k", "int", 2, lambda p: p.greater_than(0))], ranks={"X": 2},
       check=lambda d, a: None if d["X"][1] < 0 or a["k"] <= d["X"][1] else f"k = {a['k']} is larger than the last dim {d['X'][1]}",
       shapes=lambda d, a: {"Out": [d["X"][0], a["k"]], "Indices": [d["X"][0], a["k"]]},
       out_dtypes={"Indices": "int64"}, forward=_topk,
       grad=lambda ins, outs, d, a: {"X": _scatter(ins["X"], outs["Indices"], d["Out"])},
       grad_inputs=["X"], grad_fwd_outputs=["Indices"])


def _scatter(x, idx, g):
    out = np.zeros_like(x)
    np.put_along_axis(out, idx, g, -1)
    return out


# -- 15. an optional output: min and (when asked) max, like torch.aminmax ----------------------
def _minmax(ins, a):
    x = ins["X"]
    return {"Min": x.min(-1, keepdims=True), "Max": x.max(-1, keepdims=True)}


define("aminmax", inputs=["X"], outputs=["Min", "Max?"], ranks={"X": 2},
       shapes=lambda d, a: {"Min": d["X"][:-1] + [1], "Max": d["X"][:-1] + [1]},
       forward=_minmax)


# -- 16. an optional input: label smoothing with an optional prior (Paddle's label_smooth) ------
def _ls(ins, a):
    x, e = ins["X"], a["epsilon"]
    prior = ins["PriorDist"] if "PriorDist" in ins else np.full(x.shape[-1], 1.0 / max(x.shape[-1], 1))
    return {"Out": ((1 - e) * x + e * prior).astype(x.dtype)}


define("label_smooth_lite", inputs=["X", "PriorDist?"], outputs=["Out"],
       attrs=[("epsilon", "float", 0.1)], shapes=_same, forward=_ls,
       grad=lambda ins, outs, d, a: {"X": d["Out"] * (1 - a["epsilon"])},
       grad_inputs=["X"], grad_fwd_inputs=["X"])


# -- 17. a stateful counter declared inplace (Paddle's increment, a step counter) --------------
define("step_counter", inputs=["Step"], outputs=["StepOut"], attrs=[("step", "float", 1.0)],
       shapes=lambda d, a: {"StepOut": d["Step"]},
       forward=lambda ins, a: {"StepOut": ins["Step"] + ins["Step"].dtype.type(a["step"])},
       inplace={"Step": "StepOut"})


# -- 18. exponential moving average of a parameter (Paddle's ExponentialMovingAverage) ---------
define("ema_update", inputs=["Param", "Ema"], outputs=["EmaOut"], attrs=[("decay", "float", 0.99)],
       shapes=lambda d, a: {"EmaOut": d["Ema"]},
       forward=lambda ins, a: {"EmaOut": (a["decay"] * ins["Ema"]
                                          + (1 - a["decay"]) * ins["Param"]).astype(
                                              ins["Ema"].dtype)},
       inplace={"Ema": "EmaOut"})


# -- 19. huber loss with a saved residual (Paddle's huber_loss: Residual is intermediate) ------
def _huber(ins, a):
    r = ins["Y"] - ins["X"]
    d = a["delta"]
    ar = np.abs(r)
    return {"Out": np.where(ar <= d, 0.5 * r * r, d * (ar - 0.5 * d)).astype(r.dtype),
            "Residual": r}


def _huber_grad(ins, outs, d, a):
    r, dl = outs["Residual"], a["delta"]
    g = np.where(np.abs(r) <= dl, r, dl * np.sign(r)) * d["Out"]
    return {"X": -g, "Y": g}


define("huber_loss_lite", inputs=["X", "Y"], outputs=["Out", "Residual~"],
       attrs=[("delta", "float", 1.0)], shapes=lambda d, a: {"Out": d["X"], "Residual": d["X"]},
       forward=_huber, grad=_huber_grad, grad_inputs=["X", "Y"], grad_fwd_inputs=["X", "Y"],
       grad_fwd_outputs=["Residual"])


# -- 20. one-sided domains: acosh (x >= 1), log1p (x > -1), declared on the input ---------------
define("acosh_lite", inputs=["X"], outputs=["Out"], shapes=_same,
       forward=lambda ins, a: {"Out": np.arccosh(ins["X"])},
       grad=lambda ins, outs, d, a: {"X": d["Out"] / np.sqrt(ins["X"] ** 2 - 1)},
       grad_inputs=["X"])

define("sqrt_lite", inputs=["X"], outputs=["Out"], shapes=_same,
       forward=lambda ins, a: {"Out": np.sqrt(ins["X"])},
       grad=lambda ins, outs, d, a: {"X": d["Out"] * 0.5 / np.sqrt(ins["X"])},
       grad_inputs=["X"])


# -- 21. nan_to_num (torch.nan_to_num): NaN -> 0, infinities clamped ----------------------------
def _n2n(ins, a):
    x = ins["X"]
    big = np.finfo(x.dtype).max
    return {"Out": np.nan_to_num(x, nan=0.0, posinf=big, neginf=-big)}


define("nan_to_num", inputs=["X"], outputs=["Out"], shapes=_same, forward=_n2n,
       grad=lambda ins, outs, d, a: {"X": np.where(np.isfinite(ins["X"]), d["Out"], 0)},
       grad_inputs=["X"])


# -- 22. sigmoid cross entropy with logits and ignore_index (Paddle's op) ----------------------
def _sce(ins, a):
    x, lab = ins["X"], ins["Label"]
    loss = np.maximum(x, 0) - x * lab + np.log1p(np.exp(-np.abs(x)))
    return {"Out": np.where(lab == a["ignore_index"], 0, loss).astype(x.dtype)}


def _sce_grad(ins, outs, d, a):
    x, lab = ins["X"], ins["Label"]
    g = (1 / (1 + np.exp(-x)) - lab) * d["Out"]
    return {"X": np.where(lab == a["ignore_index"], 0, g)}


define("sigmoid_xent", inputs=["X", "Label"], outputs=["Out"],
       attrs=[("ignore_index", "int", -100)], shapes=_same, forward=_sce, grad=_sce_grad,
       grad_inputs=["X"],
       # Paddle's op gives Label no gradient on purpose; law 3 (every_grad) asks the op to
       # say so, since the loss does move with a float label
       decorate=lambda m: m.proto.input("Label").no_gradient("a label: no gradient by design"))


# -- 23. random ops with other laws: bernoulli(X) (torch.bernoulli), exponential (torch's
# Tensor.exponential_), randint (paddle.randint) -------------------------------------------------
define("bernoulli_lite", inputs=["X"], outputs=["Out"],
       attrs=[("seed", "int", 0), ("fix_seed", "bool", False)], shapes=_same,
       forward=lambda ins, a: {"Out": (_rng(a).random(ins["X"].shape) < ins["X"]).astype(
           ins["X"].dtype)})

define("exponential_lite", inputs=["X"], outputs=["Out"],
       attrs=[("lam", "float", 2.0), ("seed", "int", 0), ("fix_seed", "bool", False)],
       shapes=_same,
       forward=lambda ins, a: {"Out": _rng(a).exponential(1 / a["lam"], ins["X"].shape).astype(
           ins["X"].dtype)})

define("randint_like", inputs=["X"], outputs=["Out"],
       attrs=[("low", "int", 0), ("high", "int", 10), ("seed", "int", 0),
              ("fix_seed", "bool", False)],
       shapes=_same, out_dtypes={"Out": "int64"},
       forward=lambda ins, a: {"Out": _rng(a).integers(a["low"], a["high"],
                                                       ins["X"].shape).astype(np.int64)})


# -- 24. smooth L1 with a sigma attr (Paddle's smooth_l1_loss: Diff is intermediate) -----------
def _sl1(ins, a):
    dif = ins["X"] - ins["Y"]
    s2 = a["sigma"] ** 2
    ad = np.abs(dif)
    return {"Out": np.where(ad < 1 / s2, 0.5 * s2 * dif * dif, ad - 0.5 / s2).astype(dif.dtype),
            "Diff": dif}


def _sl1_grad(ins, outs, d, a):
    dif, s2 = outs["Diff"], a["sigma"] ** 2
    g = np.where(np.abs(dif) < 1 / s2, s2 * dif, np.sign(dif)) * d["Out"]
    return {"X": g, "Y": -g}


define("smooth_l1_lite", inputs=["X", "Y"], outputs=["Out", "Diff~"],
       attrs=[("sigma", "float", 1.0)], shapes=lambda d, a: {"Out": d["X"], "Diff": d["X"]},
       forward=_sl1, grad=_sl1_grad, grad_inputs=["X", "Y"], grad_fwd_inputs=["X", "Y"],
       grad_fwd_outputs=["Diff"])


# -- 25. log_softmax (stable) and logsumexp (torch.logsumexp) -----------------------------------
def _lsm(ins, a):
    x = ins["X"]
    m = x.max(-1, keepdims=True)
    m = np.where(np.isfinite(m), m, 0)          # a non-finite max is not subtracted
    return {"Out": x - m - np.log(np.exp(x - m).sum(-1, keepdims=True))}


define("log_softmax_lite", inputs=["X"], outputs=["Out"], shapes=_same, forward=_lsm,
       grad=lambda ins, outs, d, a: {"X": d["Out"] - np.exp(outs["Out"])
                                     * d["Out"].sum(-1, keepdims=True)},
       grad_inputs=["X"], grad_fwd_outputs=["Out"])


# -- 26. masked fill with a boolean-like mask (torch.masked_fill) ------------------------------
define("masked_fill_lite", inputs=["X", "Mask"], outputs=["Out"], attrs=[("value", "float", 0.0)],
       shapes=_same,
       forward=lambda ins, a: {"Out": np.where(ins["Mask"] > 0, ins["X"].dtype.type(a["value"]),
                                               ins["X"])},
       grad=lambda ins, outs, d, a: {"X": np.where(ins["Mask"] > 0, 0, d["Out"])},
       grad_inputs=["X"])


# -- 27. sequence mask from lengths (Paddle's sequence_mask): int input, float output ----------
define("length_mask", inputs=["Length"], outputs=["Out"], attrs=[("maxlen", "int", 6)],
       shapes=lambda d, a: {"Out": [d["Length"][0], a["maxlen"]]}, out_dtypes={"Out": "float32"},
       dtypes=("int64",),
       forward=lambda ins, a: {"Out": (np.arange(a["maxlen"])[None, :]
                                       < ins["Length"].reshape(-1, 1)).astype(np.float32)})


# -- 28. cumulative product (torch.cumprod) with zeros handled by the grad --------------------
def _cumprod_grad(ins, outs, d, a):
    x, g = ins["X"], d["Out"]
    out = np.zeros_like(x)
    n = x.shape[1]
    for j in range(n):                      # d out_k / d x_j = prod_{i<=k, i!=j} x_i
        for k in range(j, n):
            out[:, j] += g[:, k] * np.prod(np.delete(x[:, :k + 1], j, axis=1), axis=1)
    return {"X": out}


define("cumprod_rows", inputs=["X"], outputs=["Out"], shapes=_same,
       forward=lambda ins, a: {"Out": np.cumprod(ins["X"], axis=1)},
       grad=_cumprod_grad, grad_inputs=["X"])


# -- 29. clip by a tiny floor: softplus-like log(1 + exp(x)) with a threshold (torch softplus) -
def _softplus(ins, a):
    x, b, th = ins["X"], a["beta"], a["threshold"]
    return {"Out": np.where(x * b > th, x, np.log1p(np.exp(np.minimum(x * b, th))) / b).astype(
        x.dtype)}


define("softplus_th", inputs=["X"], outputs=["Out"],
       attrs=[("beta", "float", 1.0), ("threshold", "float", 20.0)], shapes=_same,
       forward=_softplus,
       grad=lambda ins, outs, d, a: {"X": np.where(ins["X"] * a["beta"] > a["threshold"],
                                                   d["Out"], d["Out"] / (1 + np.exp(
                                                       -np.minimum(ins["X"] * a["beta"],
                                                                   a["threshold"]))))},
       grad_inputs=["X"])


# -- 30. a parameter table with an explicit row gather (Paddle's gather on a parameter) --------
define("row_gather", inputs=["W", "Index"], outputs=["Out"], ranks={"W": 2, "Index": 2},
       shapes=lambda d, a: {"Out": [d["Index"][0], d["W"][1]]},
       forward=lambda ins, a: {"Out": ins["W"][ins["Index"].reshape(-1)]},
       grad=lambda ins, outs, d, a: {"W": _gather_grad(ins["W"], ins["Index"], d["Out"])},
       grad_inputs=["W"])


def _gather_grad(w, idx, g):
    out = np.zeros_like(w)
    np.add.at(out, idx.reshape(-1), g)
    return out
