"""Property-based, C++: the linter never raises and never reports an internal error, whatever
bytes a `.cc`/`.cu`/`.h` file holds (token soups built from Paddle's vocabulary, and raw bytes)."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.lint.config import build_config
from checkers.lint.engine import lint_source
from checkers.lint.findings import Finding

CONFIG = build_config({"min-message-length": 5, "require-error-type": True, "notes": True},
                      None, no_cache=True)
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
TOKENS = st.sampled_from([
    "PADDLE_ENFORCE", "PADDLE_ENFORCE_EQ", "PADDLE_THROW", "platform::errors::InvalidArgument",
    "errors::NotFound", "REGISTER_OP_CPU_KERNEL", "REGISTER_OP_KERNEL", "PD_REGISTER_KERNEL",
    "REGISTER_OP_CUDA_KERNEL_FUNCTOR", "ops::K", "<", ">", "float", "double", "int64_t", "T",
    "plat::float16", "CPU", "GPU", "const_cast", "auto", "*", "&", "x", "y", "ins", "ctx",
    ".", "->", "Input", "MultiInput", "data", "mutable_data", "Resize", "(", ")", "{", "}",
    "[", "]", ",", ";", "=", "\"\"", "\"%d\"", "\"msg\"", "R\"DOC(\n)DOC\"", "class", "public",
    "framework::OpProtoAndCheckerMaker", "void", "Make", "AddComment", "AddInput", "AddAttr",
    "\"in_x\"", "const", "Tensor", "DenseTensor", "for", "if", ":", "#define", "#if", "#endif",
    "\n", "// opkit: ignore[OPK002]", "/*", "*/", "template", "typename", "namespace", "return",
])


def check(data: bytes, path: str) -> None:
    result = lint_source(path, data, CONFIG)
    assert all(isinstance(f, Finding) for f in result.findings)
    internal = [f for f in result.findings if "internal error" in f.message]
    assert not internal, internal


@SETTINGS
@given(st.lists(TOKENS, max_size=120), st.sampled_from(["a_op.cc", "a_op.cu", "a_op.h"]))
def test_token_soup_never_crashes(tokens, path):
    check(" ".join(tokens).encode("utf-8"), path)


@SETTINGS
@given(st.binary(max_size=400))
def test_raw_bytes_never_crash(data):
    check(data, "blob.cc")


def test_latin1_comment_and_deep_nesting_are_handled():
    source = b"// caf\xe9 (latin-1)\nvoid F(int a) {\n  PADDLE_ENFORCE(a);\n}\n"
    findings = lint_source("a.cc", source, CONFIG).findings
    assert [(f.rule, f.line, f.col) for f in findings if f.rule == "OPK002"] == [("OPK002", 3, 3)]
    deep = ("void F() { int x = " + "(" * 3000 + "1" + ")" * 3000 + "; PADDLE_THROW(); }\n").encode()
    findings = lint_source("deep.cc", deep, CONFIG).findings
    assert [f.rule for f in findings if f.rule != "OPK009"] == ["OPK002"], findings
