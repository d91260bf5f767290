"""Parallel signatures (OneFlow's SBP): the public names. See opkit.framework.sbp and
docs/sbp.md."""
from opkit.framework.sbp import (SBP_KEY, Axis, Instance, SbpContext, Signature, Spec,
                                 Where, attr_axes, broadcast, dump_sbp, has_sbp,
                                 not_attr_axes, not_attr_axis, partial_sum, physical_shape,
                                 register_sbp, sbp_signatures, split, split_bounds)

__all__ = ["SBP_KEY", "Axis", "Instance", "SbpContext", "Signature", "Spec", "Where",
           "attr_axes", "broadcast", "dump_sbp", "has_sbp", "not_attr_axes", "not_attr_axis",
           "partial_sum", "physical_shape", "register_sbp", "sbp_signatures", "split",
           "split_bounds"]
