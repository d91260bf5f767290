"""equal: a compare op (see reference_ops/_compare.py)."""
from opkit import register_operator
from reference_ops._compare import build_compare

_ops = build_compare("equal")
register_operator("equal", _ops.op, _ops.maker)
