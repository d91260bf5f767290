"""OPK004: outputs that are inputs (or views of them)."""
from __future__ import annotations

from .helpers import kernel, rules_of


def found(body: str, extra: str = "", op: str = "k") -> list:
    return rules_of(kernel(body, op=op, extra=extra), "OPK004")


def test_alias_and_views_are_reported():
    assert found("ctx.set_output('Out', ctx.input('X'))")
    assert found("x = ctx.input('X')\ny = x\nctx.set_output('Out', y)")
    assert found("x = ctx.input('X')\nctx.set_output('Out', x.reshape(-1)[1:])")
    assert found("ctx.set_output('Out', ctx.xp.asarray(ctx.input('X')))")
    assert found("for x in ctx.inputs('X'):\n    ctx.set_output('Out', x)")
    assert found("ctx.set_output('Out', ctx.input_tensor('X').data.T)")


def test_copies_are_quiet():
    assert found("ctx.set_output('Out', ctx.input('X').copy())") == []
    assert found("ctx.set_output('Out', ctx.input('X') + 0)") == []
    assert found("x = ctx.input('X')\nx = x.astype('float32')\nctx.set_output('Out', x)") == []
    assert found("out = ctx.output_tensor('Out').mutable_data((2,), 'float32')\n"
                 "ctx.set_output('Out', out)") == []


def test_inplace_declared_pair_is_quiet_other_pairs_are_not():
    extra = "register_operator('k', object, inplace={'X': 'Out'})\n"
    assert found("ctx.set_output('Out', ctx.input('X'))", extra) == []
    assert found("ctx.set_output('Out', ctx.input('Y'))", extra)
    assert found("ctx.set_output('Mask', ctx.input('X'))", extra)


def test_inplace_from_constant_and_unresolvable():
    extra = "INPLACE = {'X': 'Out'}\nregister_operator('k', object, inplace=INPLACE)\n"
    assert found("ctx.set_output('Out', ctx.input('X'))", extra) == []
    extra = "register_operator('k', object, inplace=make_inplace())\n"
    assert found("ctx.set_output('Out', ctx.input('X'))", extra) == []


def test_grad_var_name_outputs():
    extra = "from opkit import grad_var_name\nregister_operator('k', object, inplace={grad_var_name('Out'): grad_var_name('X')})\n"
    body = "ctx.set_output(grad_var_name('X'), ctx.input(grad_var_name('Out')))"
    assert found(body, extra) == []
    assert found(body)
