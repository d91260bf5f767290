"""OPK002 empty-enforce-message (and the optional stricter message policy)."""
from __future__ import annotations

import libcst as cst

from checkers.lint.astutil import has_star, is_string_like, keyword, positional, string_value
from checkers.lint.rules.base import Example, Report, Rule

# enforce function -> index of its message argument
ENFORCE = {"enforce": 1, "enforce_not_none": 1, "enforce_eq": 2, "enforce_ne": 2, "enforce_lt": 2,
           "enforce_le": 2, "enforce_gt": 2, "enforce_ge": 2}
# The error classes of `opkit.errors` (a deliberate copy: the linter never imports opkit)
ERROR_NAMES = ("InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists", "ResourceExhausted",
               "PreconditionNotMet", "PermissionDenied", "ExecutionTimeout", "Unimplemented",
               "Unavailable", "Fatal", "External", "EnforceNotMet")
ERRORS = set(ERROR_NAMES)


class EmptyEnforceMessage(Rule):
    code = "OPK002"
    name = "empty-enforce-message"
    summary = ('an `enforce*` call or `errors.*` error without '
               'a message, or with an empty/blank one')
    triggers = ("enforce", *ERROR_NAMES)
    rationale = (
        "An enforce failure is what the op author's user sees; without a message it says "
        "nothing about what went wrong. Every `enforce*` call needs its message argument and "
        "every `errors.X(...)`/`EnforceNotMet(...)` a non-blank message. Variables, f-strings "
        "and formatted strings count as messages; a module-level constant is resolved to its value "
        "(unless a function of the module binds the same name). With `min-message-length = N` in "
        "`[tool.opkit.lint]`, literal messages shorter than N characters are reported (implicit "
        "concatenation counts in full; messages in variables or f-strings with fields are not "
        "measured); with `require-error-type = true` an `enforce*` message that is certainly a "
        "plain string must instead be a typed error from `opkit.errors`. All decisions are made "
        "on the syntax tree, never with a regular expression."
    )
    VALID = [
        "from opkit import enforce, enforce_eq, errors\n\ndef check(ctx, msg):\n"
        "    enforce(ctx.has_input('X'), 'Input(X) of ClipOp should not be null.')\n"
        "    enforce_eq(1, 1, errors.InvalidArgument('rank mismatch: %d', 1))\n"
        "    enforce(True, msg)\n    enforce(True, f'{msg} is bad')\n",
        "import opkit\n\ndef check(x):\n    opkit.enforce_not_none(x, 'X ' 'must be set')\n"
        "    raise opkit.errors.NotFound('variable %s not found' % x)\n",
    ]
    VALID.append(
        "from opkit import enforce, errors\n\n_MSG = 'Input(X) of ClipOp should not be null.'\n"
        "\ndef check(ctx, _EMPTY=''):\n    enforce(ctx.has_input('X'), _MSG)\n\n"
        "def other(ctx, msg='x'):\n    raise errors.NotFound(msg)\n\nmsg = ''\n")
    # an error instance made earlier, and an error class used without raising it
    VALID.append(
        "from opkit import enforce, errors\n\ndef check(x):\n"
        "    err = errors.InvalidArgument('X must be set')\n    kind = errors.NotFound\n"
        "    enforce(kind is not None, 'no NotFound')\n    if x is None:\n        raise err\n")
    INVALID = [
        Example("from opkit import enforce\n\ndef check(ctx):\n    enforce(ctx.has_input('X'))\n", line=4),
        Example("from opkit import enforce_eq\n\ndef check(a, b):\n    enforce_eq(a, b, '  ')\n", line=4),
        Example("from opkit import errors\n\ndef check():\n    raise errors.InvalidArgument('')\n", line=4),
        Example("import opkit\n\ndef check(x):\n    opkit.enforce_not_none(x, opkit.errors.NotFound())\n", line=4),
        Example("from opkit import EnforceNotMet\n\ndef check():\n    raise EnforceNotMet(\"\" '')\n", line=4),
        # the error class raised without being called: no message at all
        Example("from opkit import errors\n\ndef check(x):\n    if x is None:\n"
                "        raise errors.InvalidArgument\n", line=5),
    ]

    def check(self, ctx):
        index = ctx.index
        minimum = ctx.config.min_message_length
        typed = ctx.config.require_error_type
        for call, _ in ctx.collector.calls:
            kind = index.call_kind(call)
            if kind in ENFORCE:
                if isinstance(call.func, cst.Attribute) and not isinstance(call.func.value, (cst.Name, cst.Attribute)):
                    continue
                yield from self._enforce(call, kind, minimum, typed, ctx)
            elif kind in ERRORS and self._is_error(call.func, index):
                yield from self._error(call, kind, minimum, ctx)
        for node in ctx.collector.raises:
            exc = node.exc
            # `raise errors.InvalidArgument`: the class itself, raised with no message at all
            if isinstance(exc, (cst.Name, cst.Attribute)):
                kind = exc.value if isinstance(exc, cst.Name) else exc.attr.value
                if isinstance(exc, cst.Name):
                    kind = index.canonical(kind)
                if kind in ERRORS and self._is_error(exc, index):
                    yield Report(node, f"raise {kind} has no error message (the class is raised "
                                       f"without being called)")

    @staticmethod
    def _is_error(func, index) -> bool:
        if isinstance(func, cst.Name):
            origin = index.from_imports.get(func.value, "")
            return func.value == "EnforceNotMet" or origin.startswith("opkit") or "errors" in origin.split(".")
        # errors.X(...), opkit.errors.X(...), opkit.X(...)
        base = func.value
        name = base.attr.value if isinstance(base, cst.Attribute) else getattr(base, "value", None)
        return name in ("errors", "opkit")

    def _enforce(self, call: cst.Call, kind: str, minimum: int, typed: bool, ctx):
        if has_star(call):
            return
        pos = positional(call)
        where = ENFORCE[kind]
        kw = keyword(call, "msg") or keyword(call, "message")
        message = kw.value if kw is not None else (pos[where].value if len(pos) > where else None)
        if message is None:
            yield Report(call, f"{kind}(...) has no error message")
            return
        yield from self._message(call, kind, message, minimum, ctx)
        if typed and is_string_like(message):
            yield Report(message, f"{kind}(...) message must be a typed error from opkit.errors "
                                  "(require-error-type), e.g. errors.InvalidArgument(...)")

    def _error(self, call: cst.Call, kind: str, minimum: int, ctx):
        if has_star(call):
            return
        args = [a for a in call.args if a.keyword is None or a.keyword.value in ("msg", "message")]
        if not args:
            yield Report(call, f"{kind}() has no error message")
            return
        yield from self._message(call, kind, args[0].value, minimum, ctx)

    @staticmethod
    def _message(call, kind: str, message, minimum: int, ctx):
        text = string_value(message)
        if isinstance(message, cst.BinaryOperation) and isinstance(message.operator, cst.Modulo):
            text = string_value(message.left)
        constant = ""
        if text is None and isinstance(message, cst.Name):
            text = _module_constant(ctx, message.value)
            constant = f" (module constant {message.value} = {text!r})"
        if text is None:
            return
        if not text.strip():
            yield Report(message, f"{kind}(...) has an empty error message{constant}")
        elif minimum and len(text) < minimum:
            yield Report(message, f"{kind}(...) message is {len(text)} characters, shorter than "
                                  f"min-message-length = {minimum}")


def _module_constant(ctx, name: str) -> str | None:
    """The str value of a module-level constant `name`, unless a function rebinds the name
    (a parameter or local of that name may then be what the call sees)."""
    value = ctx.index.strings(cst.Name(name))
    if not isinstance(value, str) or name in _local_names(ctx):
        return None
    return value


def _local_names(ctx) -> set:
    names = getattr(ctx, "_opk002_locals", None)
    if names is None:
        from checkers.lint.astutil import walk

        names = set()
        for func in ctx.index.functions.values():
            for node, _ in walk(func):
                if isinstance(node, cst.Param):
                    names.add(node.name.value)
                elif isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For,
                                       cst.NamedExpr)):
                    target = getattr(node, "target", None)
                    if isinstance(target, cst.Name):
                        names.add(target.value)
        for cls in ctx.index.classes.values():
            for node, _ in walk(cls):
                if isinstance(node, cst.Param):
                    names.add(node.name.value)
                elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name):
                    names.add(node.target.value)
        ctx._opk002_locals = names
    return names
