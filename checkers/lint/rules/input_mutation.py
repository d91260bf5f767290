"""OPK001 input-mutation."""
from __future__ import annotations

from checkers.lint.rules.base import Example, Report, Rule

_HEAD = "import numpy as np\nfrom opkit import register_kernel\n\n"


class InputMutation(Rule):
    code = "OPK001"
    name = "input-mutation"
    summary = 'a kernel writes to an input, or to a view or alias of one'
    triggers = ('register_kernel',)
    rationale = (
        "Kernels receive their inputs as read-only views of the variables in the scope; "
        "writing to one corrupts the value other ops (and the gradient pass) read. The check "
        "follows each input through aliases and views until the name is rebound: assignment, "
        "unpacking, basic indexing (integers, slices, `...`, `None`: a view, or a scalar once "
        "every axis has an integer), `reshape`, `ravel`, `view`, `.T`, `transpose`, `asarray`, "
        "`squeeze`, `expand_dims`, `swapaxes`, `broadcast_to`, elements of `ctx.inputs(...)`, "
        "loop targets. Copies are new arrays: `copy()`, `np.array(x)`, `astype`, arithmetic, "
        "ufunc results, and indexing with an integer or boolean array, a list or a comparison "
        "(`w[ids]`, `x[mask]`, `x[:, [0, 2]]`). An index whose kind cannot be told (an "
        "attribute, an unknown call) counts as a copy. Ranks are followed where the code "
        "shows them (`n, d = x.shape`, `reshape(n, -1)`, `ravel()`, `enforce_eq(x.ndim, 2, ...)`, "
        "a rank check in the op's `infer_shape`), so `row = x[i]` of a 2-D input is a view; with the rank unknown, `y = x[i]` may be a scalar and `y += 1` is "
        "not reported (`y[...] = v` is). Writes are subscript and augmented assignment, "
        "`out=` (also by position: a ufunc's outputs follow its `nin` inputs; "
        "`np.clip(a, lo, hi, out)`; or spread from a dict), in-place methods and functions "
        "(`sort`, `fill`, `put`, `resize`, `np.copyto`, `np.place`, `np.<ufunc>.at`, a random "
        "generator's `shuffle`, ...), also through `xp = ctx.xp`: which calls write, which return "
        "views and where outputs go come from a table generated from numpy itself "
        "(checkers/lint/numpy_table.py). Values are followed through object attributes across "
        "methods, objects of local classes, dicts, lists, sets, comprehensions, tuple and "
        "starred unpacking, closures, lambdas, `*args`/`**kwargs`, helpers of the module and "
        "helpers imported from other modules of the project (read, never imported): an input "
        "passed in, returned back (`rows = _as_rows(x)`), or fetched by the helper from `ctx` "
        "itself. A write inside a helper of the module is reported on the helper's line, "
        "naming the kernel's call; inside an imported helper, on the kernel's call. Where the "
        "analysis stops, OPK009 can say so (off by default)."
    )
    VALID = [
        _HEAD + "@register_kernel('relu')\ndef relu_kernel(ctx):\n    x = ctx.input('X').copy()\n"
                "    x[x < 0] = 0\n    ctx.set_output('Out', x)\n",
        _HEAD + "@register_kernel('scale')\ndef scale_kernel(ctx):\n    x = ctx.input('X')\n"
                "    x = x * ctx.attr('scale')\n    x += 1\n    ctx.set_output('Out', x)\n",
        _HEAD + "@register_kernel('fill')\ndef fill_kernel(ctx):\n    x = ctx.input('X')\n"
                "    out = ctx.output_tensor('Out').mutable_data(x.shape, x.dtype)\n"
                "    out[...] = 0\n    np.add(x, 1, out=out)\n",
        _HEAD + "@register_kernel('cast')\ndef cast_kernel(ctx):\n    y = ctx.input('X').astype('float64')\n"
                "    y.sort()\n    ctx.set_output('Out', y)\n",
        # advanced indexing makes copies: a gather, a boolean mask, a list of columns
        _HEAD + "@register_kernel('lookup')\ndef lookup_kernel(ctx):\n    w = ctx.input('W')\n"
                "    ids = ctx.input('Ids')\n    rows = w[ids]\n    rows *= ctx.attr('scale')\n"
                "    ctx.set_output('Out', rows)\n",
        _HEAD + "@register_kernel('pos')\ndef pos_kernel(ctx):\n    x = ctx.input('X')\n"
                "    mask = x > 0\n    kept = x[mask]\n    kept.sort()\n    picked = x[:, [0, 2]]\n"
                "    picked[...] = 0\n    ctx.set_output('Out', kept + picked.sum())\n",
        # an element of a 1-D input is a scalar: `+=` rebinds the name
        _HEAD + "@register_kernel('acc')\ndef acc_kernel(ctx):\n    x = ctx.input('X')\n"
                "    (n,) = x.shape\n    total = 0.0\n    for i in range(n):\n        v = x[i]\n"
                "        v += 1\n        total += v\n    ctx.set_output('Out', np.full(1, total))\n",
        # a helper that copies before writing, and hands the copy back
        _HEAD + "def _normalized(a):\n    a = a.astype('float64')\n    a /= a.sum()\n    return a\n\n"
                "@register_kernel('norm')\ndef norm_kernel(ctx):\n"
                "    ctx.set_output('Out', _normalized(ctx.input('X')))\n",
        # -- forms followed since issue 26: each has an INVALID twin below --
        # object attributes across methods: the attribute holds a copy
        _HEAD + "class ScaleKernel:\n    def compute(self, ctx):\n        self.x = ctx.input('X').copy()\n"
                "        self._scale()\n        ctx.set_output('Out', self.x)\n\n"
                "    def _scale(self):\n        self.x *= 2\n\nregister_kernel('scale')(ScaleKernel)\n",
        # an object of a local class keeps a copy
        _HEAD + "class _Box:\n    def __init__(self, a):\n        self.a = a.copy()\n\n"
                "@register_kernel('box')\ndef box_kernel(ctx):\n    b = _Box(ctx.input('X'))\n"
                "    b.a += 1\n    ctx.set_output('Out', b.a)\n",
        # a dict (and a dict comprehension) of copies
        _HEAD + "@register_kernel('d')\ndef d_kernel(ctx):\n"
                "    bufs = {n: ctx.input(n).astype('float64') for n in ('X',)}\n"
                "    bufs['X'] -= 1\n    ctx.set_output('Out', bufs['X'])\n",
        # starred unpacking of copies
        _HEAD + "@register_kernel('st')\ndef st_kernel(ctx):\n"
                "    head, *tail = [a.copy() for a in ctx.inputs('X')]\n"
                "    for t in tail:\n        t += head\n    ctx.set_output('Out', head)\n",
        # a closure writing the kernel's own buffer
        _HEAD + "@register_kernel('cl')\ndef cl_kernel(ctx):\n    x = ctx.input('X')\n"
                "    out = np.empty_like(x)\n\n    def put(v):\n        out[...] = v\n\n"
                "    put(x * 2)\n    ctx.set_output('Out', out)\n",
        # a lambda returning a new array
        _HEAD + "@register_kernel('lm')\ndef lm_kernel(ctx):\n    f = lambda a: np.clip(a, 0, 1)\n"
                "    y = f(ctx.input('X'))\n    y += 1\n    ctx.set_output('Out', y)\n",
        # **kwargs: the helper copies
        _HEAD + "def _dbl(**arrays):\n    a = arrays['x'].copy()\n    a *= 2\n    return a\n\n"
                "@register_kernel('kw')\ndef kw_kernel(ctx):\n    ctx.set_output('Out', _dbl(x=ctx.input('X')))\n",
        # a ufunc's third positional argument is its output: here a new buffer
        _HEAD + "@register_kernel('po')\ndef po_kernel(ctx):\n    x = ctx.input('X')\n"
                "    buf = np.empty_like(x)\n    np.add(x, 1, buf)\n    y = np.clip(x, 0, 1)\n"
                "    ctx.set_output('Out', buf + y)\n",
        # a random generator shuffling an index array, permutation() copying
        _HEAD + "@register_kernel('rg')\ndef rg_kernel(ctx):\n    x = ctx.input('X')\n"
                "    rng = np.random.default_rng(0)\n    idx = np.arange(len(x))\n    rng.shuffle(idx)\n"
                "    p = rng.permutation(x)\n    p.sort()\n    ctx.set_output('Out', p[idx])\n",
        # views from numpy's table, copied before the write
        _HEAD + "@register_kernel('sp')\ndef sp_kernel(ctx):\n"
                "    parts = [p.copy() for p in np.split(ctx.input('X'), 2)]\n"
                "    parts[0][...] = 0\n    ctx.set_output('Out', np.concatenate(parts))\n",
        # a helper imported from another module of the project, which copies
        Example(_HEAD.replace("\n\n", "\nfrom mylib.rows import normalized\n\n", 1)
                + "@register_kernel('nr')\ndef nr_kernel(ctx):\n    y = normalized(ctx.input('X'))\n"
                  "    y *= 2\n    ctx.set_output('Out', y)\n",
                files=(("mylib/__init__.py", ""),
                       ("mylib/rows.py", "def normalized(a):\n    return a / a.sum()\n"))),
    ]
    INVALID = [
        Example(_HEAD + "@register_kernel('relu')\ndef relu_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    x[x < 0] = 0\n    ctx.set_output('Out', x.copy())\n", line=7),
        Example(_HEAD + "@register_kernel('flat')\ndef flat_kernel(ctx):\n    xp = ctx.xp\n"
                        "    v = ctx.input('X').reshape(-1)[1:]\n    xp.copyto(v, 0)\n"
                        "    ctx.set_output('Out', xp.zeros(3))\n", line=8),
        Example(_HEAD + "@register_kernel('sum')\ndef sum_kernel(ctx):\n    for x in ctx.inputs('X'):\n"
                        "        x *= 2\n    ctx.set_output('Out', np.zeros(3))\n", line=7),
        Example(_HEAD + "def _clear(a):\n    a.fill(0)\n\n@register_kernel('clear')\ndef clear_kernel(ctx):\n"
                        "    _clear(ctx.input('X'))\n    ctx.set_output('Out', np.zeros(3))\n", line=5),
        # a helper's return value is followed: rows is a view of X
        Example(_HEAD + "def _as_rows(a):\n    return a.reshape(a.shape[0], -1)\n\n"
                        "@register_kernel('trim')\ndef trim_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    rows = _as_rows(x)\n    rows[:, ctx.attr('k'):] = 0\n"
                        "    ctx.set_output('Out', rows.copy())\n", line=11),
        # a helper given only ctx fetches the input itself
        Example(_HEAD + "def _clip_input(ctx, lo, hi):\n    xp = ctx.xp\n    x = ctx.input('X')\n"
                        "    xp.clip(x, lo, hi, out=x)\n    return x\n\n"
                        "@register_kernel('clip')\ndef clip_kernel(ctx):\n"
                        "    y = _clip_input(ctx, ctx.attr('min'), ctx.attr('max'))\n"
                        "    ctx.set_output('Out', y.copy())\n", line=7),
        # a row of a 2-D input is a view
        Example(_HEAD + "@register_kernel('row_norm')\ndef row_norm_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    n, d = x.shape\n    for i in range(n):\n        row = x[i]\n"
                        "        row /= row.sum()\n    ctx.set_output('Out', x.copy())\n", line=10),
        # the op's infer_shape says X is 2-D: a row is a view
        Example(_HEAD + "from opkit import OperatorWithKernel, enforce_eq, register_operator\n\n"
                        "class SoftmaxOp(OperatorWithKernel):\n    def infer_shape(self, ctx):\n"
                        "        enforce_eq(len(ctx.get_input_dim('X')), 2, 'X must be 2-D')\n\n"
                        "register_operator('softmax', SoftmaxOp)\n\n"
                        "@register_kernel('softmax')\ndef softmax_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    for i in range(x.shape[0]):\n        r = x[i]\n        r -= r.max()\n"
                        "    ctx.set_output('Out', np.exp(x))\n", line=17),
        # a method of the kernel class, called through self
        Example(_HEAD + "class CenterKernel:\n    def compute(self, ctx):\n"
                        "        x = self._center(ctx.input('X'))\n        ctx.set_output('Out', x.copy())\n\n"
                        "    def _center(self, a):\n        a -= a.mean()\n        return a\n\n"
                        "register_kernel('center')(CenterKernel)\n", line=10),
        # -- forms followed since issue 26 --
        # an attribute set in compute, written in another method
        Example(_HEAD + "class ScaleKernel:\n    def compute(self, ctx):\n        self.x = ctx.input('X')\n"
                        "        self._scale()\n        ctx.set_output('Out', self.x.copy())\n\n"
                        "    def _scale(self):\n        self.x *= 2\n\nregister_kernel('scale')(ScaleKernel)\n",
                line=11),
        # an object of a local class holding the input
        Example(_HEAD + "class _Box:\n    def __init__(self, a):\n        self.a = a\n\n"
                        "@register_kernel('box')\ndef box_kernel(ctx):\n    b = _Box(ctx.input('X'))\n"
                        "    b.a += 1\n    ctx.set_output('Out', np.zeros(1))\n", line=11),
        # a dict comprehension holding the input
        Example(_HEAD + "@register_kernel('d')\ndef d_kernel(ctx):\n"
                        "    bufs = {n: ctx.input(n) for n in ('X',)}\n"
                        "    bufs['X'] -= 1\n    ctx.set_output('Out', np.zeros(1))\n", line=7),
        # a dict's values
        Example(_HEAD + "@register_kernel('dv')\ndef dv_kernel(ctx):\n"
                        "    bufs = dict(x=ctx.input('X'), w=np.ones(3))\n    for v in bufs.values():\n"
                        "        v.fill(0)\n    ctx.set_output('Out', np.zeros(1))\n", line=8),
        # starred unpacking of a tuple
        Example(_HEAD + "@register_kernel('st')\ndef st_kernel(ctx):\n"
                        "    head, *tail = (np.zeros(3), ctx.input('X'))\n"
                        "    for t in tail:\n        t += head\n    ctx.set_output('Out', head)\n",
                line=8),
        # a closure writing the input it sees in the kernel
        Example(_HEAD + "@register_kernel('cl')\ndef cl_kernel(ctx):\n    x = ctx.input('X')\n\n"
                        "    def reset(v):\n        x[...] = v\n\n"
                        "    reset(0)\n    ctx.set_output('Out', np.zeros(1))\n", line=9),
        # a lambda writing through out=
        Example(_HEAD + "@register_kernel('lm')\ndef lm_kernel(ctx):\n"
                        "    f = lambda a: np.clip(a, 0, 1, out=a)\n"
                        "    y = f(ctx.input('X'))\n    ctx.set_output('Out', y.copy())\n", line=6),
        # **kwargs of a helper
        Example(_HEAD + "def _dbl(**arrays):\n    arrays['x'] *= 2\n\n"
                        "@register_kernel('kw')\ndef kw_kernel(ctx):\n    _dbl(x=ctx.input('X'))\n"
                        "    ctx.set_output('Out', np.zeros(1))\n", line=5),
        # *args spread from a tuple
        Example(_HEAD + "def _zero(a, b):\n    b.fill(0)\n\n"
                        "@register_kernel('sa')\ndef sa_kernel(ctx):\n    pair = (np.ones(3), ctx.input('X'))\n"
                        "    _zero(*pair)\n    ctx.set_output('Out', np.zeros(1))\n", line=5),
        # out= given by position (a ufunc's nin), and out= spread from a dict
        Example(_HEAD + "@register_kernel('po')\ndef po_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    np.add(x, 1, x)\n    ctx.set_output('Out', x.copy())\n", line=7),
        Example(_HEAD + "@register_kernel('ko')\ndef ko_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    opts = {'out': x}\n    np.negative(x, **opts)\n"
                        "    ctx.set_output('Out', x.copy())\n", line=8),
        # a random generator's in-place method
        Example(_HEAD + "@register_kernel('rg')\ndef rg_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    rng = np.random.default_rng(0)\n    rng.shuffle(x)\n"
                        "    ctx.set_output('Out', x.copy())\n", line=8),
        # a view made by a function numpy's table knows (asarray_chkfinite, split)
        Example(_HEAD + "@register_kernel('sp')\ndef sp_kernel(ctx):\n"
                        "    first, second = np.split(np.asarray_chkfinite(ctx.input('X')), 2)\n"
                        "    first[...] = 0\n    ctx.set_output('Out', np.zeros(1))\n", line=7),
        # a helper imported from another module of the project: reported on the call
        Example(_HEAD.replace("\n\n", "\nfrom mylib.rows import normalize\n\n", 1)
                + "@register_kernel('nr')\ndef nr_kernel(ctx):\n    x = ctx.input('X')\n"
                  "    normalize(x)\n    ctx.set_output('Out', x.copy())\n",
                line=8, files=(("mylib/__init__.py", ""),
                               ("mylib/rows.py", "def normalize(a):\n    a /= a.sum()\n"))),
        # a kernel registered in a loop over a literal tuple is analysed too
        Example(_HEAD + "def _k(ctx):\n    x = ctx.input('X')\n    x.sort()\n"
                        "    ctx.set_output('Out', x.copy())\n\nfor _dt in ('float32', 'float64'):\n"
                        "    register_kernel('srt', dtypes=_dt)(_k)\n", line=6),
    ]

    def check(self, ctx):
        for kernel, events in ctx.kernel_events:
            for event in events:
                if event.kind != "write":
                    continue
                via = f" (via alias '{event.via}')" if event.via else ""
                message = (f"kernel '{kernel.name}' writes to input '{event.slot}'{via} at line "
                           f"{ctx.line_of(event.node)}")
                yield Report(event.node, message + helper_context(ctx, event))


def helper_context(ctx, event) -> str:
    """` in helper 'h' (as 'a'), called at line N` for an event inside a helper: the finding
    is on the helper's line, the message names the kernel's call."""
    if not event.helper:
        return ""
    inner = f" (as '{event.helper_via}')" if event.helper_via else ""
    line = ctx.line_of(event.call)
    if len(event.chain) > 1:
        path = " -> ".join(f"'{name}'" for name in event.chain[:-1])
        return f" in helper '{event.helper}'{inner}, reached through {path} called at line {line}"
    return f" in helper '{event.helper}'{inner}, called at line {line}"
