"""Forms beyond the rule examples and the blind set (issue 26): each kernel is reported
(OPK001/OPK003/OPK004) when it writes or hands out an input, and quiet when it does not."""
from __future__ import annotations

import pytest

from .helpers import kernel, lint

H = "import numpy as np\nfrom opkit import register_kernel, register_operator, OpKernel\n\n"
BODIES = {
 "list_aug": ("buf = [ctx.input('X')]\nbuf[0] += 1\nctx.set_output('Out', np.zeros(1))", 1),
 "inputs_list_aug": ("xs = list(ctx.inputs('X'))\nxs[0] *= 2\nctx.set_output('Out', np.zeros(1))", 1),
 "dict_rebind_ok": ("d = {'x': ctx.input('X')}\nd['x'] = d['x'] * 2\nd['x'] += 1\nctx.set_output('Out', d['x'])", 0),
 "rng_legacy": ("x = ctx.input('X')\nnp.random.shuffle(x)\nctx.set_output('Out', x.copy())", 1),
 "rs": ("x = ctx.input('X')\nrs = np.random.RandomState(0)\nrs.shuffle(x)\nctx.set_output('Out', x.copy())", 1),
 "modf_out": ("x = ctx.input('X')\nfrac = np.empty_like(x)\nnp.modf(x, frac, x)\nctx.set_output('Out', frac)", 1),
 "where_3": ("x = ctx.input('X')\ny = np.where(x > 0, x, 0)\ny += 1\nctx.set_output('Out', y)", 0),
 "items_loop": ("d = {'a': ctx.input('X')}\nfor k, v in d.items():\n    v[...] = 0\nctx.set_output('Out', np.zeros(1))", 1),
 "enum_inputs": ("for i, a in enumerate(ctx.inputs('X')):\n    a /= 2\nctx.set_output('Out', np.zeros(1))", 1),
 "lambda_map_ok": ("ys = list(map(lambda a: a * 2, ctx.inputs('X')))\nys[0] += 1\nctx.set_output('Out', ys[0])", 0),
 "lambda_map_bad": ("list(map(lambda a: a.fill(0), ctx.inputs('X')))\nctx.set_output('Out', np.zeros(1))", 1),
 "setdefault": ("cache = {}\ncache.setdefault('x', ctx.input('X'))\ncache['x'].sort()\nctx.set_output('Out', np.zeros(1))", 1),
 "tuple_swap_ok": ("a, b = ctx.input('X'), np.zeros(3)\na, b = b, a\na += 1\nctx.set_output('Out', a)", 0),
 "out_tuple": ("x = ctx.input('X')\nnp.sin(x, out=(x,))\nctx.set_output('Out', x.copy())", 1),
 "astype_nocopy": ("x = ctx.input('X')\ny = x.astype(x.dtype, copy=False)\ny += 1\nctx.set_output('Out', y.copy())", 1),
 "clip_pos_out": ("x = ctx.input('X')\nnp.clip(x, 0, 1, x)\nctx.set_output('Out', x.copy())", 1),
 "method_clip_out": ("x = ctx.input('X')\nx.clip(0, 1, out=x)\nctx.set_output('Out', x.copy())", 1),
 "ufunc_var": ("x = ctx.input('X')\nf = np.maximum\nf(x, 0, out=x)\nctx.set_output('Out', x.copy())", 1),
 "ufunc_var_ok": ("x = ctx.input('X')\nf = np.maximum\ny = f(x, 0)\ny += 1\nctx.set_output('Out', y)", 0),
 "sort_fn_ok": ("x = ctx.input('X')\ny = np.sort(x)\ny[0] = 0\nctx.set_output('Out', y)", 0),
 "nested_closure": ("x = ctx.input('X')\ndef outer():\n    def inner():\n        x.fill(0)\n    inner()\nouter()\nctx.set_output('Out', np.zeros(1))", 1),
 "closure_rebind_ok": ("x = ctx.input('X')\ndef work():\n    y = x.copy()\n    y[0] = 1\n    return y\nctx.set_output('Out', work())", 0),
}
MODULES = {
 "load_then_write": (H + "class K(OpKernel):\n    def compute(self, ctx):\n        self._load(ctx)\n        self.x *= 2\n        ctx.set_output('Out', self.x.copy())\n\n    def _load(self, ctx):\n        self.x = ctx.input('X')\n\nregister_kernel('k')(K)\n", 1),
 "load_copy_ok": (H + "class K(OpKernel):\n    def compute(self, ctx):\n        self._load(ctx)\n        self.x *= 2\n        ctx.set_output('Out', self.x)\n\n    def _load(self, ctx):\n        self.x = ctx.input('X').copy()\n\nregister_kernel('k')(K)\n", 0),
 "cache_dict_attr": (H + "class K(OpKernel):\n    def compute(self, ctx):\n        self.cache = {}\n        self.cache['x'] = ctx.input('X')\n        self._zero()\n        ctx.set_output('Out', np.zeros(1))\n\n    def _zero(self):\n        self.cache['x'].fill(0)\n\nregister_kernel('k')(K)\n", 1),
 "out_attr": (H + "class K(OpKernel):\n    def compute(self, ctx):\n        self.y = ctx.input('X').reshape(-1)\n        self._emit(ctx)\n\n    def _emit(self, ctx):\n        ctx.set_output('Out', self.y)\n\nregister_kernel('k')(K)\n", 1),
 "helper_dict_return": (H + "def _views(ctx):\n    return {'x': ctx.input('X'), 'n': 3}\n\n@register_kernel('k')\ndef k(ctx):\n    v = _views(ctx)\n    v['x'][0] = 1\n    ctx.set_output('Out', np.zeros(1))\n", 1),
 "helper_dict_return_ok": (H + "def _views(ctx):\n    return {'x': ctx.input('X').copy(), 'n': 3}\n\n@register_kernel('k')\ndef k(ctx):\n    v = _views(ctx)\n    v['x'][0] = 1\n    ctx.set_output('Out', v['x'])\n", 0),
 "staticmethod_reg_loop": (H + "class K(OpKernel):\n    def compute(self, ctx):\n        x = ctx.input('X')\n        x += 1\n        ctx.set_output('Out', x.copy())\n\nfor op in ['a', 'b']:\n    register_kernel(op)(K)\n", 1),
 "reg_list_pairs": (H + "def k1(ctx):\n    ctx.set_output('Out', ctx.input('X'))\n\nfor op, fn in [('a', k1)]:\n    register_kernel(op)(fn)\n", 1),
 "reg_const_list": (H + "OPS = ('a', 'b')\ndef k1(ctx):\n    ctx.set_output('Out', ctx.input('X') * 2)\n\nfor op in OPS:\n    register_kernel(op, dtypes=('float32',))(k1)\n", 1),
}


def _rules(code: str) -> list:
    return [f.rule for f in lint(code, dedent=False).findings]


@pytest.mark.parametrize("name", list(BODIES))
def test_kernel_bodies(name):
    body, reported = BODIES[name]
    got = _rules(kernel(body))
    assert (len(got) >= 1) == bool(reported), got
    assert set(got) <= {"OPK001", "OPK004"}


@pytest.mark.parametrize("name", list(MODULES))
def test_modules(name):
    code, reported = MODULES[name]
    got = _rules(code)
    assert (len(got) >= 1) == bool(reported), got
