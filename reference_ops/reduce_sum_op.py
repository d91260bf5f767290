"""reduce_sum: a reduce op (see reference_ops/_reduce.py)."""
from opkit import register_operator
from reference_ops._reduce import build_reduce

_ops = build_reduce("reduce_sum")
register_operator("reduce_sum", _ops.op, _ops.maker, grad_maker=_ops.grad_maker)
register_operator("reduce_sum_grad", _ops.grad_op, no_need_buffer=_ops.grad_no_need_buffer)
