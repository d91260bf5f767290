"""soft_relu: an activation (formula and gradient in reference_ops/_activation.py)."""
from reference_ops._activation import register_activation

register_activation("soft_relu")
