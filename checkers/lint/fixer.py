"""Apply rule fixes: replace the reported nodes (by identity) in one transform."""
from __future__ import annotations

import libcst as cst


class _Replace(cst.CSTTransformer):
    def __init__(self, fixes: dict) -> None:
        self.fixes = fixes

    def on_leave(self, original_node, updated_node):
        return self.fixes.get(id(original_node), updated_node)


def apply_fixes(module: cst.Module, fixes: dict) -> str:
    return module.visit(_Replace(fixes)).code
