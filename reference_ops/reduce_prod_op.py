"""reduce_prod: a reduce op (see reference_ops/_reduce.py)."""
from reference_ops._reduce import register_reduce

register_reduce("reduce_prod")
