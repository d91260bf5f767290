"""OPK002 empty-enforce-message, for C++: PADDLE_ENFORCE* / PADDLE_THROW and errors::X(...)."""
from __future__ import annotations

from checkers.lint.cpp.base import CppRule, Report, cpp_example
from checkers.lint.cpp.parse import macro_calls, qualified_parts, string_value, text
from checkers.lint.cpp.printf import has_words

# macro -> index of its message argument (the arguments after it are format values)
ENFORCE = {"PADDLE_ENFORCE": 1, "PADDLE_ENFORCE_NOT_NULL": 1, "PADDLE_THROW": 0,
           **{f"PADDLE_ENFORCE_{op}": 2 for op in ("EQ", "NE", "GT", "GE", "LT", "LE")}}
# Paddle's error types (platform::errors:: / phi::errors:: / common::errors::)
ERROR_NAMES = ("InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists", "ResourceExhausted",
               "PreconditionNotMet", "PermissionDenied", "ExecutionTimeout", "Unimplemented",
               "Unavailable", "Fatal", "External")
_ERRORS = set(ERROR_NAMES)


class CppEnforceMessage(CppRule):
    code = "OPK002"
    name = "empty-enforce-message"
    summary = ("a `PADDLE_ENFORCE*`/`PADDLE_THROW` without a message, or an `errors::X(...)` "
               "whose message is empty or only a format string with no words")
    triggers = (b"PADDLE_ENFORCE", b"PADDLE_THROW", b"errors")
    rationale = (
        "Paddle's rule since 2.0 (where a message-less enforce became a compile error): every "
        "`PADDLE_ENFORCE`, `PADDLE_ENFORCE_EQ/_NE/_GT/_GE/_LT/_LE`, `PADDLE_ENFORCE_NOT_NULL` "
        "and `PADDLE_THROW` carries a message, and every `platform::errors::X(...)` / "
        "`phi::errors::X(...)` error has a message with words in it. A string literal that is "
        "empty, blank, or only printf conversions and punctuation (`\"%d\"`, `\"%s vs %s\"`) is "
        "reported; a message held in a variable or built by a call (`string::Sprintf`) is "
        "trusted. `PADDLE_ENFORCE_CUDA_SUCCESS` and the other status checks carry their own "
        "message and are not checked; neither are the macros' own `#define`s, nor calls that "
        "forward `__VA_ARGS__`. The `[tool.opkit.lint]` message options apply as in Python: "
        "`min-message-length = N` reports literal messages shorter than N characters (adjacent "
        "literals measured in full, escapes as written), `require-error-type = true` reports "
        "an enforce whose message is a plain string literal instead of a typed "
        "`errors::X(...)` (Paddle's rule since 2.0)."
    )
    VALID = [
        cpp_example(
            'void Check(const framework::InferShapeContext* ctx, int64_t n) {\n'
            '  PADDLE_ENFORCE_EQ(ctx->HasInput("X"), true,\n'
            '                    platform::errors::NotFound("Input(X) of ClipOp is not found."));\n'
            '  PADDLE_ENFORCE_GT(n, 0, phi::errors::InvalidArgument(\n'
            '                              "The rank (%d) must be positive.", n));\n'
            '  PADDLE_ENFORCE(n < 10, "n should be less than 10, but received %d", n);\n'
            '  if (n > 100) PADDLE_THROW(platform::errors::Unimplemented("Too many: %d", n));\n'
            '}\n'),
        # a message in a variable, or built by a call, is trusted
        cpp_example(
            'void Check(int64_t n, const std::string& msg) {\n'
            '  PADDLE_ENFORCE_NOT_NULL(ptr, msg);\n'
            '  PADDLE_ENFORCE_LE(n, 4, string::Sprintf("%d > 4", n));\n'
            '  PADDLE_ENFORCE_CUDA_SUCCESS(cudaGetLastError());\n'
            '}\n'),
        # the macro's own definition is not a call
        cpp_example('#define PADDLE_ENFORCE_EQ(A, B, ...) __PADDLE_BINARY_COMPARE(A, B, ==, __VA_ARGS__)\n'),
    ]
    INVALID = [
        cpp_example('void Check(const framework::InferShapeContext* ctx) {\n'
                    '  PADDLE_ENFORCE(ctx->HasInput("X"));\n}\n', line=2),
        cpp_example('void Check(int a, int b) {\n  PADDLE_ENFORCE_EQ(a, b);\n'
                    '  PADDLE_ENFORCE_NOT_NULL(ptr, "");\n}\n', line=(2, 3)),
        cpp_example('void Check(int a, int b) {\n  PADDLE_ENFORCE_GE(a, b, "%d > %d", a, b);\n}\n', line=2),
        cpp_example('void Fail() {\n  PADDLE_THROW(platform::errors::Unimplemented(""));\n}\n', line=2),
        cpp_example('void Check(int rank) {\n  PADDLE_ENFORCE_LT(rank, 7,\n'
                    '                    phi::errors::InvalidArgument("%d", rank));\n'
                    '  PADDLE_THROW();\n}\n', line=(3, 4)),
        cpp_example('Status Check() {\n  return errors::NotFound();\n}\n', line=2),
        # Paddle 2.0's rule: typed errors only, with require-error-type = true
        cpp_example('void Check(int n) {\n  PADDLE_ENFORCE_GT(n, 0, "n must be positive");\n'
                    '  PADDLE_ENFORCE_GT(n, 0, platform::errors::InvalidArgument("n must be positive"));\n}\n',
                    line=2, config=(("require-error-type", True),)),
        cpp_example('void Check(int n) {\n  PADDLE_THROW(platform::errors::Fatal("bad"));\n}\n',
                    line=2, config=(("min-message-length", 10),)),
    ]

    def check(self, cpp):
        minimum = getattr(cpp.config, "min_message_length", 0) or 0
        typed = bool(getattr(cpp.config, "require_error_type", False))
        for call in macro_calls(cpp, ENFORCE):
            where = ENFORCE[call.name]
            if any("__VA_ARGS__" in text(a) for a in call.args):
                continue
            if len(call.args) <= where:
                yield Report(call.node, f"{call.name}(...) has no error message")
                continue
            message = call.args[where]
            problem = _message_problem(message, minimum)
            if problem:
                yield Report(message, f"{call.name}(...) has {problem}")
            elif typed and string_value(message) is not None:
                yield Report(message, f"{call.name}(...) message must be a typed error "
                                      "(require-error-type), e.g. "
                                      "platform::errors::InvalidArgument(...)")
        for node in cpp.nodes.get("call", []):
            func = node.child_by_field_name("function")
            if func is None or func.type != "qualified_identifier":
                continue
            parts = qualified_parts(func)
            if len(parts) < 2 or parts[-2] != "errors" or parts[-1] not in _ERRORS:
                continue
            kind = parts[-1]
            args = [c for c in node.child_by_field_name("arguments").named_children
                    if c.type != "comment"]
            if not args:
                yield Report(node, f"errors::{kind}() has no error message")
                continue
            problem = _message_problem(args[0], minimum)
            if problem:
                yield Report(node, f"errors::{kind}(...) has {problem}")


def _message_problem(message, minimum: int = 0) -> str | None:
    value = string_value(message)
    if value is None:
        return None  # a variable, a call, an error object: trusted (error calls are checked apart)
    if not value.strip():
        return "an empty error message"
    if not has_words(value):
        return f"a message with no words (only the format {text(message)})"
    if minimum and len(value) < minimum:
        return f"a {len(value)}-character message, shorter than min-message-length = {minimum}"
    return None
