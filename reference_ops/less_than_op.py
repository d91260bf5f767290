"""less_than: a compare op (see reference_ops/_compare.py); `layers.less_than` makes the
loop condition of `while`, hence its `force_cpu` attr."""
from opkit import register_operator
from reference_ops._compare import build_compare

_ops = build_compare("less_than")
register_operator("less_than", _ops.op, _ops.maker)
