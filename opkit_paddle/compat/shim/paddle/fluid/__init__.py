"""paddle.fluid (and paddle.base) of opkit's facade: places, capability probes, `core.Scope`
and the dtype helpers are real (opkit's CPU place and framework); the rest of Fluid's Python
API is placeholders that skip the test using them."""
from paddle._facade import install_getattr, placeholder_module
from paddle.fluid import core  # noqa: F401
from paddle.fluid.core import CPUPlace, CUDAPlace, Scope, is_compiled_with_cuda  # noqa: F401

import sys as _sys  # noqa: E402

import op as _op  # noqa: E402  (the mode's op.Operator: Fluid 1.8 spells it paddle.fluid.op)

_sys.modules["paddle.fluid.op"] = _op
for _sub in ("executor", "backward", "compiler", "dygraph", "unique_name",
             "initializer", "optimizer", "param_attr", "layer_helper", "io", "contrib",
             "data_feeder", "incubate", "profiler", "regularizer", "nets", "clip"):
    placeholder_module(f"paddle.fluid.{_sub}")
from paddle.fluid import (backward, compiler, dygraph, executor, framework, op,  # noqa: E402,F401
                          unique_name)  # noqa: F401  (re-exported for Paddle's test files)
from paddle.fluid import layers  # noqa: E402,F401
from paddle.fluid.framework import (convert_np_dtype_to_dtype_, in_dygraph_mode,  # noqa: E402,F401
                                    in_pir_mode)

__all__ = []

install_getattr(globals())
