"""OPK005 and its autofix."""
from __future__ import annotations

import libcst as cst

from .helpers import lint

H = "from opkit import OperatorWithKernel, OpKernelType\n\nclass Op(OperatorWithKernel):\n"


def method(body: str) -> str:
    return H + "    def get_expected_kernel_type(self, ctx):\n" + "".join(
        f"        {line}\n" for line in body.splitlines())


def test_direct_reads_are_reported_and_fixed():
    for expr in ("ctx.input('X').dtype", "ctx.input_tensor('X').dtype",
                 "ctx.input_var('X').get_tensor().dtype", "ctx.input_tensor('X').data.dtype"):
        code = method(f"return OpKernelType({expr}, ctx.place)")
        result = lint(code, dedent=False, fix=True)
        (finding,) = result.findings
        assert finding.rule == "OPK005" and finding.fixable
        assert "self.indicate_var_data_type(ctx, 'X')" in result.fixed
        cst.parse_module(result.fixed)
        assert lint(result.fixed, dedent=False).findings == []


def test_alias_read_is_reported_not_fixed():
    result = lint(method("x = ctx.input('X')\nreturn OpKernelType(x.dtype, ctx.place)"), dedent=False, fix=True)
    (finding,) = result.findings
    assert not finding.fixable and result.fixed is None


def test_indicate_var_data_type_and_other_methods_are_quiet():
    assert lint(method("return OpKernelType(self.indicate_var_data_type(ctx, 'X'), ctx.place)"),
                dedent=False).findings == []
    code = H + "    def infer_shape(self, ctx):\n        return ctx.input('X').dtype\n"
    assert lint(code, dedent=False).findings == []


def test_fix_keeps_custom_self_and_ctx_names():
    code = H + "    def get_expected_kernel_type(me, c):\n        return c.input(\"Y\").dtype\n"
    result = lint(code, dedent=False, fix=True)
    assert 'me.indicate_var_data_type(c, "Y")' in result.fixed
