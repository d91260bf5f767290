"""One C++ file parsed by tree-sitter, and the few tree helpers the rules share.

The grammar and the parser are built once per process. Everything the rules judge comes from
the syntax tree: which calls are macro invocations, their arguments, string literal contents,
declarations. Macro *definitions* (`#define`) are opaque to tree-sitter (their body is one
token) and are therefore never judged.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache


class GrammarMissing(Exception):
    """tree-sitter or its C++ grammar is not installed."""


@lru_cache(maxsize=1)
def language():
    try:
        import tree_sitter_cpp
        from tree_sitter import Language
    except ImportError as exc:  # a broken install: say what to do
        raise GrammarMissing(f"C++ files need tree-sitter and tree-sitter-cpp ({exc}); "
                             "pip install tree-sitter tree-sitter-cpp") from None
    return Language(tree_sitter_cpp.language())


@lru_cache(maxsize=1)
def _parser():
    from tree_sitter import Parser

    return Parser(language())


@lru_cache(maxsize=None)
def query(source: str):
    """A compiled tree-sitter query (compiled once per process)."""
    from tree_sitter import Query

    return Query(language(), source)


def captures(source: str, node) -> dict:
    from tree_sitter import QueryCursor

    return QueryCursor(query(source)).captures(node)


def text(node) -> str:
    return node.text.decode("utf-8", "replace") if node is not None else ""


def squeeze(node) -> str:
    """A node's text without whitespace or comments, from its leaf tokens."""
    if node is None:
        return ""
    return "".join(text(leaf) for leaf in walk(node)
                   if leaf.child_count == 0 and leaf.type != "comment")


def walk(node):
    """Every node under `node` (itself included), depth first, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(current.children))


def string_value(node) -> str | None:
    """The contents of a string literal (or adjacent literals), escapes kept as written;
    None when `node` is not only string literals (a macro such as PRId64 between them counts
    as unknown text)."""
    if node is None:
        return None
    if node.type == "string_literal":
        return "".join(text(c) for c in node.named_children
                       if c.type in ("string_content", "escape_sequence"))
    if node.type == "raw_string_literal":
        content = [c for c in node.named_children if c.type == "raw_string_content"]
        return text(content[0]) if content else ""
    if node.type == "concatenated_string":
        parts = [string_value(c) for c in node.named_children]
        return None if any(p is None for p in parts) else "".join(parts)
    if node.type == "parenthesized_expression" and node.named_child_count == 1:
        return string_value(node.named_children[0])
    return None


def qualified_parts(node) -> list[str]:
    """`platform::errors::InvalidArgument` -> ['platform', 'errors', 'InvalidArgument'];
    template arguments are dropped (`Input<Tensor>` -> ['Input'])."""
    out: list[str] = []
    for leaf in walk(node):
        if leaf.type == "template_argument_list":
            break
        if leaf.child_count == 0 and leaf.type in ("identifier", "namespace_identifier",
                                                    "field_identifier", "type_identifier"):
            out.append(text(leaf))
    return out


@dataclass
class MacroCall:
    """`NAME(arg, ...)` as tree-sitter saw it: a call, or (at file scope, with type arguments)
    a function declarator whose "parameters" are the arguments."""
    name: str
    node: object  # the whole invocation (call_expression / function_declarator / ...)
    args: list  # argument nodes, in order; None when tree-sitter did not find the list

    @property
    def line(self) -> int:
        return self.node.start_point[0] + 1


def macro_calls(cpp, names) -> list[MacroCall]:
    """Invocations of the macros (or functions) named in `names`, with their argument nodes:
    calls `NAME(...)`, and function declarators `NAME(type, ...)` (how tree-sitter reads a
    registration macro with type arguments at file scope)."""
    out = []
    for node in cpp.nodes.get("call", []):
        func = node.child_by_field_name("function")
        if func is not None and func.type == "identifier" and text(func) in names:
            args = node.child_by_field_name("arguments")
            out.append(MacroCall(text(func), node, _args(args)))
    for node in cpp.nodes.get("fdecl", []):
        name = node.child_by_field_name("declarator")
        if name is not None and name.type == "identifier" and text(name) in names:
            out.append(MacroCall(text(name), node, _args(node.child_by_field_name("parameters"))))
    out.sort(key=lambda call: call.node.start_byte)
    return out


def _args(node) -> list:
    return [c for c in node.named_children if c.type != "comment"] if node is not None else []


# one query per file, compiled once per process: every node kind a rule starts from
_NODES = ("(call_expression) @call (function_declarator) @fdecl (function_definition) @func "
          "(class_specifier) @cls (comment) @comment (ERROR) @error")


class CppFile:
    """A parsed C++ file: bytes, tree, and per-line helpers."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data
        self.filename = path.replace("\\", "/").rsplit("/", 1)[-1]
        self.tree = _parser().parse(data)
        self.root = self.tree.root_node
        self.config = None  # the LintConfig, set by the engine (message options)

    def position(self, node) -> tuple[int, int]:
        """1-based line and (character) column of a node."""
        row, byte_col = node.start_point
        start = node.start_byte - byte_col
        col = len(self.data[start:node.start_byte].decode("utf-8", "replace")) + 1
        return row + 1, col

    @cached_property
    def nodes(self) -> dict:
        """capture name (call, fdecl, func, cls, comment, error) -> nodes, in source order."""
        found = captures(_NODES, self.root)
        return {name: sorted(nodes, key=lambda n: n.start_byte) for name, nodes in found.items()}

    @cached_property
    def error_lines(self) -> list[int]:
        """First lines of the regions tree-sitter could not parse (it recovered around them)."""
        return sorted({node.start_point[0] + 1 for node in self.error_nodes})

    @cached_property
    def error_nodes(self) -> list:
        """The ERROR nodes, outermost first in source order."""
        if not self.root.has_error:
            return []
        return sorted(self.nodes.get("error", []), key=lambda n: (n.start_byte, -n.end_byte))

    def comments(self):
        return self.nodes.get("comment", [])
