"""opkit: a reference deep-learning framework in the style of PaddlePaddle Fluid.

Names are loaded on first use (PEP 562), so that `opkit lint` starts without numpy.
"""
from __future__ import annotations

import importlib

from opkit.version import __version__

_EXPORTS = {
    "opkit.framework.proto": ["OpMaker", "OpProto", "VarProto", "AttrProto"],
    "opkit.framework.operator": ["OperatorBase", "OperatorWithKernel", "create_op"],
    "opkit.framework.kernel_type": ["OpKernel", "OpKernelType"],
    "opkit.framework.registry": ["register_operator", "register_kernel"],
    "opkit.framework.grad_maker": ["GradOpMaker", "DefaultGradOpMaker", "grad_var_name"],
    "opkit.framework.enforce": ["enforce", "enforce_eq", "enforce_ne", "enforce_lt",
                                "enforce_le", "enforce_gt", "enforce_ge", "enforce_not_none"],
    "opkit.framework.errors": ["EnforceNotMet"],
    "opkit.framework.tensor": ["LoDTensor", "Tensor", "SelectedRows", "LoDTensorArray"],
    "opkit.framework.scope": ["Variable", "Scope", "global_scope"],
    "opkit.framework.place": ["CPUPlace", "CUDAPlace", "is_compiled_with_cuda",
                              "cuda_device_count"],
    "opkit.framework.device": ["DeviceContextPool"],
    "opkit.framework.context": ["ExecutionContext", "InferShapeContext"],
    "opkit.framework.program": ["Program", "Block", "program_guard", "default_main_program",
                                "default_startup_program"],
    "opkit.framework.executor": ["Executor"],
    "opkit.framework.backward": ["append_backward"],
    "opkit.framework.op_version": ["register_op_version", "OpVersionDesc"],
    "opkit.framework.sbp": ["register_sbp"],
}
_SUBMODULES = {"layers", "optimizer", "registry", "errors", "framework", "io", "sbp"}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}

__all__ = sorted(_WHERE) + sorted(_SUBMODULES) + ["__version__"]


def _load_all_op_packages() -> None:
    from opkit.plugins import load_entry_point_ops

    load_entry_point_ops()


def _load_op_package_of(op_type: str) -> None:
    from opkit.plugins import load_op_type

    load_op_type(op_type)


# the registry (opkit.framework) imports nothing above it: the op packages it loads on its
# first lookup are found by opkit.plugins, installed here (a small module, no numpy)
from opkit.framework import packages as _packages  # noqa: E402

_packages.install(_load_all_op_packages, _load_op_package_of)


def __getattr__(name: str):
    if name in _SUBMODULES:
        module = importlib.import_module(f"opkit.{name}")
        globals()[name] = module
        return module
    module_name = _WHERE.get(name)
    if module_name is None:
        raise AttributeError(f"module 'opkit' has no attribute {name!r}")
    value = getattr(importlib.import_module(module_name), name)
    globals()[name] = value
    return value


def __dir__():
    return __all__
