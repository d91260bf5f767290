"""`opkit lint` on C++ operator sources (Paddle's `.cc`/`.cu`/`.h` files).

Parsed with tree-sitter's C++ grammar (the `tree-sitter` and `tree-sitter-cpp` wheels): a real
parser with error recovery, so a file it cannot fully understand (Paddle's macros) is still
checked where it can be. Nothing is compiled, preprocessed or run. See docs/lint.md.
"""
from __future__ import annotations

SUFFIXES = (".cc", ".cu", ".h", ".hpp", ".cpp", ".cuh", ".cxx", ".hh")


def is_cpp(path: str) -> bool:
    return path.lower().endswith(SUFFIXES)
