"""OPK001 input-mutation."""
from __future__ import annotations

from checkers.lint.rules.base import Report, Rule

_HEAD = "import numpy as np\nfrom opkit import register_kernel\n\n"


class InputMutation(Rule):
    code = "OPK001"
    rationale = (
        "Kernels receive their inputs as read-only views of the variables in the scope; "
        "writing to one corrupts the value other ops (and the gradient pass) read. The check "
        "follows each input through aliases and views (assignment, unpacking, slicing, "
        "`reshape`, `ravel`, `view`, `.T`, `transpose`, `asarray`, `squeeze`, `expand_dims`, "
        "`swapaxes`, `broadcast_to`, elements of `ctx.inputs(...)`, loop targets) until the name "
        "is rebound; copies (`copy()`, `np.array(x)`, `astype`, arithmetic, ufunc results) are "
        "new arrays. Writes are subscript and augmented assignment, `out=`, in-place methods "
        "(`sort`, `fill`, `put`, `resize`, `setflags(write=True)`, ...), `np.copyto`, `np.put`, "
        "`np.place`, `np.putmask`, `np.<ufunc>.at`, also through `xp = ctx.xp`, and writes "
        "made by a helper function of the same module that an input is passed to."
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
    ]
    INVALID = [
        _HEAD + "@register_kernel('relu')\ndef relu_kernel(ctx):\n    x = ctx.input('X')\n"
                "    x[x < 0] = 0\n    ctx.set_output('Out', x.copy())\n",
        _HEAD + "@register_kernel('flat')\ndef flat_kernel(ctx):\n    xp = ctx.xp\n"
                "    v = ctx.input('X').reshape(-1)[1:]\n    xp.copyto(v, 0)\n"
                "    ctx.set_output('Out', xp.zeros(3))\n",
        _HEAD + "@register_kernel('sum')\ndef sum_kernel(ctx):\n    for x in ctx.inputs('X'):\n"
                "        x *= 2\n    ctx.set_output('Out', np.zeros(3))\n",
        _HEAD + "def _clear(a):\n    a.fill(0)\n\n@register_kernel('clear')\ndef clear_kernel(ctx):\n"
                "    _clear(ctx.input('X'))\n    ctx.set_output('Out', np.zeros(3))\n",
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
