"""paddle.fluid of opkit's facade: places and capability probes are real (opkit's CPU place),
the rest of Fluid's Python API is placeholders that skip the test using them."""
from paddle._facade import install_getattr, placeholder_module
from paddle.fluid import core  # noqa: F401
from paddle.fluid.core import CPUPlace, CUDAPlace, is_compiled_with_cuda  # noqa: F401

for _sub in ("op", "framework", "executor", "backward", "compiler", "dygraph", "unique_name",
             "initializer", "optimizer", "param_attr", "layer_helper", "io", "contrib",
             "data_feeder", "incubate", "profiler", "regularizer", "nets", "clip"):
    placeholder_module(f"paddle.fluid.{_sub}")
from paddle.fluid import (backward, compiler, dygraph, executor, framework, op,  # noqa: E402,F401
                          unique_name)  # noqa: F401  (re-exported for Paddle's test files)
from paddle.fluid import layers  # noqa: E402,F401


def _grad_var_name(name: str) -> str:
    return name + "@GRAD"


framework.grad_var_name = _grad_var_name
framework.Variable = type("Variable", (), {"__doc__": "opkit facade placeholder"})
__all__ = []

install_getattr(globals())
