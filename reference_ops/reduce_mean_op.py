"""reduce_mean: a reduce op (see reference_ops/_reduce.py)."""
from opkit import register_operator
from reference_ops._reduce import build_reduce

_ops = build_reduce("reduce_mean")
register_operator("reduce_mean", _ops.op, _ops.maker, grad_maker=_ops.grad_maker)
register_operator("reduce_mean_grad", _ops.grad_op, no_need_buffer=_ops.grad_no_need_buffer)
