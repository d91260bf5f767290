"""The red team of issue 46: custom ops written with torch.library the way people write
them, each broken in one way, each with a correct twin (namespace `rt`; the twin's name ends
in `_ok`). Importing this module registers them all."""
import numpy as np
import torch

LIB = torch.library.Library("rt", "FRAGMENT")      # for the op custom_op would not accept


def _fake_like(op):
    @op.register_fake
    def _(x, *rest):
        return torch.empty_like(x)

    return op


# 1. a wrong backward: the chain rule's incoming gradient forgotten --------------------------
def _softsign(x):
    return x / (1 + x.abs())


@torch.library.custom_op("rt::softsign_bad_grad", mutates_args=())
def softsign_bad_grad(x: torch.Tensor) -> torch.Tensor:
    return _softsign(x)


@torch.library.custom_op("rt::softsign_bad_grad_ok", mutates_args=())
def softsign_bad_grad_ok(x: torch.Tensor) -> torch.Tensor:
    return _softsign(x)


def _save_x(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _nothing(ctx, inputs, output):
    pass


def _softsign_grad_wrong(ctx, grad):
    (x,) = ctx.saved_tensors
    return 1 / (1 + x.abs()) ** 2                   # forgot `grad *`


def _softsign_grad(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad / (1 + x.abs()) ** 2


for _op in (softsign_bad_grad, softsign_bad_grad_ok):
    _fake_like(_op)
softsign_bad_grad.register_autograd(_softsign_grad_wrong, setup_context=_save_x)
softsign_bad_grad_ok.register_autograd(_softsign_grad, setup_context=_save_x)


# 2. a fake kernel that disagrees with the real one (the dtype) ------------------------------
@torch.library.custom_op("rt::square_bad_fake", mutates_args=())
def square_bad_fake(x: torch.Tensor) -> torch.Tensor:
    return x * x


@square_bad_fake.register_fake
def _(x):
    return x.new_empty(x.shape, dtype=torch.float32)     # the real kernel keeps x's dtype


@torch.library.custom_op("rt::square_bad_fake_ok", mutates_args=())
def square_bad_fake_ok(x: torch.Tensor) -> torch.Tensor:
    return x * x


_fake_like(square_bad_fake_ok)


def _square_grad(ctx, grad):
    (x,) = ctx.saved_tensors
    return 2 * x * grad


for _op in (square_bad_fake, square_bad_fake_ok):
    _op.register_autograd(_square_grad, setup_context=_save_x)


# 3. an undeclared write: normalises its input in place --------------------------------------
@torch.library.custom_op("rt::scale_inplace_undeclared", mutates_args=())
def scale_inplace_undeclared(x: torch.Tensor) -> torch.Tensor:
    x.mul_(0.5)                                   # the schema says x is not written
    return x * 4


@torch.library.custom_op("rt::scale_inplace_undeclared_ok", mutates_args=())
def scale_inplace_undeclared_ok(x: torch.Tensor) -> torch.Tensor:
    return (x * 0.5) * 4


def _double_grad(ctx, grad):
    return 2 * grad


for _op in (scale_inplace_undeclared, scale_inplace_undeclared_ok):
    _fake_like(_op)
    _op.register_autograd(_double_grad, setup_context=_nothing)


# 4. a returned view where the schema promises a new tensor (define + impl, as a C++
#    extension registers: custom_op itself refuses aliasing outputs at run time) ----------
LIB.define("flatten_view(Tensor x) -> Tensor")
LIB.impl("flatten_view", lambda x: x.reshape(-1), "CompositeExplicitAutograd")
LIB.define("flatten_view_ok(Tensor x) -> Tensor")
LIB.impl("flatten_view_ok", lambda x: x.reshape(-1).clone(), "CompositeExplicitAutograd")
for _name in ("flatten_view", "flatten_view_ok"):
    LIB.impl(_name, lambda x: x.new_empty(x.numel()), "Meta")


# 5. a kernel that reads a stale buffer (a scratch tensor cached per shape, not cleared) ----
_SCRATCH = {}


@torch.library.custom_op("rt::running_sum_stale", mutates_args=())
def running_sum_stale(x: torch.Tensor) -> torch.Tensor:
    buf = _SCRATCH.setdefault((tuple(x.shape), x.dtype), torch.zeros_like(x))
    buf.add_(x)                                   # the last call's sum is still in there
    return buf.cumsum(-1)


@torch.library.custom_op("rt::running_sum_stale_ok", mutates_args=())
def running_sum_stale_ok(x: torch.Tensor) -> torch.Tensor:
    buf = _SCRATCH.setdefault(("ok", tuple(x.shape), x.dtype), torch.zeros_like(x))
    buf.zero_()
    buf.add_(x)
    return buf.cumsum(-1)


def _cumsum_grad(ctx, grad):
    return grad.flip(-1).cumsum(-1).flip(-1)


for _op in (running_sum_stale, running_sum_stale_ok):
    _fake_like(_op)
    _op.register_autograd(_cumsum_grad, setup_context=_nothing)


# 6. a kernel correct only for contiguous inputs (reads the storage as if row-major) --------
def _rowwise_scale(a):
    return a * np.arange(1, a.shape[-1] + 1)


@torch.library.custom_op("rt::row_scale_contiguous_only", mutates_args=())
def row_scale_contiguous_only(x: torch.Tensor) -> torch.Tensor:
    flat = x.as_strided((x.numel(),), (1,))       # assumes x is contiguous
    data = flat.detach().numpy().reshape(x.shape)
    return torch.from_numpy(_rowwise_scale(data)).to(x.dtype)


@torch.library.custom_op("rt::row_scale_contiguous_only_ok", mutates_args=())
def row_scale_contiguous_only_ok(x: torch.Tensor) -> torch.Tensor:
    data = x.detach().contiguous().numpy()
    return torch.from_numpy(_rowwise_scale(data)).to(x.dtype)


def _row_scale_grad(ctx, grad):
    return grad * torch.arange(1, grad.shape[-1] + 1, dtype=grad.dtype)


for _op in (row_scale_contiguous_only, row_scale_contiguous_only_ok):
    _fake_like(_op)
    _op.register_autograd(_row_scale_grad, setup_context=_nothing)


# 7. a backward wrong when only some inputs need a gradient (needs_input_grad misread) -----
@torch.library.custom_op("rt::mul_partial_grad", mutates_args=())
def mul_partial_grad(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * y


@torch.library.custom_op("rt::mul_partial_grad_ok", mutates_args=())
def mul_partial_grad_ok(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * y


def _mul_setup(ctx, inputs, output):
    ctx.save_for_backward(*inputs)


def _mul_grad_wrong(ctx, grad):
    x, y = ctx.saved_tensors
    if ctx.needs_input_grad[0] and not ctx.needs_input_grad[1]:
        return grad * x, None                    # the other input's factor: wrong
    return grad * y, grad * x


def _mul_grad(ctx, grad):
    x, y = ctx.saved_tensors
    return (grad * y if ctx.needs_input_grad[0] else None,
            grad * x if ctx.needs_input_grad[1] else None)


for _op in (mul_partial_grad, mul_partial_grad_ok):
    _fake_like(_op)
mul_partial_grad.register_autograd(_mul_grad_wrong, setup_context=_mul_setup)
mul_partial_grad_ok.register_autograd(_mul_grad, setup_context=_mul_setup)


# 8. a kernel that fails on an empty input (a reduction with no identity) -----------------
@torch.library.custom_op("rt::center_rows_empty", mutates_args=())
def center_rows_empty(x: torch.Tensor) -> torch.Tensor:
    return x - x.max(dim=-1, keepdim=True).values + x.amax()   # amax() of nothing raises


@torch.library.custom_op("rt::center_rows_empty_ok", mutates_args=())
def center_rows_empty_ok(x: torch.Tensor) -> torch.Tensor:
    if x.numel() == 0:
        return x.clone()
    return x - x.max(dim=-1, keepdim=True).values + x.amax()


for _op in (center_rows_empty, center_rows_empty_ok):
    _fake_like(_op)


# 9. float64 computed in float32 inside (a kernel that casts for speed) -------------------
@torch.library.custom_op("rt::expm1_low_precision", mutates_args=())
def expm1_low_precision(x: torch.Tensor) -> torch.Tensor:
    return (x.float().exp() - 1).to(x.dtype)


@torch.library.custom_op("rt::expm1_low_precision_ok", mutates_args=())
def expm1_low_precision_ok(x: torch.Tensor) -> torch.Tensor:
    return torch.expm1(x)


def _expm1_grad(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * x.exp()


for _op in (expm1_low_precision, expm1_low_precision_ok):
    _fake_like(_op)
    _op.register_autograd(_expm1_grad, setup_context=_save_x)

BROKEN = ("softsign_bad_grad", "square_bad_fake", "scale_inplace_undeclared", "flatten_view",
          "running_sum_stale", "row_scale_contiguous_only", "mul_partial_grad",
          "center_rows_empty", "expm1_low_precision")
