"""OPK005 unchecked-kernel-dtype (autofixable)."""
from __future__ import annotations

import libcst as cst

from checkers.lint.astutil import params, suite_statements
from checkers.lint.rules.base import Example, Report, Rule

INPUT_CALLS = ("input", "input_tensor", "input_var", "inputs")


class UncheckedKernelDtype(Rule):
    code = "OPK005"
    name = "unchecked-kernel-dtype"
    summary = ("`get_expected_kernel_type` reads an input's "
               'dtype directly instead of `indicate_var_data_type`')
    triggers = ('get_expected_kernel_type',)
    fixable = True
    rationale = (
        "`get_expected_kernel_type` must take the dtype from "
        "`self.indicate_var_data_type(ctx, \"X\")`, which checks that the variable is "
        "initialized and names the op and the variable when it is not; reading "
        "`ctx.input(\"X\").dtype` fails with an unhelpful AttributeError on an uninitialized "
        "input. `opkit lint --fix` rewrites the direct forms (`ctx.input(\"X\").dtype`, "
        "`ctx.input_tensor(\"X\").dtype`, `ctx.input_var(\"X\")...dtype`, and "
        "`ctx.inputs(\"X\")[0].dtype`); reads through a local name, and of another element of "
        "`ctx.inputs(...)`, are reported but not rewritten."
    )
    VALID = [
        "from opkit import OperatorWithKernel, OpKernelType\n\nclass MulOp(OperatorWithKernel):\n"
        "    def get_expected_kernel_type(self, ctx):\n"
        "        return OpKernelType(self.indicate_var_data_type(ctx, 'X'), ctx.place)\n"
        "\n    def infer_shape(self, ctx):\n        dtype = ctx.input('X').dtype\n",
        "from opkit import OperatorWithKernel\n\nclass SumOp(OperatorWithKernel):\n"
        "    def get_expected_kernel_type(self, ctx):\n"
        "        return self.indicate_var_data_type(ctx, 'X')\n\n"
        "    def infer_shape(self, ctx):\n        dtype = ctx.inputs('X')[0].dtype\n",
    ]
    INVALID = [
        Example("from opkit import OperatorWithKernel, OpKernelType\n\nclass MulOp(OperatorWithKernel):\n"
        "    def get_expected_kernel_type(self, ctx):\n"
                "        return OpKernelType(ctx.input('X').dtype, ctx.place)\n", line=5,
                fixed="from opkit import OperatorWithKernel, OpKernelType\n\nclass MulOp(OperatorWithKernel):\n"
                      "    def get_expected_kernel_type(self, ctx):\n"
                      "        return OpKernelType(self.indicate_var_data_type(ctx, 'X'), ctx.place)\n"),
        Example("class MulOp:\n    def get_expected_kernel_type(self, ctx):\n"
                "        t = ctx.input_tensor('Y')\n        return t.dtype\n", line=4),
        # the first variable of a duplicable input
        Example("class SumOp:\n    def get_expected_kernel_type(op, c):\n"
                "        return c.inputs('X')[0].dtype\n", line=3,
                fixed="class SumOp:\n    def get_expected_kernel_type(op, c):\n"
                      "        return op.indicate_var_data_type(c, 'X')\n"),
        # another element: reported, not rewritten (indicate_var_data_type reads the first)
        Example("class SumOp:\n    def get_expected_kernel_type(self, ctx):\n"
                "        return ctx.inputs('X')[1].dtype\n", line=3),
    ]

    def check(self, ctx):
        for cls in ctx.module.body:
            if not isinstance(cls, cst.ClassDef) or not isinstance(cls.body, cst.IndentedBlock):
                continue
            for func in cls.body.body:
                if isinstance(func, cst.FunctionDef) and func.name.value == "get_expected_kernel_type":
                    yield from self._method(func)

    def _method(self, func: cst.FunctionDef):
        names = params(func)
        self_name = names[0] if names else "self"
        finder = _DtypeReads()
        for stmt in suite_statements(func.body):
            stmt.visit(finder)
        for node, call, alias in finder.reads:
            slot = call.args[0].value if call.args else None
            if call.func.attr.value == "inputs" and not _first_of(node, call):
                slot = None  # ctx.inputs("X")[i], i != 0: indicate_var_data_type reads the first
            what = f"'{alias}'" if alias else cst.Module([]).code_for_node(call)
            message = (f"get_expected_kernel_type reads the dtype of {what} directly; use "
                       f"{self_name}.indicate_var_data_type(ctx, ...) so an uninitialized input is "
                       "reported by name")
            fix = None
            if alias is None and slot is not None and isinstance(call.func, cst.Attribute):
                fix = cst.Call(
                    func=cst.Attribute(value=cst.Name(self_name), attr=cst.Name("indicate_var_data_type")),
                    args=[cst.Arg(call.func.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                          cst.Arg(slot)])
            yield Report(node, message, fix)


class _DtypeReads(cst.CSTVisitor):
    """`<ctx>.input*(S)....dtype`, directly or through a local name."""

    def __init__(self) -> None:
        self.reads: list = []
        self.aliases: dict[str, cst.Call] = {}

    def visit_Assign(self, node: cst.Assign) -> None:
        call = _input_call(node.value)
        for target in node.targets:
            if isinstance(target.target, cst.Name):
                if call is not None:
                    self.aliases[target.target.value] = call
                else:
                    self.aliases.pop(target.target.value, None)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value != "dtype":
            return True
        call = _input_call(node.value)
        if call is not None:
            self.reads.append((node, call, None))
            return False
        base = node.value
        while isinstance(base, (cst.Attribute, cst.Call, cst.Subscript)):
            base = base.func if isinstance(base, cst.Call) else base.value
        if isinstance(base, cst.Name) and base.value in self.aliases:
            self.reads.append((node, self.aliases[base.value], base.value))
            return False
        return True


def _input_call(expr) -> cst.Call | None:
    """The `ctx.input*(...)` call at the bottom of `ctx.input_var(S).get_tensor()...`."""
    while True:
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in INPUT_CALLS \
                    and isinstance(func.value, cst.Name):
                return expr
            expr = func
        elif isinstance(expr, (cst.Attribute, cst.Subscript)):
            expr = expr.value
        else:
            return None


def _first_of(node: cst.Attribute, call: cst.Call) -> bool:
    """`ctx.inputs(S)[0].dtype`: the read is of the first variable of the slot."""
    sub = node.value
    return isinstance(sub, cst.Subscript) and sub.value is call and len(sub.slice) == 1 \
        and isinstance(sub.slice[0].slice, cst.Index) \
        and isinstance(sub.slice[0].slice.value, cst.Integer) and sub.slice[0].slice.value.value == "0"
