"""reciprocal: an activation (formula and gradient in reference_ops/_activation.py)."""
from opkit import register_operator
from reference_ops._activation import build_activation

_ops = build_activation("reciprocal")
register_operator("reciprocal", _ops.op, _ops.maker, grad_maker=_ops.grad_maker)
register_operator("reciprocal_grad", _ops.grad_op, grad_maker=_ops.double_grad_maker)
register_operator("reciprocal_grad_grad", _ops.double_grad_op)
