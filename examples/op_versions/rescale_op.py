"""rescale: a user's post-processing op, in the releases the op-versions example compares.

`register_release(name)` registers one release of the op (and its op versions):

- ``v1``            Out = scale * X + shift (attrs ``scale``, ``shift``); version 0.
- ``v2-documented`` adds attr ``round_digits`` (default -1: no rounding), with a checkpoint
                    that documents it (``new_attr``); version 1.
- ``v2-default``    v2-documented, then ``round_digits``'s default quietly becomes 2 (no new
                    checkpoint): models saved before the attr existed now round.
- ``v2-renamed``    v1 with ``scale`` renamed to ``factor``: a checkpoint with
                    ``delete_attr``/``new_attr`` and an upgrader that renames the attr.
- ``v2-renamed-no-upgrader``  the same checkpoint without the upgrader.

Each release file next to this one (``rescale_v1.py``, ...) registers one of them, so that
``opkit dump --ops FILE`` and ``opkit compat ... --ops FILE`` see that release.
"""
from __future__ import annotations

import numpy as np

from opkit import (OpMaker, OperatorWithKernel, OpVersionDesc, register_kernel,
                   register_op_version, register_operator)

RELEASES = ("v1", "v2-documented", "v2-default", "v2-renamed", "v2-renamed-no-upgrader")


def _maker(release: str):
    class RescaleOpMaker(OpMaker):
        def make(self):
            self.add_input("X", "(Tensor) The normalized prediction.")
            self.add_output("Out", "(Tensor) The prediction in the data's units.")
            factor = "factor" if release.startswith("v2-renamed") else "scale"
            self.add_attr(factor, "float", "(float, default 1.0) Multiplies X.").set_default(1.0)
            self.add_attr("shift", "float", "(float, default 0.0) Added after scaling."
                          ).set_default(0.0)
            if release in ("v2-documented", "v2-default"):
                default = 2 if release == "v2-default" else -1
                self.add_attr("round_digits", "int", "(int) Round Out to this many decimals "
                              "(-1: no rounding).").set_default(default)
            self.add_comment("Rescale operator: $$Out = scale \\cdot X + shift$$")

    return RescaleOpMaker


class RescaleOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))
        ctx.share_lod("X", "Out")


def _kernel(release: str):
    factor = "factor" if release.startswith("v2-renamed") else "scale"
    rounds = release in ("v2-documented", "v2-default")

    def rescale_kernel(ctx):
        x = ctx.input("X")
        out = x * x.dtype.type(ctx.attr(factor)) + x.dtype.type(ctx.attr("shift"))
        if rounds and ctx.attr("round_digits") >= 0:
            out = np.round(out, ctx.attr("round_digits"))
        ctx.set_output("Out", out.astype(x.dtype))

    return rescale_kernel


def rename_scale_to_factor(op_desc: dict) -> dict:
    """Upgrader of version 1: a program's ``scale`` attr becomes ``factor``."""
    attrs = op_desc["attrs"]
    if "scale" in attrs:
        attrs["factor"] = attrs.pop("scale")
    return op_desc


def register_release(release: str) -> None:
    if release not in RELEASES:
        raise ValueError(f"unknown release {release!r} (one of {', '.join(RELEASES)})")
    register_operator("rescale", RescaleOp, _maker(release))
    register_kernel("rescale", dtypes=("float32", "float64"))(_kernel(release))
    versions = register_op_version("rescale")
    if release in ("v2-documented", "v2-default"):
        versions.add_checkpoint(
            "Out may be rounded",
            OpVersionDesc().new_attr("round_digits", "round Out to this many decimals; -1 "
                                     "(the default) keeps the old behaviour", -1))
    elif release.startswith("v2-renamed"):
        versions.add_checkpoint(
            "scale is called factor",
            OpVersionDesc().delete_attr("scale", "renamed to factor")
                           .new_attr("factor", "was scale", 1.0),
            upgrader=None if release.endswith("no-upgrader") else rename_scale_to_factor)
