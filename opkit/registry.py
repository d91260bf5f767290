"""`opkit.registry`: the registered ops (`all_op_types()`, `op_info(op_type)`)."""
from opkit.framework.registry import (KernelEntry, OpInfo, all_op_types, has_op,  # noqa: F401
                                      op_info, register_kernel, register_operator, scratch)

__all__ = ["all_op_types", "op_info", "has_op", "OpInfo", "KernelEntry", "scratch",
           "register_operator", "register_kernel"]
