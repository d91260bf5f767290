"""OPK001/OPK004 through helpers (summaries applied at every call site) and numpy's
index semantics (basic indexing: views; advanced indexing: copies; ranks)."""
from __future__ import annotations

import pytest

from checkers.lint import dataflow
from .helpers import HEAD, kernel, rules_of


def found(code: str, rule: str = "OPK001") -> list:
    return rules_of(code, rule)


def lines(code: str, rule: str = "OPK001") -> list:
    return [f.line for f in found(code, rule)]


def line_of(code: str, text: str) -> int:
    return next(i for i, line in enumerate(code.splitlines(), 1) if line.strip() == text)


# -- helpers ---------------------------------------------------------------------------------
def test_finding_is_on_the_helper_line_once_per_call_site():
    code = HEAD + ("def _halve_inplace(arr):\n    arr /= 2\n\n"
                   "@register_kernel('k')\ndef k(ctx):\n    a = ctx.input('A')\n    _halve_inplace(a)\n"
                   "    _halve_inplace(arr=ctx.input('B'))\n")
    got = found(code)
    assert [f.line for f in got] == [line_of(code, "arr /= 2")] * 2
    calls = sorted(f.message for f in got)
    assert "input 'A' (via alias 'a')" in calls[0] and f"called at line {line_of(code, '_halve_inplace(a)')}" in calls[0]
    second = line_of(code, "_halve_inplace(arr=ctx.input('B'))")
    assert "input 'B'" in calls[1] and f"called at line {second}" in calls[1]


def test_summary_built_once_for_many_call_sites(monkeypatch):
    runs = []
    real = dataflow.KernelAnalysis.run

    def counting(self, func, state):
        runs.append(func.name.value)
        return real(self, func, state)

    monkeypatch.setattr(dataflow.KernelAnalysis, "run", counting)
    body = "\n".join(f"    _touch(ctx.input('X{i}'))" for i in range(5))
    code = HEAD + "def _touch(a):\n    a.sort()\n\n@register_kernel('k')\ndef k(ctx):\n" + body + "\n"
    assert len(found(code)) == 5
    assert runs.count("_touch") == 1


@pytest.mark.parametrize("helper,call", [
    ("def _f(a):\n    a[0] = 0\n", "_f(ctx.input('X'))"),
    ("def _f(scale, a=None):\n    a *= scale\n", "_f(2, a=ctx.input('X'))"),
    ("def _f(*, target):\n    target.fill(0)\n", "_f(target=ctx.input('X'))"),
    ("def _f(dst):\n    np.copyto(dst=dst, src=0)\n", "_f(ctx.input('X'))"),
    ("def _f(xp, a):\n    xp.clip(a, 0, 1, out=a)\n", "_f(ctx.xp, ctx.input('X'))"),
    ("def _g(b):\n    b[...] = 1\n\ndef _f(a):\n    _g(a.reshape(-1))\n", "_f(ctx.input('X'))"),
    ("def _h(c):\n    c.sort()\n\ndef _g(b):\n    _h(b.T)\n\ndef _f(a):\n    _g(a[1:])\n",
     "_f(ctx.input('X'))"),
    ("def _f(ctx):\n    v = ctx.input('X')\n    v += 1\n", "_f(ctx)"),
    ("def _f(*, c):\n    c.input('X').fill(0)\n", "_f(c=ctx)"),
])
def test_writes_in_helpers_of_every_shape(helper, call):
    code = HEAD + helper + f"\n@register_kernel('k')\ndef k(ctx):\n    {call}\n"
    got = found(code)
    assert len(got) == 1, got
    assert "in helper" in got[0].message
    assert got[0].line < line_of(code, "@register_kernel('k')")  # on the helper's line


@pytest.mark.parametrize("helper,body", [
    ("def _rows(a):\n    return a.reshape(a.shape[0], -1)\n", "r = _rows(ctx.input('X'))\nr[:, 1:] = 0"),
    ("def _pair(a):\n    return a[:1], a[1:]\n", "lo, hi = _pair(ctx.input('X'))\nhi.fill(0)"),
    ("def _parts(a):\n    return [a.T, a.copy()]\n", "t, c = _parts(ctx.input('X'))\nt[0] = 1"),
    ("def _get(ctx):\n    return ctx.input('X')\n", "v = _get(ctx)\nv.sort()"),
    ("def _a(x):\n    return x.ravel()\n\ndef _b(ctx):\n    return _a(ctx.input('X'))\n",
     "v = _b(ctx)\nv[v < 0] = 0"),
])
def test_return_values_are_followed(helper, body):
    assert len(found(kernel(body, extra=helper))) == 1


@pytest.mark.parametrize("helper,body", [
    ("def _rows(a):\n    return a.reshape(a.shape[0], -1).copy()\n", "r = _rows(ctx.input('X'))\nr[:, 1:] = 0"),
    ("def _pair(a):\n    return a[:1] + 0, a[1:] * 2\n", "lo, hi = _pair(ctx.input('X'))\nhi.fill(0)"),
    ("def _first(a):\n    return a[[0]]\n", "v = _first(ctx.input('X'))\nv[0] = 1"),
    ("def _fill(dst, src):\n    dst[...] = src\n", "out = np.empty(3)\n_fill(out, ctx.input('X'))"),
    ("def _shape(a):\n    return a.shape\n", "s = list(_shape(ctx.input('X')))\ns[0] = 1"),
])
def test_helpers_that_copy_or_write_elsewhere_are_quiet(helper, body):
    assert found(kernel(body, extra=helper)) == []


def test_methods_of_the_kernel_class():
    code = HEAD + (
        "class Base:\n    def _norm(self, a):\n        a /= a.sum()\n\n"
        "class K(Base):\n    def compute(self, ctx):\n        self._norm(ctx.input('X'))\n"
        "        self._scale(ctx.input('Y'), 2)\n        K._shift(ctx.input('Z'))\n"
        "        self._safe(ctx.input('W'))\n\n"
        "    @staticmethod\n    def _scale(a, s):\n        a *= s\n\n"
        "    @classmethod\n    def _shift(cls, a):\n        a += 1\n\n"
        "    def _safe(self, a):\n        a = a * 2\n        a += 1\n\n"
        "register_kernel('k')(K)\n")
    got = found(code)
    assert sorted(f.line for f in got) == [line_of(code, "a /= a.sum()"), line_of(code, "a *= s"),
                                          line_of(code, "a += 1")]
    assert sorted(f.message.split("'")[3] for f in got) == ["X", "Y", "Z"]


def test_outputs_set_in_helpers():
    helper = "def _emit(ctx, name, value):\n    ctx.set_output(name, value)\n"
    code = kernel("_emit(ctx, 'Out', ctx.input('X').T)", extra=helper)
    (finding,) = found(code, "OPK004")
    assert finding.line == line_of(code, "ctx.set_output(name, value)")
    assert "sets output 'Out' to input 'X'" in finding.message and "in helper '_emit'" in finding.message
    # the pair declared inplace (the output name comes from the call site): quiet
    declared = helper + "register_operator('k', object, inplace={'X': 'Out'})\n"
    assert found(kernel("_emit(ctx, value=ctx.input('X'), name='Out')", extra=declared), "OPK004") == []
    assert found(kernel("_emit(ctx, 'Mask', ctx.input('X'))", extra=declared), "OPK004")


def test_recursion_and_cycles_terminate():
    code = HEAD + ("def _ping(a, n):\n    if n:\n        _pong(a, n - 1)\n\n"
                   "def _pong(a, n):\n    a[0] = n\n    _ping(a[1:], n)\n\n"
                   "def _self(a):\n    _self(a)\n\n"
                   "@register_kernel('k')\ndef k(ctx):\n    _ping(ctx.input('X'), 3)\n    _self(ctx.input('Y'))\n")
    assert lines(code) == [line_of(code, "a[0] = n")]


def test_deep_chain_is_bounded():
    chain = "".join(f"def _f{i}(a):\n    _f{i + 1}(a)\n\n" for i in range(30))
    code = HEAD + chain + "def _f30(a):\n    a.fill(0)\n\n@register_kernel('k')\ndef k(ctx):\n    _f0(ctx.input('X'))\n"
    assert found(code) == []  # deeper than MAX_HELPER_DEPTH: not followed (no crash)
    short = HEAD + chain.split("def _f3(")[0] + "def _f3(a):\n    a.fill(0)\n\n" \
        "@register_kernel('k')\ndef k(ctx):\n    _f0(ctx.input('X'))\n"
    assert lines(short) == [line_of(short, "a.fill(0)")]


# -- index semantics -------------------------------------------------------------------------
@pytest.mark.parametrize("body", [
    "x = ctx.input('X')\nn, d = x.shape\nfor i in range(n):\n    row = x[i]\n    row /= row.sum()",
    "x = ctx.input('X')\nn, d = x.shape\nrow = x[0]\nrow += 1",
    "x = ctx.input('X').reshape(4, -1)\nrow = x[1]\nrow *= 2",
    "x = ctx.input('X')\nm = np.reshape(x, (2, 3, 4))\nplane = m[0, 1]\nplane -= 1",
    "x = ctx.input('X')\nlast = x[..., -1]\nlast += 1",
    "x = ctx.input('X')\ncol = x[:, 0]\ncol += 1",
    "x = ctx.input('X')\nv = x[None]\nv += 1",
    "x = ctx.input('X').reshape(-1, 4)\nfor i, row in enumerate(x):\n    row *= i",
    "x = ctx.input('X')\nn, d = x.shape\ncol = x.T[1]\ncol *= 3",
    "x = ctx.input('X')\nx[ctx.input('Ids')] = 0",  # writing through any index is a write
    "x = ctx.input('X')\nx[x > 0] += 1",
])
def test_views_are_reported(body):
    assert len(found(kernel(body))) == 1, body


@pytest.mark.parametrize("body", [
    "w = ctx.input('W')\nrows = w[ctx.input('Ids')]\nrows *= 2",
    "x = ctx.input('X')\nmask = x > 0\npos = x[mask]\npos += 1",
    "x = ctx.input('X')\nneg = x[~(x > 0)]\nneg.sort()",
    "x = ctx.input('X')\nsub = x[:, [0, 2]]\nsub[...] = 0",
    "x = ctx.input('X')\ncols = [0, 2]\nsub = x[:, cols]\nsub[0] = 1",
    "x = ctx.input('X')\nidx = np.arange(3)\nsub = x[idx]\nsub += 1",
    "x = ctx.input('X')\nsub = x[x[:, 0] > 0]\nsub[0] = 1",
    "x = ctx.input('X')\norder = np.argsort(x)\ny = x[order]\ny.sort()",
    "x = ctx.input('X')\nk = ctx.attr('k')\ny = x[k]\ny[...] = 0",  # unknown index: a copy
    "x = ctx.input('X')\n(n,) = x.shape\nfor i in range(n):\n    v = x[i]\n    v += 1",  # scalars
    "x = ctx.input('X')\nn, d = x.shape\nv = x[0, 1]\nv += 1",
    "ctx.set_output('Out', ctx.input('X')[ctx.input('Ids')].copy())",
])
def test_copies_and_scalars_are_quiet(body):
    assert found(kernel(body)) == [], body


def test_advanced_index_outputs_are_not_shared():
    assert found(kernel("w = ctx.input('W')\nctx.set_output('Out', w[ctx.input('Ids')])"), "OPK004") == []
    assert found(kernel("x = ctx.input('X')\nctx.set_output('Out', x[x > 0])"), "OPK004") == []
    assert found(kernel("x = ctx.input('X')\nctx.set_output('Out', x[1:, 0])"), "OPK004")


def test_star_args_helpers():
    helper = "def _zero_all(*arrs):\n    for a in arrs:\n        a.fill(0)\n"
    code = kernel("_zero_all(ctx.input('X'), ctx.input('Y'))", extra=helper)
    got = found(code)
    assert [f.line for f in got] == [line_of(code, "a.fill(0)")] * 2
    assert sorted(f.message.split("'")[3] for f in got) == ["X", "Y"]
    assert len(found(kernel("_zero_all(*ctx.inputs('X'))", extra=helper))) == 1
    safe = "def _total(*arrs):\n    out = 0\n    for a in arrs:\n        out = out + a\n    return out\n"
    assert found(kernel("t = _total(ctx.input('X'), ctx.input('Y'))\nt += 1", extra=safe)) == []
    # **kwargs: a dict of the arguments the helper's named parameters do not take
    kw = "def _f(**kw):\n    kw['a'].fill(0)\n"
    assert [f.line for f in found(kernel("_f(**{'a': ctx.input('X')})", extra=kw))] == [5]
    assert found(kernel("_f(a=ctx.input('X').copy())", extra=kw)) == []


OP = ("from opkit import OperatorWithKernel, enforce_eq\n\n"
      "class NormOp(OperatorWithKernel):\n    def infer_shape(self, ctx):\n"
      "        x_dims = list(ctx.get_input_dim('X'))\n{check}"
      "        ctx.set_output_dim('Out', x_dims)\n\nregister_operator('k', NormOp)\n")
ROWS = "x = ctx.input('X')\nfor i in range(x.shape[0]):\n    row = x[i]\n    row /= row.sum()"


@pytest.mark.parametrize("check,reported", [
    ("        enforce(len(x_dims) == 2 and x_dims[1] > 0, 'X must be 2-D')\n", True),
    ("        enforce_eq(len(ctx.get_input_dim('X')), 2, 'X must be 2-D')\n", True),
    ("        enforce_eq(2, len(x_dims), 'X must be 2-D')\n", True),
    ("        enforce_eq(len(x_dims), 1, 'X must be 1-D')\n", False),  # elements: scalars
    ("        enforce(x_dims[1] > 0, 'X needs columns')\n", False),  # rank unknown
    ("        if ctx.attr('strict'):\n            enforce_eq(len(x_dims), 2, 'X must be 2-D')\n", False),
    ("        enforce_eq(len(ctx.get_input_dim('Y')), 2, 'Y must be 2-D')\n", False),  # another slot
])
def test_rank_from_the_ops_infer_shape(check, reported):
    code = kernel(ROWS, extra=OP.format(check=check))
    assert bool(found(code)) == reported


@pytest.mark.parametrize("check", ["enforce_eq(x.ndim, 2, 'X must be 2-D')",
                                   "enforce(len(x.shape) == 2, 'X must be 2-D')",
                                   "assert x.ndim == 2"])
def test_rank_from_the_kernels_own_checks(check):
    body = ROWS.replace("x = ctx.input('X')", f"x = ctx.input('X')\n{check}")
    assert len(found(kernel(body))) == 1
    assert found(kernel(body.replace("2", "1"))) == []
