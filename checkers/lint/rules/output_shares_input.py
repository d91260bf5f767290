"""OPK004 output-shares-input."""
from __future__ import annotations

from checkers.lint.astutil import UNRESOLVED
from checkers.lint.rules.base import Report, Rule
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
        "`register_operator(..., inplace={\"X\": \"Out\"})` when sharing is intended. Kernels of "
        "ops whose registration the linter cannot resolve are not reported."
    )
    VALID = [
        _HEAD + "register_operator('identity', object, inplace={'X': 'Out'})\n\n"
                "@register_kernel('identity')\ndef identity_kernel(ctx):\n"
                "    ctx.set_output('Out', ctx.input('X'))\n",
        _HEAD + "@register_kernel('assign')\ndef assign_kernel(ctx):\n"
                "    ctx.set_output('Out', ctx.input('X').copy())\n",
        _HEAD + "@register_kernel('flatten')\ndef flatten_kernel(ctx):\n"
                "    x = ctx.input('X').reshape(-1)\n    x = np.array(x)\n    ctx.set_output('Out', x)\n",
    ]
    INVALID = [
        _HEAD + "@register_kernel('identity')\ndef identity_kernel(ctx):\n"
                "    ctx.set_output('Out', ctx.input('X'))\n",
        _HEAD + "register_operator('reshape', object, inplace={'X': 'XShape'})\n\n"
                "@register_kernel('reshape')\ndef reshape_kernel(ctx):\n"
                "    x = ctx.input('X')\n    y = x.reshape(ctx.attr('shape'))\n    ctx.set_output('Out', y)\n",
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
