"""harness: OpTest, numeric gradients, LoD edge cases and the runtime checks of `opkit test`."""
from __future__ import annotations

import importlib

__all__ = ["OpTest", "strategies"]


def __getattr__(name: str):
    if name == "OpTest":
        from harness.optest.op_test import public_class

        return public_class()
    if name == "strategies":
        return importlib.import_module("harness.inputs.strategies")
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
