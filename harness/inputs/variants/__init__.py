"""Input variants derived from a case (docs/harness.md, "Input variants"): a variant is
``derive(case, context) -> Derived | Unsupported | list[...]``, ONE module plus ONE line in
``VARIANTS`` (name -> "module:function"). Derived cases are cached per case
(``context.cache``), so two checks that need the same variant derive it once."""
from __future__ import annotations

import importlib

from harness.backend.case import Unsupported

__all__ = ["VARIANTS", "derive"]

VARIANTS = {
    "case": "harness.inputs.variants.basic:same",
    "default_attrs": "harness.inputs.variants.basic:default_attrs",
    "layout": "harness.inputs.variants.layout:derive",
    "empty": "harness.inputs.variants.empty:derive",
    "extremal": "harness.inputs.variants.extremal:derive",
    "kinks": "harness.inputs.variants.kinks:derive",
    "repeated_input": "harness.inputs.variants.repeated:derive",
    "attr_values": "harness.inputs.variants.attr_values:derive",
    "edge_shapes": "harness.inputs.variants.shapes:derive",
}


def derive(name: str, case, context=None):
    try:
        target = VARIANTS[name]
    except KeyError:
        raise KeyError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})") from None
    cache = getattr(context, "cache", None)
    key = ("variant", name, id(case))
    if cache is not None and key in cache:
        return cache[key]
    module, _, attr = target.partition(":")
    fn = getattr(importlib.import_module(module), attr)
    try:
        got = fn(case, context)
    except Exception as exc:  # noqa: BLE001 - a case the variant cannot handle
        got = Unsupported(name, f"variant '{name}' cannot be derived: {type(exc).__name__}: "
                                f"{exc}")
    if cache is not None:
        cache[key] = got
    return got
