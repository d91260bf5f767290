"""Small helpers on libcst nodes: names, string literals, constants."""
from __future__ import annotations

import libcst as cst

UNRESOLVED = object()  # a value the linter cannot compute statically


def terminal_name(func: cst.BaseExpression) -> str | None:
    """`f` for `f(...)`, `g` for `a.b.g(...)`."""
    if isinstance(func, cst.Name):
        return func.value
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return None


def dotted(expr: cst.BaseExpression) -> str | None:
    """`a.b.c` for a chain of names and attributes, else None."""
    parts = []
    while isinstance(expr, cst.Attribute):
        parts.append(expr.attr.value)
        expr = expr.value
    if not isinstance(expr, cst.Name):
        return None
    parts.append(expr.value)
    return ".".join(reversed(parts))


def root_name(expr: cst.BaseExpression) -> str | None:
    """The Name at the bottom of `a[1].b[2]`, `a.b(...)`."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            return None


def string_value(expr) -> str | None:
    """The value of a str literal (also implicit concatenation, f-strings without fields)."""
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    if isinstance(expr, cst.ConcatenatedString):
        left, right = string_value(expr.left), string_value(expr.right)
        if left is None or right is None:
            return None
        return left + right
    if isinstance(expr, cst.FormattedString):
        if all(isinstance(p, cst.FormattedStringText) for p in expr.parts):
            return "".join(p.value for p in expr.parts).replace("{{", "{").replace("}}", "}")
        return None
    return None


def is_string_like(expr) -> bool:
    """A literal, an f-string, `"..." % args` or `"...".format(...)`: certainly a str."""
    if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return not (isinstance(expr, cst.SimpleString) and expr.prefix.lower().startswith("b"))
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Modulo):
        return is_string_like(expr.left)
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute) \
            and expr.func.attr.value == "format":
        return is_string_like(expr.func.value)
    return False


def positional(call: cst.Call) -> list[cst.Arg]:
    return [a for a in call.args if a.keyword is None and not a.star]


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def has_star(call: cst.Call) -> bool:
    return any(a.star for a in call.args)


def argument(call: cst.Call, index: int, name: str):
    """The expression given for parameter `name` at position `index`, or None."""
    kw = keyword(call, name)
    if kw is not None:
        return kw.value
    pos = positional(call)
    return pos[index].value if len(pos) > index else None


def is_false(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def is_true(expr) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def suite_statements(suite) -> list:
    """Statements of an IndentedBlock, or the small statements of a one-line suite."""
    if isinstance(suite, cst.IndentedBlock):
        return list(suite.body)
    if isinstance(suite, cst.SimpleStatementSuite):
        return [cst.SimpleStatementLine(body=suite.body)]
    return []


def params(func: cst.FunctionDef) -> list[str]:
    p = func.params
    return [x.name.value for x in (*p.posonly_params, *p.params)]


_SKIP_FIELDS = {"lpar", "rpar", "comma", "semicolon", "leading_lines", "trailing_whitespace",
                "header", "footer", "lines_after_decorators", "equal", "colon", "dot", "lbracket",
                "rbracket", "lbrace", "rbrace", "operator", "asynchronous", "star_tok", "arrow",
                "newline", "indent", "whitespace", "first_line"}
_INFO: dict[type, tuple] = {}  # type -> (child field names, is dynamic scope, is node)
_DYNAMIC = (cst.FunctionDef, cst.For, cst.While, cst.Lambda, cst.ListComp, cst.SetComp,
            cst.DictComp, cst.GeneratorExp)


def _info(kind: type) -> tuple:
    info = _INFO.get(kind)
    if info is None:
        import dataclasses

        is_node = issubclass(kind, cst.CSTNode)
        names = tuple(f.name for f in dataclasses.fields(kind)
                      if f.name not in _SKIP_FIELDS and not f.name.startswith("whitespace")) \
            if is_node else ()
        info = _INFO[kind] = (names, issubclass(kind, _DYNAMIC), is_node)
    return info


def walk(root):
    """Every node under `root` in source order, with whether it sits inside a def, a loop,
    a lambda or a comprehension. An explicit stack: much faster than a libcst visitor (which
    rebuilds every node) and immune to deep recursion."""
    stack = [(root, False)]
    pop, push = stack.pop, stack.append
    info = _INFO
    while stack:
        node, dynamic = pop()
        yield node, dynamic
        names, scope, _ = info.get(type(node)) or _info(type(node))
        inner = dynamic or scope
        children = []
        for name in names:
            value = getattr(node, name)
            if type(value) in (list, tuple):
                for item in value:
                    if (info.get(type(item)) or _info(type(item)))[2]:
                        children.append(item)
            elif value is not None and (info.get(type(value)) or _info(type(value)))[2]:
                children.append(value)
        for child in reversed(children):
            push((child, inner))


def calls_in(root) -> list:
    return [node for node, _ in walk(root) if type(node) is cst.Call]
