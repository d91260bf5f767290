"""OPK004 output-shares-input."""
from __future__ import annotations

from checkers.lint.astutil import UNRESOLVED
from checkers.lint.rules.base import Example, Report, Rule
from checkers.lint.rules.input_mutation import helper_context

_HEAD = "import numpy as np\nfrom opkit import register_kernel, register_operator\n\n"


class OutputSharesInput(Rule):
    code = "OPK004"
    name = "output-shares-input"
    summary = ('a kernel hands an input (or a view of it) '
               'out as an output, with no `inplace` declared for that pair')
    triggers = ('register_kernel',)
    rationale = (
        "An output must own its buffer: an output that is the input (or a view of it) makes a "
        "later in-place update of one change the other. Declare the pair in "
        "`register_operator(..., inplace={\"X\": \"Out\"})` when sharing is intended. Values "
        "are followed as for OPK001 (views, numpy's copy-making indexing, helper functions and "
        "methods, their return values, outputs set inside a helper). Kernels of ops whose "
        "registration the linter cannot resolve are not reported."
    )
    VALID = [
        _HEAD + "register_operator('identity', object, inplace={'X': 'Out'})\n\n"
                "@register_kernel('identity')\ndef identity_kernel(ctx):\n"
                "    ctx.set_output('Out', ctx.input('X'))\n",
        _HEAD + "@register_kernel('assign')\ndef assign_kernel(ctx):\n"
                "    ctx.set_output('Out', ctx.input('X').copy())\n",
        _HEAD + "@register_kernel('flatten')\ndef flatten_kernel(ctx):\n"
                "    x = ctx.input('X').reshape(-1)\n    x = np.array(x)\n    ctx.set_output('Out', x)\n",
        # a gather and a boolean mask are copies
        _HEAD + "@register_kernel('gather')\ndef gather_kernel(ctx):\n    w = ctx.input('W')\n"
                "    ctx.set_output('Out', w[ctx.input('Ids')])\n"
                "    x = ctx.input('X')\n    ctx.set_output('Pos', x[x > 0])\n",
        # a helper that returns a copy
        _HEAD + "def _to_2d(a):\n    return a.reshape(-1, a.shape[-1]).copy()\n\n"
                "@register_kernel('flatten2d')\ndef flatten2d_kernel(ctx):\n"
                "    ctx.set_output('Out', _to_2d(ctx.input('X')))\n",
        # a kernel registered in a loop, for an op declaring the pair inplace
        _HEAD + "register_operator('ident', object, inplace={'X': 'Out'})\n\ndef _ident(ctx):\n"
                "    ctx.set_output('Out', ctx.input('X'))\n\nfor dt in ('float32', 'float64'):\n"
                "    register_kernel('ident', dtypes=dt)(_ident)\n",
        # an attribute holding a copy
        _HEAD + "class K:\n    def compute(self, ctx):\n        self.y = ctx.input('X').copy()\n"
                "        ctx.set_output('Out', self.y)\n\nregister_kernel('k')(K)\n",
    ]
    INVALID = [
        Example(_HEAD + "@register_kernel('identity')\ndef identity_kernel(ctx):\n"
                        "    ctx.set_output('Out', ctx.input('X'))\n", line=6),
        Example(_HEAD + "register_operator('reshape', object, inplace={'X': 'XShape'})\n\n"
                        "@register_kernel('reshape')\ndef reshape_kernel(ctx):\n"
                        "    x = ctx.input('X')\n    y = x.reshape(ctx.attr('shape'))\n"
                        "    ctx.set_output('Out', y)\n", line=10),
        # a helper's return value is a view of the input
        Example(_HEAD + "def _to_2d(a):\n    return a.reshape(-1, a.shape[-1])\n\n"
                        "@register_kernel('flatten2d')\ndef flatten2d_kernel(ctx):\n"
                        "    out = _to_2d(ctx.input('X'))\n    ctx.set_output('Out', out)\n", line=10),
        # the output is set inside a helper: reported there, naming the call
        Example(_HEAD + "def _store(ctx, out):\n    ctx.set_output('Out', out)\n\n"
                        "@register_kernel('reshape2')\ndef reshape2_kernel(ctx):\n"
                        "    x = ctx.input('X')\n    _store(ctx, x.reshape(ctx.attr('shape')))\n", line=5),
        # a helper returning a tuple of views
        Example(_HEAD + "def _halves(a):\n    h = a.shape[0] // 2\n    return a[:h], a[h:]\n\n"
                        "@register_kernel('split2')\ndef split2_kernel(ctx):\n"
                        "    first, second = _halves(ctx.input('X'))\n"
                        "    ctx.set_output('Out', first.copy())\n    ctx.set_output('Rest', second)\n",
                line=12),
        # a kernel registered in a loop over a literal tuple
        Example(_HEAD + "def _ident(ctx):\n    ctx.set_output('Out', ctx.input('X'))\n\n"
                        "for dt in ('float32', 'float64'):\n    register_kernel('ident', dtypes=dt)(_ident)\n",
                line=5),
        # an attribute holding the input, in a dict
        Example(_HEAD + "class K:\n    def compute(self, ctx):\n        self.d = {'y': ctx.input('X')}\n"
                        "        ctx.set_output('Out', self.d['y'])\n\nregister_kernel('k')(K)\n", line=7),
    ]

    def check(self, ctx):
        index = ctx.index
        for kernel, events in ctx.kernel_events:
            declared = [index.inplace_for(op) for op in kernel.ops]
            if not declared or any(d is UNRESOLVED for d in declared):
                continue
            for event in events:
                if event.kind != "output":
                    continue
                if all(event.output in d.get(event.slot, ()) for d in declared):
                    continue
                via = f" (via '{event.via}')" if event.via else ""
                yield Report(event.node,
                             f"kernel '{kernel.name}' sets output '{event.output}' to input "
                             f"'{event.slot}'{via}{helper_context(ctx, event)} without "
                             f"inplace={{'{event.slot}': '{event.output}'}} declared; copy it or "
                             "declare the pair inplace")
