"""Broken ops for the execution-mode checks, each with a correct twin (`good_*`). Each bug
shows only when the framework runs the op in one particular way, never in an OpTest's plain
run (see tests/broken_ops/README.md):

| broken op | bug | fails |
| --- | --- | --- |
| broken_inplace_sigmoid | declares X -> Out inplace, its grad kernel reads X (the output, once overwritten) | inplace |
| broken_inplace_axpy | in place, writes a*X into Out (X's buffer) before reading Y: wrong when Y is X's variable | inplace (variant repeated_input) |
| broken_undeclared_exp | the grad kernel fetches the forward's Out from the scope by name, undeclared | declared_inputs |
| broken_nnb_fill | declares X no_need_buffer, the forward kernel reads X's data | declared_inputs |
| broken_scratch_softmax | a module-level scratch buffer shared by every call | concurrency |
| broken_sparse_sgd | `param[rows] -= lr * values`: one update per duplicate row is lost | sparse |
| broken_reuse_scale | keeps its output array per op and writes the next run's result into it | plan |

Modelled on real reports: an inplace activation whose grad needs X (PaddlePaddle/Paddle#17960:
"inplace op is overwriting X and we may need X for grad op"; pytorch/pytorch#1029, different
gradients for relu inplace=True/False); sparse Adam applying duplicate rows one by one
(PaddlePaddle/Paddle#7045: "FIXME: row id may be duplicate", sparse Adagrad merges rows first);
grad ops and memory optimization dropping undeclared variables and no_need_buffer data (Paddle's
garbage collector); module-level scratch buffers in kernels run by multi-threaded predictors.
"""
import weakref

import numpy as np

from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, OpKernelType, SelectedRows,
                   grad_var_name, register_kernel, register_operator)

GX, GY, GOUT = grad_var_name("X"), grad_var_name("Y"), grad_var_name("Out")


class _Same(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


class _SameGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(GX, ctx.get_input_dim(GOUT))


def _maker(inputs=("X",), attrs=()):
    class Maker(OpMaker):
        def make(self):
            for name in inputs:
                self.add_input(name, f"(Tensor) input {name}.")
            self.add_output("Out", "(Tensor) output.")
            for name, kind, default, doc in attrs:
                self.add_attr(name, kind, doc, default)
            self.add_comment("A deliberately broken op (or its correct twin).")
    return Maker


def _grad_maker(grad_type, fwd_inputs=(), fwd_outputs=(), grads=("X",)):
    class Maker(GradOpMaker):
        def apply(self):
            op = self.new_grad_op(grad_type)
            for slot in fwd_inputs:
                op.set_input(slot, self.input(slot))
            for slot in fwd_outputs:
                op.set_input(slot, self.output(slot))
            op.set_input(GOUT, self.output_grad("Out"))
            for slot in grads:
                op.set_output(grad_var_name(slot), self.input_grad(slot))
            return [op]
    return Maker


# -- inplace: a grad op that reads the input the in-place forward overwrote --------------------
def sigmoid_kernel(ctx):
    x = ctx.input("X")
    out = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)    # X's buffer in place
    np.divide(1.0, 1.0 + np.exp(-x), out=out)


def broken_sigmoid_grad_kernel(ctx):
    x = ctx.input("X")                      # BUG: X is Out's buffer once the forward ran in place
    s = 1.0 / (1.0 + np.exp(-x))
    ctx.set_output(GX, ctx.input(GOUT) * s * (1.0 - s))


def good_sigmoid_grad_kernel(ctx):
    out = ctx.input("Out")                  # what an inplace activation's grad may read
    ctx.set_output(GX, ctx.input(GOUT) * out * (1.0 - out))


register_operator("broken_inplace_sigmoid", _Same, _maker(), inplace={"X": "Out"},
                  grad_maker=_grad_maker("broken_inplace_sigmoid_grad", fwd_inputs=("X",)))
register_operator("broken_inplace_sigmoid_grad", _SameGrad)
register_operator("good_inplace_sigmoid", _Same, _maker(), inplace={"X": "Out"},
                  grad_maker=_grad_maker("good_inplace_sigmoid_grad", fwd_outputs=("Out",)))
register_operator("good_inplace_sigmoid_grad", _SameGrad)
register_kernel("broken_inplace_sigmoid")(sigmoid_kernel)
register_kernel("good_inplace_sigmoid")(sigmoid_kernel)
register_kernel("broken_inplace_sigmoid_grad")(broken_sigmoid_grad_kernel)
register_kernel("good_inplace_sigmoid_grad")(good_sigmoid_grad_kernel)


# -- inplace with one variable in two slots: Out = a X + Y, X -> Out in place ----------------
class _Axpy(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class _AxpyGrad(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(GX, ctx.get_input_dim(GOUT))
        ctx.set_output_dim(GY, ctx.get_input_dim(GOUT))


def broken_axpy_kernel(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    out = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)
    np.multiply(x, ctx.attr("a"), out=out)     # BUG: overwrites Y too when Y is X's variable
    out += y


def good_axpy_kernel(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    out = ctx.output_tensor("Out").mutable_data(x.shape, x.dtype)
    np.add(x * ctx.attr("a"), y, out=out)      # every element of Y read before it is written


def axpy_grad_kernel(ctx):
    dout = ctx.input(GOUT)
    ctx.set_output(GX, dout * ctx.attr("a"))
    ctx.set_output(GY, dout.copy())


for _t, _k in (("broken_inplace_axpy", broken_axpy_kernel), ("good_inplace_axpy", good_axpy_kernel)):
    register_operator(_t, _Axpy, _maker(("X", "Y"), [("a", "float", 2.0, "the factor")]),
                      inplace={"X": "Out"}, grad_maker=_grad_maker(_t + "_grad", grads=("X", "Y")))
    register_operator(_t + "_grad", _AxpyGrad)
    register_kernel(_t)(_k)
    register_kernel(_t + "_grad")(axpy_grad_kernel)


# -- declared_inputs: a grad kernel that fetches an undeclared forward variable ---------------
def exp_kernel(ctx):
    ctx.set_output("Out", np.exp(ctx.input("X")))


def broken_exp_grad_kernel(ctx):
    dout_name = ctx.input_names(GOUT)[0]
    fwd_out = dout_name[: -len("@GRAD")]              # BUG: Out is not an input of this op
    out = ctx.scope.find_var(fwd_out).value().data
    ctx.set_output(GX, ctx.input(GOUT) * out)


def good_exp_grad_kernel(ctx):
    ctx.set_output(GX, ctx.input(GOUT) * ctx.input("Out"))


register_operator("broken_undeclared_exp", _Same, _maker(),
                  grad_maker=_grad_maker("broken_undeclared_exp_grad"))
register_operator("broken_undeclared_exp_grad", _SameGrad)
register_operator("good_undeclared_exp", _Same, _maker(),
                  grad_maker=_grad_maker("good_undeclared_exp_grad", fwd_outputs=("Out",)))
register_operator("good_undeclared_exp_grad", _SameGrad)
for _t in ("broken_undeclared_exp", "good_undeclared_exp"):
    register_kernel(_t)(exp_kernel)
register_kernel("broken_undeclared_exp_grad")(broken_exp_grad_kernel)
register_kernel("good_undeclared_exp_grad")(good_exp_grad_kernel)


# -- declared_inputs: a forward kernel that reads a no_need_buffer input's data ----------------
def broken_fill_kernel(ctx):
    x = ctx.input("X")                                 # BUG: X is declared no_need_buffer
    ctx.set_output("Out", np.zeros_like(x) + ctx.attr("value"))


def good_fill_kernel(ctx):
    t = ctx.input_tensor("X")                          # shape and dtype only
    ctx.set_output("Out", np.full(t.shape, ctx.attr("value"), dtype=t.dtype))


for _t, _k in (("broken_nnb_fill", broken_fill_kernel), ("good_nnb_fill", good_fill_kernel)):
    register_operator(_t, _Same, _maker(attrs=[("value", "float", 0.0, "the fill value")]),
                      no_need_buffer=["X"])
    register_kernel(_t)(_k)


# -- concurrency: a module-level scratch buffer ---------------------------------------------
_SCRATCH = {}


def broken_softmax_kernel(ctx):
    x = ctx.input("X")
    buf = _SCRATCH.setdefault((x.shape, x.dtype.str), np.empty_like(x))   # BUG: shared by calls
    np.subtract(x, x.max(axis=-1, keepdims=True), out=buf)
    np.exp(buf, out=buf)
    ctx.set_output("Out", buf / buf.sum(axis=-1, keepdims=True))


def good_softmax_kernel(ctx):
    x = ctx.input("X")
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    ctx.set_output("Out", e / e.sum(axis=-1, keepdims=True))


def softmax_grad_kernel(ctx):
    out, dout = ctx.input("Out"), ctx.input(GOUT)
    ctx.set_output(GX, out * (dout - (dout * out).sum(axis=-1, keepdims=True)))


for _t, _k in (("broken_scratch_softmax", broken_softmax_kernel),
               ("good_scratch_softmax", good_softmax_kernel)):
    register_operator(_t, _Same, _maker(),
                      grad_maker=_grad_maker(_t + "_grad", fwd_outputs=("Out",)))
    register_operator(_t + "_grad", _SameGrad)
    register_kernel(_t)(_k)
    register_kernel(_t + "_grad")(softmax_grad_kernel)


# -- sparse: an update applied once per duplicate row ---------------------------------------
class _Sgd(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("ParamOut", ctx.get_input_dim("Param"))

    def get_expected_kernel_type(self, ctx):
        return OpKernelType(self.indicate_var_data_type(ctx, "Param"), ctx.place)


class _SgdMaker(OpMaker):
    def make(self):
        self.add_input("Param", "(Tensor) parameter.")
        self.add_input("Grad", "(Tensor or SelectedRows) gradient.")
        self.add_input("LearningRate", "(Tensor) one element.")
        self.add_output("ParamOut", "(Tensor) updated parameter.")
        self.add_comment("ParamOut = Param - LearningRate * Grad (a broken op or its twin).")


def _sgd_kernel(broken):
    def kernel(ctx):
        param = ctx.input("Param")
        lr = ctx.input("LearningRate").reshape(-1)[0]
        grad = ctx.input_var("Grad").value()
        if not isinstance(grad, SelectedRows):
            ctx.set_output("ParamOut", param - lr * ctx.input("Grad"))
            return
        out = param.copy()
        rows = np.asarray(grad.rows, dtype=np.int64)
        if broken:
            out[rows] -= lr * ctx.input("Grad")      # BUG: a duplicate row keeps one update
        else:
            np.subtract.at(out, rows, lr * ctx.input("Grad"))
        ctx.set_output("ParamOut", out)
    return kernel


for _t, _b in (("broken_sparse_sgd", True), ("good_sparse_sgd", False)):
    register_operator(_t, _Sgd, _SgdMaker)
    register_kernel(_t)(_sgd_kernel(_b))


# -- plan: an output array kept per op and written again by the next run ----------------------
_LAST = weakref.WeakKeyDictionary()


def broken_reuse_kernel(ctx):
    x = ctx.input("X")
    buf = _LAST.get(ctx.op)
    if buf is None or buf.shape != x.shape or buf.dtype != x.dtype:
        buf = _LAST[ctx.op] = np.empty_like(x)
    np.multiply(x, 2.0, out=buf)                  # BUG: writes into the array it handed out
    ctx.set_output("Out", buf)


def good_reuse_kernel(ctx):
    ctx.set_output("Out", np.multiply(ctx.input("X"), 2.0))


def double_grad_kernel(ctx):
    ctx.set_output(GX, ctx.input(GOUT) * 2.0)


for _t, _k in (("broken_reuse_scale", broken_reuse_kernel), ("good_reuse_scale", good_reuse_kernel)):
    register_operator(_t, _Same, _maker(), grad_maker=_grad_maker(_t + "_grad"))
    register_operator(_t + "_grad", _SameGrad)
    register_kernel(_t)(_k)
    register_kernel(_t + "_grad")(double_grad_kernel)
