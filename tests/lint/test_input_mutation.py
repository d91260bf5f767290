"""OPK001: flow-sensitive input tracking inside kernels."""
from __future__ import annotations

import pytest

from .helpers import HEAD, kernel, rules_of


def mutation(body: str, **kw) -> list:
    return rules_of(kernel(body, **kw), "OPK001")


@pytest.mark.parametrize("body", [
    "x = ctx.input('X')\nx[0] = 1",
    "x = ctx.input('X')\nx += 1",
    "x = ctx.input('X')\nx.sort()",
    "x = ctx.input('X')\nx.fill(0)",
    "x = ctx.input('X')\nx.put([0], [1])",
    "x = ctx.input('X')\nx.partition(1)",
    "x = ctx.input('X')\nx.resize((2, 2))",
    "x = ctx.input('X')\nx.partition(1)",
    "x = ctx.input('X')\nx.setflags(write=True)",
    "x = ctx.input('X')\nx.byteswap(True)",
    "x = ctx.input('X')\nnp.copyto(x, 0)",
    "x = ctx.input('X')\nnp.put(x, [0], [1])",
    "x = ctx.input('X')\nnp.place(x, x > 0, [1])",
    "x = ctx.input('X')\nnp.putmask(x, x > 0, 1)",
    "x = ctx.input('X')\nnp.add.at(x, [0], 1)",
    "x = ctx.input('X')\nnp.exp(x, out=x)",
    "x = ctx.input('X')\nnp.maximum(x, 0, out=x)",
    "xp = ctx.xp\nx = ctx.input('X')\nxp.copyto(x, 0)",
    "ctx.xp.multiply.at(ctx.input('X'), [0], 2)",
    "ctx.input('X')[0] = 1",
    "t = ctx.input_tensor('X')\nt.data[0] = 1",
    "d = ctx.input_tensor('X').data\nd *= 2",
    "v = ctx.input_var('X')\nv.get_tensor().data[:] = 0",
    "a, b = ctx.input('X'), ctx.input('Y')\nb[0] = 1",
    "xs = ctx.inputs('X')\nxs[0][...] = 0",
    "for x in ctx.inputs('X'):\n    x *= 2",
    "for i, x in enumerate(ctx.inputs('X')):\n    x[i] = 0",
    "a, b = ctx.inputs('X')\na.fill(1)",
    "x = ctx.input('X')\ny = x[1:]\nz = y.reshape(-1)\nw = z.T\nw[0] = 5",
    "x = ctx.input('X')\nv = np.asarray(x).ravel()\nv += 1",
    "x = ctx.input('X')\nv = np.expand_dims(np.squeeze(x), 0)\nv[0] = 1",
    "x = ctx.input('X')\nv = np.broadcast_to(np.swapaxes(x, 0, 1), (2, 2))\nv.sort()",
    "x = ctx.input('X')\nv = x.view()\nv.shape = (4,)",
    "x = ctx.input('X')\nrow = x[0]\nrow[:] = 0",
    "x = ctx.input('X')\ny = x.astype('float32', copy=False)\ny += 1",
    "x = ctx.input('X')\ny = np.array(x, copy=False)\ny[0] = 1",
    "x = ctx.input('X')\nif ctx.attr('a'):\n    y = x\nelse:\n    y = x.copy()\ny[0] = 1",
    "x = ctx.input('X')\nwhile True:\n    x[0] = 1\n    break",
    "x = ctx.input('X')\nnp.random.shuffle(x)",
    "import numpy\nx = ctx.input('X')\nnumpy.copyto(x, 1)",
    "x = ctx.input('X')\n(y := x)[0] = 1",
    "x = ctx.input('X')\nparts = np.split(x, 2)\nparts[0][...] = 0",
])
def test_writes_are_reported(body):
    found = mutation(body)
    assert found, body
    assert "writes to input" in found[0].message


@pytest.mark.parametrize("body", [
    "x = ctx.input('X').copy()\nx[0] = 1",
    "x = np.array(ctx.input('X'))\nx[0] = 1",
    "x = ctx.input('X')\nx = x + 1\nx[0] = 1",
    "x = ctx.input('X')\nx = x * 2\nx += 1",
    "x = ctx.input('X').astype('float64')\nx.sort()",
    "x = np.exp(ctx.input('X'))\nx += 1",
    "x = ctx.input('X')\ny = x.flatten()\ny[0] = 0",
    "x = ctx.input('X')\nout = ctx.output_tensor('Out').mutable_data(x.shape, x.dtype)\nout[...] = x\n"
    "np.add(x, 1, out=out)",
    "x = ctx.input('X')\nx = np.zeros(3)\nx[0] = 1",
    "x = ctx.input('X')\ns = x.sum()\ns += 1",
    "x = ctx.input('X')\nv = x[0]\nv += 1",  # may be a scalar: += rebinds it
    "xs = [a.copy() for a in ctx.inputs('X')]\nxs[0][0] = 1",
    "x = ctx.input('X')\nx.sort",  # no call
    "y = np.empty(3)\nnp.copyto(y, ctx.input('X'))",
    "x = ctx.input('X')\nn = x.shape\nn = list(n)\nn[0] = 1",
    "x = ctx.input('X')\ndel x\nx = np.ones(2)\nx[0] = 0",
    "x = ctx.input('X')\ny = sorted(x.tolist())\ny.sort()",
])
def test_copies_and_new_values_are_quiet(body):
    assert mutation(body) == [], body


def test_message_names_kernel_slot_alias_and_line():
    code = kernel("x = ctx.input('X')\nz = x\nz[0] = 1")
    (finding,) = rules_of(code, "OPK001")
    assert finding.message == f"kernel 'k' writes to input 'X' (via alias 'z') at line {finding.line}"
    assert code.splitlines()[finding.line - 1].strip() == "z[0] = 1"


def test_grad_var_name_slot():
    code = kernel("d = ctx.input(grad_var_name('Out'))\nd[0] = 0").replace(
        "import numpy as np", "import numpy as np\nfrom opkit import grad_var_name")
    (finding,) = rules_of(code, "OPK001")
    assert "'Out@GRAD'" in finding.message


def test_shadowing_ctx_name_in_helper_and_rebinding():
    # `x` is rebound to a copy before the write: quiet
    assert mutation("x = ctx.input('X')\nx = x.copy()\nx[...] = 0") == []
    # write before the rebinding still counts
    assert mutation("x = ctx.input('X')\nx[0] = 1\nx = x.copy()")


def test_not_a_kernel_is_not_checked():
    code = HEAD + "def helper(ctx):\n    x = ctx.input('X')\n    x[0] = 1\n"
    assert rules_of(code, "OPK001") == []


def test_kernel_passed_to_register_kernel_and_opkernel_class():
    code = HEAD + (
        "def relu(ctx):\n    ctx.input('X')[0] = 1\n\nregister_kernel('relu')(relu)\n\n"
        "class ReluKernel(OpKernel):\n    def compute(self, c):\n        x = c.input('X')\n"
        "        x += 1\n\nregister_kernel('relu', place='GPU')(ReluKernel)\n\n"
        "@register_kernel('gelu')\nclass GeluKernel(OpKernel):\n    def compute(self, ctx):\n"
        "        ctx.input('X').sort()\n")
    messages = sorted(f.message for f in rules_of(code, "OPK001"))
    assert [m.split("'")[1] for m in messages] == ["GeluKernel.compute", "ReluKernel.compute", "relu"]


def test_helper_two_levels_deep():
    code = HEAD + ("def inner(b):\n    b[0] = 0\n\ndef outer(a):\n    inner(a)\n\n"
                   "@register_kernel('k')\ndef k(ctx):\n    outer(ctx.input('X'))\n")
    (finding,) = rules_of(code, "OPK001")
    assert finding.line == 5  # `b[0] = 0` in inner
    assert finding.message.endswith("in helper 'inner' (as 'b'), reached through 'outer' "
                                    "called at line 12"), finding.message


def test_helper_that_copies_is_quiet_and_recursion_terminates():
    code = HEAD + ("def safe(a):\n    a = a.copy()\n    a[0] = 1\n\ndef rec(a):\n    rec(a)\n\n"
                   "@register_kernel('k')\ndef k(ctx):\n    safe(ctx.input('X'))\n    rec(ctx.input('X'))\n")
    assert rules_of(code, "OPK001") == []


def test_from_import_of_array_function():
    code = kernel("copyto(ctx.input('X'), 1)").replace("import numpy as np", "from numpy import copyto")
    assert rules_of(code, "OPK001")


def test_suppression_comment():
    code = kernel("x = ctx.input('X')\nx[0] = 1  # opkit: ignore[OPK001]")
    assert rules_of(code, "OPK001") == []
