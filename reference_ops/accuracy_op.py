"""accuracy: the fraction of samples whose label is among the top-k predictions."""
from opkit import (OpMaker, OperatorWithKernel, OpKernelType, register_operator,
                   register_kernel, enforce, errors)


class AccuracyOpMaker(OpMaker):
    def make(self):
        self.add_input("Out", "(Tensor) The top-k prediction scores, shape [N, k].")
        self.add_input("Indices", "(Tensor, int64) The top-k class indices, shape [N, k].")
        self.add_input("Label", "(Tensor, int64) The ground-truth labels, shape [N, 1].")
        self.add_output("Accuracy", "(Tensor, float32) The accuracy, shape [1].")
        self.add_output("Correct", "(Tensor, int32) The number of correct samples, shape [1].")
        self.add_output("Total", "(Tensor, int32) The number of samples, shape [1].")
        self.add_comment(r"""Accuracy Operator.

A sample is correct when its label is among its top-k predicted indices:
$$Accuracy = \frac{Correct}{Total} = \frac{1}{N} \sum_{i} [Label_i \in Indices_{i,:}]$$
""")


class AccuracyOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        for slot in ("Out", "Indices", "Label"):
            enforce(ctx.has_input(slot), "Input(%s) of AccuracyOp should not be null.", slot)
        for slot in ("Accuracy", "Correct", "Total"):
            enforce(ctx.has_output(slot), "Output(%s) of AccuracyOp should not be null.", slot)
        inf_dims = list(ctx.get_input_dim("Out"))
        idx_dims = list(ctx.get_input_dim("Indices"))
        label_dims = list(ctx.get_input_dim("Label"))
        enforce(len(idx_dims) == 2 and len(label_dims) == 2, errors.InvalidArgument(
            "Input(Indices) and Input(Label) of AccuracyOp should be 2-D, but Indices has "
            "shape %s and Label has shape %s.", idx_dims, label_dims))
        enforce(label_dims[1] in (1, -1), errors.InvalidArgument(
            "Input(Label) of AccuracyOp should have shape [N, 1], but its shape is %s.",
            label_dims))
        enforce(inf_dims == idx_dims or -1 in inf_dims or -1 in idx_dims, errors.InvalidArgument(
            "Input(Out) and Input(Indices) of AccuracyOp should have the same shape, but Out "
            "has shape %s and Indices has shape %s.", inf_dims, idx_dims))
        n_idx, n_label = idx_dims[0], label_dims[0]
        enforce(n_idx < 0 or n_label < 0 or n_idx == n_label, errors.InvalidArgument(
            "Input(Indices) and Input(Label) of AccuracyOp should have the same number of "
            "samples, but Indices has shape %s and Label has shape %s.", idx_dims, label_dims))
        ctx.set_output_dim("Accuracy", [1])
        ctx.set_output_dim("Correct", [1])
        ctx.set_output_dim("Total", [1])
        ctx.set_output_dtype("Accuracy", "float32")
        ctx.set_output_dtype("Correct", "int32")
        ctx.set_output_dtype("Total", "int32")

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "Out"), ctx.place)


register_operator("accuracy", AccuracyOp, AccuracyOpMaker)


@register_kernel("accuracy", place=("CPU", "GPU"), dtypes=("float32", "float64"))
def accuracy_kernel(ctx):
    xp = ctx.xp
    indices = ctx.input("Indices")
    label = xp.reshape(ctx.input("Label"), (-1, 1))
    total = int(indices.shape[0])
    correct = int(xp.sum(xp.any(indices == label, axis=1))) if total else 0
    acc = correct / total if total else 0.0
    ctx.set_output("Accuracy", xp.asarray([acc], dtype="float32"))
    ctx.set_output("Correct", xp.asarray([correct], dtype="int32"))
    ctx.set_output("Total", xp.asarray([total], dtype="int32"))
