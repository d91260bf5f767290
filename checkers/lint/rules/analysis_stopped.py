"""OPK009 analysis-stopped (off by default: a note, not a violation)."""
from __future__ import annotations

from checkers.lint.rules.base import Example, Report, Rule
from checkers.lint.rules.input_mutation import helper_context

_HEAD = "import numpy as np\nfrom opkit import register_kernel\nimport scipy.special\n\n"
_ON = (("notes", True),)


class AnalysisStopped(Rule):
    code = "OPK009"
    name = "analysis-stopped"
    summary = ('a note (off by default): where OPK001/OPK004 stop following a kernel\'s input, '
               'and why')
    triggers = ('register_kernel',)
    rationale = (
        "OPK001 and OPK004 follow each input of a kernel through the code (see docs/lint.md); "
        "where they cannot, they do not guess. This note names the line and the reason, so that "
        "a quiet run is not mistaken for a checked one: an input passed to a call the linter "
        "cannot read (another library, a function stored in a variable), an index whose kind "
        "(view or copy) cannot be told from the code, `*args`/`**kwargs` of unknown content, "
        "helpers nested deeper than 8 calls, an element of an input of unknown rank updated with "
        "`+=`, a kernel registration whose op type, place or dtypes cannot be computed. Off by default; turn it on with `notes = true` in "
        "`[tool.opkit.lint]`, or `--select OPK009` (the code or name given explicitly)."
    )
    VALID = [
        Example(_HEAD + "@register_kernel('relu')\ndef relu_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    y = np.maximum(x, 0)\n    ctx.set_output('Out', y)\n", config=_ON),
        # a project helper is read, numpy is known: nothing stops
        Example(_HEAD + "def _pos(a):\n    return np.maximum(a, 0)\n\n@register_kernel('relu')\n"
                        "def relu_kernel(ctx):\n    ctx.set_output('Out', _pos(ctx.input('X')))\n",
                config=_ON),
        # off by default
        _HEAD + "@register_kernel('sig')\ndef sig_kernel(ctx):\n"
                "    ctx.set_output('Out', scipy.special.expit(ctx.input('X')))\n",
    ]
    INVALID = [
        Example(_HEAD + "@register_kernel('sig')\ndef sig_kernel(ctx):\n"
                        "    ctx.set_output('Out', scipy.special.expit(ctx.input('X')))\n",
                line=7, config=_ON),
        Example(_HEAD + "@register_kernel('pick')\ndef pick_kernel(ctx):\n    x = ctx.input('X')\n"
                        "    y = x[ctx.attr('index')]\n    ctx.set_output('Out', y * 2)\n",
                line=8, config=_ON),
        Example(_HEAD + "def _f(a, b):\n    return a + b\n\n@register_kernel('add')\n"
                        "def add_kernel(ctx):\n    ctx.set_output('Out', _f(*ctx.attr('pair'), "
                        "ctx.input('X')))\n", line=10, config=_ON),
    ]

    def check(self, ctx):
        from checkers.lint.astutil import UNRESOLVED

        for reg in ctx.index.kernel_regs:
            what = [name for name, value in (("op type", reg.op), ("place", reg.places),
                                             ("dtypes", reg.dtypes)) if value is UNRESOLVED]
            if what:
                yield Report(reg.call, f"registration: the {', '.join(what)} cannot be computed "
                                       "(not a literal, a module constant, a loop over a literal "
                                       "tuple/list or a registration helper called with literals): "
                                       "OPK003 does not check it")
            elif reg.target is None:
                yield Report(reg.call, "registration: the registered kernel cannot be named, so "
                                       "OPK001/OPK004 do not analyse it")
        for kernel in ctx.index.kernels:
            if any(ctx.index.inplace_for(op) is UNRESOLVED for op in kernel.ops):
                yield Report(kernel.func.name, f"kernel '{kernel.name}': the op's `inplace` "
                                               "declaration cannot be read: OPK004 does not check it")
        for kernel, events in ctx.kernel_events:
            for event in events:
                if event.kind == "note":
                    yield Report(event.node, f"kernel '{kernel.name}': the analysis stops here: "
                                             f"{event.output}{helper_context(ctx, event)}")
