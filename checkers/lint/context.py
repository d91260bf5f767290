"""Per-file state shared by every rule: one parse, one walk, one MetadataWrapper."""
from __future__ import annotations

from functools import cached_property

import libcst as cst

from checkers.lint.config import LintConfig


class FileContext:
    def __init__(self, path: str, text: str, module: cst.Module, config: LintConfig) -> None:
        self.path = path
        self.filename = path.replace("\\", "/").rsplit("/", 1)[-1]
        self.text = text
        self.module = module
        self.config = config

    @cached_property
    def collector(self):
        """Every call in the module (one walk over the tree, shared by the rules)."""
        from checkers.lint.index import CallCollector

        return CallCollector(self.module)

    @cached_property
    def index(self):
        from checkers.lint.index import ModuleIndex

        needs_walk = "register_" in self.text
        return ModuleIndex(self.module, self.collector if needs_walk else None)

    @cached_property
    def kernel_events(self):
        from checkers.lint.dataflow import analyse_kernels

        return analyse_kernels(self.index, self.path)

    @cached_property
    def wrapper(self) -> cst.MetadataWrapper:
        return cst.MetadataWrapper(self.module, unsafe_skip_copy=True)

    @cached_property
    def positions(self):
        return self.wrapper.resolve(cst.metadata.PositionProvider)

    def position(self, node) -> tuple[int, int]:
        """1-based line and column of a node."""
        pos = self.positions.get(node)
        if pos is None:
            return 1, 1
        return pos.start.line, pos.start.column + 1

    def line_of(self, node) -> int:
        return self.position(node)[0]
