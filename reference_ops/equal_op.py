"""equal: a compare op (see reference_ops/_compare.py)."""
from reference_ops._compare import register_compare

register_compare("equal")
