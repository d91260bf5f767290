"""paddle.fluid.layers of opkit's facade: every layer is a placeholder that skips the test
using it (opkit runs OpTests, not Paddle's layer API)."""
from paddle._facade import install_getattr, placeholder_module

for _sub in ("control_flow", "nn", "tensor", "ops", "math_op_patch", "io", "detection",
             "sequence_lod", "loss", "utils"):
    placeholder_module(f"paddle.fluid.layers.{_sub}")
from paddle.fluid.layers import control_flow, nn, tensor  # noqa: E402,F401

install_getattr(globals())
