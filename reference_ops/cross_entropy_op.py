"""cross_entropy: Y = -log(X[label]) (hard labels) or -sum(Label * log(X)) (soft)."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, GradOpMaker, register_operator,
                   register_kernel, grad_var_name, enforce, errors)
from opkit.framework import domains as D


class CrossEntropyOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor, default Tensor<float>) A tensor of rank >= 2 whose last "
                       "dimension holds the class probabilities (the output of softmax).")
        self.add_input("Label", "(Tensor) The ground truth: int64 class indices with last "
                       "dimension 1 (hard labels), or a probability tensor of X's shape "
                       "(soft_label = true).")
        self.add_output("Y", "(Tensor) The cross entropy, X's shape with last dimension 1.")
        self.add_attr("soft_label", "bool", "(bool, default false) Whether Label holds soft "
                      "labels (distributions) instead of class indices.").set_default(False)
        self.add_attr("ignore_index", "int", "(int, default -100) A hard label equal to this "
                      "value contributes zero loss and zero gradient.").set_default(-100)
        # declared domains (docs/domains.md)
        self.proto.input("X").set_domain(D.probabilities())
        self.proto.input("Label").set_domain(D.integers(0, D.dim("X", -1)))
        self.add_comment(r"""CrossEntropy Operator.

Hard labels (soft_label = false):
$$Y[i] = -\log(X[i, Label[i]])$$
(0 where Label[i] = ignore_index). Soft labels:
$$Y[i] = -\sum_{j} Label[i, j] \log(X[i, j])$$
""")


class CrossEntropyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of CrossEntropyOp should not be null.")
        enforce(ctx.has_input("Label"), "Input(Label) of CrossEntropyOp should not be null.")
        enforce(ctx.has_output("Y"), "Output(Y) of CrossEntropyOp should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        label_dims = list(ctx.get_input_dim("Label"))
        # hard labels may drop the trailing 1: Label of rank(X) - 1 (Y then has Label's dims)
        drop_last = not ctx.attr("soft_label") and len(label_dims) == len(x_dims) - 1
        enforce(len(x_dims) >= 1 and (len(x_dims) == len(label_dims) or drop_last),
                errors.InvalidArgument(
                    "Input(Label) of CrossEntropyOp should have X's rank (or, for hard labels, "
                    "one less), but X has shape %s and Label has shape %s.",
                    x_dims, label_dims))
        for i, (a, b) in enumerate(zip(x_dims[:-1], label_dims[:-1])):
            enforce(a < 0 or b < 0 or a == b, errors.InvalidArgument(
                "Input(X) and Input(Label) of CrossEntropyOp should agree on every dimension "
                "but the last, but X has shape %s and Label has shape %s (dim %d).",
                x_dims, label_dims, i))
        if ctx.attr("soft_label"):
            enforce(x_dims[-1] < 0 or label_dims[-1] < 0 or x_dims[-1] == label_dims[-1],
                    errors.InvalidArgument(
                        "With soft_label = true, the last dimension of Input(Label) should equal "
                        "that of Input(X), but X has shape %s and Label has shape %s.",
                        x_dims, label_dims))
        elif not drop_last:
            enforce(label_dims[-1] == 1 or label_dims[-1] < 0, errors.InvalidArgument(
                "With soft_label = false, the last dimension of Input(Label) should be 1, but "
                "Label has shape %s.", label_dims))
        ctx.set_output_dim("Y", x_dims[:-1] if drop_last else x_dims[:-1] + [1])
        ctx.share_lod("X", "Y")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


class CrossEntropyGradMaker(GradOpMaker):
    def apply(self):
        op = self.new_grad_op("cross_entropy_grad")
        op.set_input("X", self.input("X"))
        op.set_input("Label", self.input("Label"))
        op.set_input(grad_var_name("Y"), self.output_grad("Y"))
        op.set_output(grad_var_name("X"), self.input_grad("X"))
        return [op]


class CrossEntropyGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), "Input(X) of CrossEntropyGradOp should not be null.")
        enforce(ctx.has_input("Label"), "Input(Label) of CrossEntropyGradOp should not be null.")
        enforce(ctx.has_input(grad_var_name("Y")),
                "Input(Y@GRAD) of CrossEntropyGradOp should not be null.")
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))
        ctx.share_lod("X", grad_var_name("X"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)


register_operator("cross_entropy", CrossEntropyOp, CrossEntropyOpMaker,
                  grad_maker=CrossEntropyGradMaker)
register_operator("cross_entropy_grad", CrossEntropyGradOp)


def _hard_labels(xp, x2, label, ignore_index):
    lab = xp.reshape(label, (-1,)).astype("int64")
    valid = lab != ignore_index
    classes = x2.shape[1]
    ok = (~valid) | ((lab >= 0) & (lab < classes))
    enforce(bool(xp.all(ok)), errors.InvalidArgument(
        "Input(Label) of CrossEntropyOp holds a class index outside [0, %d): %s.",
        classes, [int(v) for v in lab[~ok][:5]]))
    safe = xp.where(valid, lab, 0)
    return safe, valid


@register_kernel("cross_entropy", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def cross_entropy_kernel(ctx):
    xp = ctx.xp
    x, label = ctx.input("X"), ctx.input("Label")
    x2 = xp.reshape(x, (-1, x.shape[-1]) if x.ndim else (1, 1))
    drop_last = not ctx.attr("soft_label") and label.ndim == x.ndim - 1
    out_shape = tuple(x.shape[:-1]) + (() if drop_last else (1,))
    if ctx.attr("soft_label"):
        lab2 = xp.reshape(label, x2.shape).astype(x.dtype)
        y = -xp.sum(lab2 * xp.log(x2), axis=1)
    else:
        safe, valid = _hard_labels(xp, x2, label, ctx.attr("ignore_index"))
        picked = x2[xp.arange(x2.shape[0]), safe]
        y = xp.where(valid, -xp.log(picked), xp.zeros_like(picked))
    ctx.set_output("Y", xp.reshape(y, out_shape).astype(x.dtype))


@register_kernel("cross_entropy_grad", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def cross_entropy_grad_kernel(ctx):
    xp = ctx.xp
    x, label = ctx.input("X"), ctx.input("Label")
    dy = ctx.input(grad_var_name("Y"))
    x2 = xp.reshape(x, (-1, x.shape[-1]))
    dy1 = xp.reshape(dy, (-1, 1))
    if ctx.attr("soft_label"):
        lab2 = xp.reshape(label, x2.shape).astype(x.dtype)
        dx = -dy1 * lab2 / x2
    else:
        safe, valid = _hard_labels(xp, x2, label, ctx.attr("ignore_index"))
        rows = xp.arange(x2.shape[0])
        dx = xp.zeros_like(x2)
        vals = xp.where(valid, -dy1[:, 0] / x2[rows, safe], xp.zeros_like(dy1[:, 0]))
        dx[rows, safe] = vals
    ctx.set_output(grad_var_name("X"), xp.reshape(dx, x.shape))


# -- parallel signatures (docs/sbp.md) -------------------------------------------------------
from opkit import register_sbp  # noqa: E402
from opkit.sbp import Signature, Where, broadcast, partial_sum, split  # noqa: E402
from reference_ops._sbp import G  # noqa: E402

_ROWS = Where("i < rank(X) - 1", lambda c, i: i < c.ndim("X") - 1)
_SOFT = Where("attr(soft_label)", lambda c, i: bool(c.attr("soft_label")))
# any axis but the classes; with soft labels the classes too: Y is then a partial sum
# (hard labels would need each device to know which ids it holds)
register_sbp("cross_entropy",
             Signature({"X": split("i"), "Label": split("i"), "Y": split("i")}, each="X",
                       where=_ROWS),
             Signature({"X": split(-1), "Label": split(-1), "Y": partial_sum}, where=_SOFT))
register_sbp("cross_entropy_grad",
             Signature({"X": split("i"), "Label": split("i"), G("Y"): split("i"),
                        G("X"): split("i")}, each="X", where=_ROWS),
             Signature({"X": split(-1), "Label": split(-1), G("Y"): broadcast,
                        G("X"): split(-1)}, where=_SOFT),
             Signature({"X": broadcast, "Label": broadcast, G("Y"): partial_sum,
                        G("X"): partial_sum}))
