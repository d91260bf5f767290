"""Property-based: the linter never raises, whatever program it is given."""
from __future__ import annotations

import string

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkers.lint.config import build_config
from checkers.lint.engine import lint_source
from checkers.lint.findings import Finding

CONFIG = build_config({"min-message-length": 5, "require-error-type": True}, None, no_cache=True)
SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

try:  # preferred: syntactically valid Python from the grammar
    import hypothesmith
except ImportError:  # pragma: no cover - depends on the environment
    hypothesmith = None


def check(source: str | bytes, path: str = "gen_op.py") -> None:
    data = source if isinstance(source, bytes) else source.encode("utf-8", "surrogatepass")
    result = lint_source(path, data, CONFIG, fix=True)
    assert all(isinstance(f, Finding) for f in result.findings)
    internal = [f for f in result.findings if "internal error" in f.message]
    assert not internal, internal


# An op-flavoured program generator of our own: kernels built from statements that touch
# inputs, views, copies, writes and registrations, so that every rule gets exercised.
NAMES = st.sampled_from(["x", "y", "z", "xs", "t", "xp", "np", "ctx", "out"])
SLOTS = st.sampled_from(["'X'", "'Y'", "'Out'", "grad_var_name('Out')", "S", "name"])
EXPRS = st.recursive(
    st.one_of(NAMES, SLOTS, st.sampled_from(["1", "0.5", "None", "''", "' '", "f'{x}'", "(1, 2)"]),
              SLOTS.map(lambda s: f"ctx.input({s})"), SLOTS.map(lambda s: f"ctx.inputs({s})"),
              SLOTS.map(lambda s: f"ctx.input_tensor({s}).data"), SLOTS.map(lambda s: f"ctx.input_var({s})")),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["reshape(-1)", "ravel()", "T", "copy()", "astype('f4')",
                                          "view()", "sort()", "fill(0)", "dtype", "data", "squeeze()"]))
        .map(lambda t: f"{t[0]}.{t[1]}"),
        st.tuples(inner, inner).map(lambda t: f"{t[0]}[{t[1]}]"),
        st.tuples(inner, inner).map(lambda t: f"({t[0]} + {t[1]})"),
        st.tuples(st.sampled_from(["np.asarray", "xp.copyto", "np.add.at", "enforce", "enforce_eq",
                                   "errors.InvalidArgument", "helper", "np.array", "zip", "enumerate"]),
                  st.lists(inner, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.tuples(inner, inner).map(lambda t: f"np.exp({t[0]}, out={t[1]})"),
    ), max_leaves=8)
STMTS = st.one_of(
    st.tuples(NAMES, EXPRS).map(lambda t: f"{t[0]} = {t[1]}"),
    st.tuples(NAMES, EXPRS).map(lambda t: f"{t[0]} += {t[1]}"),
    st.tuples(NAMES, EXPRS, EXPRS).map(lambda t: f"{t[0]}[{t[1]}] = {t[2]}"),
    st.tuples(NAMES, NAMES, EXPRS).map(lambda t: f"{t[0]}, {t[1]} = {t[2]}"),
    EXPRS,
    st.tuples(SLOTS, EXPRS).map(lambda t: f"ctx.set_output({t[0]}, {t[1]})"),
    st.just("del x"),
)


@st.composite
def blocks(draw, depth=0):
    lines = []
    for stmt in draw(st.lists(STMTS, min_size=1, max_size=6)):
        lines.append(stmt)
    if depth < 2 and draw(st.booleans()):
        head = draw(st.sampled_from(["if x:", "for x in ctx.inputs('X'):", "while y:", "with t as z:",
                                     "try:"]))
        inner = draw(blocks(depth + 1))
        lines.append(head)
        lines.extend("    " + line for line in inner)
        if head == "try:":
            lines.append("except Exception:")
            lines.append("    pass")
    return lines


@st.composite
def op_modules(draw):
    body = "\n".join("    " + line for line in draw(blocks()))
    helper = "\n".join("    " + line for line in draw(blocks()))
    place = draw(st.sampled_from(["'CPU'", "('CPU', 'GPU')", "P", "S"]))
    dtypes = draw(st.sampled_from(["'float32'", "('float32', 'float64')", "D", "[np.float32]"]))
    inplace = draw(st.sampled_from(["None", "{'X': 'Out'}", "I", "[('X', 'Out')]"]))
    return ("import numpy as np\nfrom opkit import *\nD = ('float32',)\n"
            f"register_operator('gen', object, inplace={inplace})\n"
            f"def helper(a, b=None):\n{helper}\n"
            f"@register_kernel('gen', place={place}, dtypes={dtypes})\ndef k(ctx):\n{body}\n"
            "class K(OpKernel):\n    def compute(self, ctx):\n" + body.replace("\n    ", "\n        ")
            .replace("    ", "        ", 1) + "\nregister_kernel('gen_grad')(K)\n"
            "class GenOp(OperatorWithKernel):\n    def get_expected_kernel_type(self, ctx):\n"
            f"        return ctx.input({draw(SLOTS)}).dtype\n"
            "class GenOpMaker(OpMaker):\n    def make(self):\n"
            f"        self.add_input({draw(SLOTS)}, '')\n        self.add_comment({draw(SLOTS)})\n")


@SETTINGS
@given(op_modules())
def test_generated_op_modules_never_crash(source):
    check(source)


@SETTINGS
@given(st.binary(max_size=400))
def test_random_bytes_never_crash(data):
    check(data)


@SETTINGS
@given(st.text(alphabet=string.printable + "([{}])\t\n", max_size=300))
def test_random_text_never_crash(text):
    check(text)


if hypothesmith is not None:
    @settings(max_examples=100, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(hypothesmith.from_grammar())
    def test_grammar_generated_programs_never_crash(source):
        check(source)

    @settings(max_examples=60, deadline=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                     HealthCheck.data_too_large])
    @given(hypothesmith.from_node())
    def test_libcst_generated_programs_never_crash(source):
        check(source)
