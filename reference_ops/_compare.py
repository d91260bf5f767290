"""The compare ops (equal, not_equal, greater_than, greater_equal, less_equal, less_than),
built from one table row each.

Not an op module (no ``_op.py`` suffix): each ``<op_type>_op.py`` calls
``build_compare(op_type)`` (it registers the kernel and returns the classes that the op file
registers, so that the registry names that file as the op's source).

As Paddle's compare ops (Fluid 1.8): Y is broadcast onto X from ``axis`` as in the
elementwise ops (rank(Y) <= rank(X)), Out is a bool tensor of X's
shape with X's LoD, there is no gradient, ``force_cpu`` keeps the kernel on the CPU, and
float32, float64, int32 and int64 inputs are accepted.
"""
from __future__ import annotations

from types import SimpleNamespace

from opkit import OperatorWithKernel, OpKernelType, OpMaker, enforce, register_kernel
from reference_ops._common import broadcast_y, elementwise_y_view_shape

__all__ = ["COMPARES", "build_compare"]

# int8 / uint8 / int16: Paddle 2.x
DTYPES = ("float32", "float64", "int32", "int64", "int8", "uint8", "int16")

# op_type -> (symbol, numpy function name)
COMPARES = {
    "equal": ("==", "equal"),
    "not_equal": ("!=", "not_equal"),
    "greater_than": (">", "greater"),
    "greater_equal": (">=", "greater_equal"),
    "less_equal": ("<=", "less_equal"),
    "less_than": ("<", "less"),
}


def _camel(op_type: str) -> str:
    return "".join(p.capitalize() for p in op_type.split("_"))


def build_compare(op_type: str) -> SimpleNamespace:
    symbol, fn_name = COMPARES[op_type]
    name = _camel(op_type)

    def make(self):
        self.add_input("X", "(Tensor) The left-hand side of the comparison.")
        self.add_input("Y", "(Tensor) The right-hand side of the comparison, of X's shape or "
                       "broadcast onto X from `axis` (as in the elementwise ops).")
        self.add_output("Out", f"(Tensor, bool) X {symbol} Y element-wise, of X's shape.")
        self.add_attr("axis", "int", "(int, default -1) The dimension of X that Y's first "
                      "dimension lines up with; -1: rank(X) - rank(Y).", default=-1)
        self.add_attr("force_cpu", "bool", "(bool, default false) Compute on the CPU even "
                      "when the program runs on a GPU.", default=False)
        self.add_comment(f"{name} operator.\n\nCompares X and Y element-wise (Y broadcast "
                         f"onto X as in the elementwise ops):\n$$Out = X {symbol} Y$$\nOut "
                         "is a bool tensor of X's shape; it has no gradient.\n")

    def infer_shape(self, ctx):
        enforce(ctx.has_input("X"), f"Input(X) of {name}Op should not be null.")
        enforce(ctx.has_input("Y"), f"Input(Y) of {name}Op should not be null.")
        enforce(ctx.has_output("Out"), f"Output(Out) of {name}Op should not be null.")
        x_dims = list(ctx.get_input_dim("X"))
        elementwise_y_view_shape(x_dims, list(ctx.get_input_dim("Y")), ctx.attr("axis"))
        ctx.set_output_dim("Out", x_dims)
        ctx.set_output_dtype("Out", "bool")
        ctx.share_lod("X", "Out")

    def get_expected_kernel_type(self, ctx):
        kt = OpKernelType(self.indicate_var_data_type(ctx, "X"), ctx.place)
        if ctx.attr("force_cpu"):
            from opkit import CPUPlace

            kt = OpKernelType(kt.dtype, CPUPlace())
        return kt

    maker = type(f"{name}OpMaker", (OpMaker,), {"make": make, "__module__": __name__})
    op_cls = type(f"{name}Op", (OperatorWithKernel,),
                  {"infer_shape": infer_shape,
                   "get_expected_kernel_type": get_expected_kernel_type,
                   "__module__": __name__})

    def kernel(ctx):
        xp = ctx.xp
        x, y = ctx.input("X"), ctx.input("Y")
        yb, _ = broadcast_y(xp, x, y, ctx.attr("axis"))
        ctx.set_output("Out", getattr(xp, fn_name)(x, yb))

    kernel.__name__ = f"{op_type}_kernel"
    register_kernel(op_type, place=("CPU", "GPU"), dtypes=DTYPES)(kernel)
    _declare_sbp(op_type)
    return SimpleNamespace(op=op_cls, maker=maker)


def _declare_sbp(op_type: str) -> None:
    """The parallel signatures (docs/sbp.md): Out has X's shape; split X and Out along any
    axis and Y along the axis that X's comes from (broadcast where Y has size 1 or lacks it)."""
    from opkit import register_sbp
    from opkit.sbp import Signature, split
    from reference_ops._sbp import elementwise_input_axis

    register_sbp(op_type, Signature({"X": split("i"), "Y": split(elementwise_input_axis("Y")),
                                     "Out": split("i")}, each="X"))
