"""`opkit.registry`: the registered ops (`all_op_types()`, `op_info(op_type)`)."""
from opkit.framework.registry import (KernelEntry, OpInfo, all_op_types, has_op,  # noqa: F401
                                      kernels_of, op_info, orphan_kernels, register_kernel,
                                      register_operator, scratch, set_op_package_loader)

__all__ = ["all_op_types", "op_info", "has_op", "OpInfo", "KernelEntry", "scratch",
           "register_operator", "register_kernel", "kernels_of", "orphan_kernels",
           "set_op_package_loader"]
