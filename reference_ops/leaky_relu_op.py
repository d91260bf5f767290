"""leaky_relu: an activation (formula and gradient in reference_ops/_activation.py)."""
from opkit import register_operator
from reference_ops._activation import build_activation

_ops = build_activation("leaky_relu")
register_operator("leaky_relu", _ops.op, _ops.maker, grad_maker=_ops.grad_maker)
register_operator("leaky_relu_grad", _ops.grad_op, grad_maker=_ops.double_grad_maker)
register_operator("leaky_relu_grad_grad", _ops.double_grad_op)
