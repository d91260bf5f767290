"""broken_alias_identity: Out = X handed out as the input's own (read-only) view, no inplace
declared; good_alias_identity copies."""
from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name, register_kernel,
                   register_operator)


class AliasIdentityOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) X.")
        self.add_comment("Out = X")


class AliasIdentityOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class AliasIdentityGradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim(grad_var_name("Out")))


def _maker(grad_type):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]
    return Maker


for _t in ("broken_alias_identity", "good_alias_identity"):
    register_operator(_t, AliasIdentityOp, AliasIdentityOpMaker, grad_maker=_maker(_t + "_grad"))
    register_operator(_t + "_grad", AliasIdentityGradOp)


@register_kernel("broken_alias_identity", place=("CPU", "GPU"))
def broken_alias_identity_kernel(ctx):
    ctx.set_output("Out", ctx.input("X"))            # BUG: Out shares X's buffer


@register_kernel("good_alias_identity", place=("CPU", "GPU"))
def good_alias_identity_kernel(ctx):
    ctx.set_output("Out", ctx.input("X").copy())


@register_kernel("broken_alias_identity_grad", place=("CPU", "GPU"))
@register_kernel("good_alias_identity_grad", place=("CPU", "GPU"))
def alias_identity_grad_kernel(ctx):
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")).copy())
