"""A custom op written the way PyTorch's docs write one (torch.library.custom_op, a fake
kernel, an autograd formula): `mylib::scaled_softplus(x, beta) = softplus(beta * x) / beta`.
Importing this module registers it: `opkit test mylib::scaled_softplus --backend torch
--ops opkit_torch/optests/mylib_ops.py --tests opkit_torch/optests`."""
import numpy as np
import torch


@torch.library.custom_op("mylib::scaled_softplus", mutates_args=())
def scaled_softplus(x: torch.Tensor, beta: float = 1.0) -> torch.Tensor:
    # the kernel in numpy (as many custom ops wrap a foreign kernel)
    a = x.detach().cpu().to(torch.float64).numpy()   # numpy has no bfloat16
    z = beta * a
    out = np.where(z > 20, a, np.log1p(np.exp(np.minimum(z, 20))) / beta)
    out = np.ascontiguousarray(out).reshape(a.shape)   # (which makes a 0-d array 1-d)
    return torch.from_numpy(out).to(x.device, x.dtype)


@scaled_softplus.register_fake
def _(x, beta=1.0):
    return torch.empty_like(x)


def _setup(ctx, inputs, output):
    x, beta = inputs
    ctx.save_for_backward(x)
    ctx.beta = beta


def _backward(ctx, grad):
    (x,) = ctx.saved_tensors
    return grad * torch.sigmoid(ctx.beta * x), None


scaled_softplus.register_autograd(_backward, setup_context=_setup)
