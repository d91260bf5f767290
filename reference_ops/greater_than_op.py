"""greater_than: a compare op (see reference_ops/_compare.py)."""
from opkit import register_operator
from reference_ops._compare import build_compare

_ops = build_compare("greater_than")
register_operator("greater_than", _ops.op, _ops.maker)
