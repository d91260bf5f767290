"""OPK003 missing-float-double-kernel."""
from __future__ import annotations

from checkers.lint.astutil import UNRESOLVED
from checkers.lint.rules.base import Example, Report, Rule

_HEAD = "from opkit import register_kernel\n\nFLOAT_TYPES = ('float32', 'float64')\n\n"
REQUIRED = ("float32", "float64")
PAIR = ("float16", "bfloat16")     # `low-precision-pairs = true`: one of them asks for the other
_PAIRS = (("low-precision-pairs", True),)


class MissingFloatDoubleKernel(Rule):
    code = "OPK003"
    name = "missing-float-double-kernel"
    summary = 'an op registers kernels on a place without both `float32` and `float64`'
    triggers = ('register_kernel',)
    rationale = (
        "Gradient checks run in float64 and models train in float32: every op (grad ops "
        "included) needs both kernels on each place where it registers any. `place` defaults "
        "to \"CPU\" and `dtypes` to both floats. Registrations in a loop over a literal tuple or "
        "list, and in a helper function of the module called at the top level with literal "
        "arguments, are computed. Registrations whose op type, place or dtypes "
        "the linter cannot resolve otherwise are not guessed at: an "
        "op with such a registration is skipped, and a module registering kernels for an "
        "unresolvable op type is skipped entirely. So is an op whose type the module hands "
        "to a function imported from another module (`build_activation(\"pow\")`): that "
        "function may register the float kernels, out of this file's sight. With "
        "`low-precision-pairs = true` in `[tool.opkit.lint]` (off by default) a place with a "
        "`float16` kernel and no `bfloat16` one, or the reverse, is reported too: a project "
        "that trains in both needs the pair on every op and grad op."
    )
    VALID = [
        _HEAD + "@register_kernel('relu', place=('CPU', 'GPU'), dtypes=FLOAT_TYPES)\n"
                "def relu_kernel(ctx):\n    pass\n\n@register_kernel('relu_grad')\n"
                "def relu_grad_kernel(ctx):\n    pass\n",
        _HEAD + "@register_kernel('abs', dtypes='float32')\ndef abs32(ctx):\n    pass\n\n"
                "@register_kernel('abs', dtypes='float64')\ndef abs64(ctx):\n    pass\n",
        _HEAD + "for dt in FLOAT_TYPES[:1]:\n    register_kernel('neg', dtypes=dt)(print)\n",
        # computed registrations: a loop over a literal tuple, a registration helper
        _HEAD + "def k(ctx):\n    pass\n\nfor dt in ('float32', 'float64'):\n"
                "    register_kernel('neg', dtypes=dt)(k)\n",
        _HEAD + "def k(ctx):\n    pass\n\ndef _register(op, fn, dtypes=FLOAT_TYPES):\n"
                "    for dt in dtypes:\n        register_kernel(op, dtypes=dt)(fn)\n\n"
                "_register('neg', k)\n",
        # the op type handed to a helper of another module, which may register the floats
        "from opkit import register_kernel\nfrom mylib.activations import build\n\n"
        "build('pow')\n\n@register_kernel('pow', dtypes=('int32', 'int64'))\n"
        "def pow_int(ctx):\n    pass\n",
    ]
    VALID += [
        # the pair, asked for: both low-precision dtypes
        Example(_HEAD + "@register_kernel('relu', dtypes=FLOAT_TYPES + ('float16', 'bfloat16'))"
                "\ndef relu_kernel(ctx):\n    pass\n", config=_PAIRS),
        # not asked for: a float16 kernel alone is fine
        _HEAD + "@register_kernel('relu', dtypes=FLOAT_TYPES + ('float16',))\n"
                "def relu_kernel(ctx):\n    pass\n",
    ]
    INVALID = [
        Example(_HEAD + "@register_kernel('relu', dtypes=FLOAT_TYPES + ('float16',))\n"
                "def relu_kernel(ctx):\n    pass\n", line=5, config=_PAIRS),
        Example(_HEAD + "@register_kernel('relu_grad', place='GPU', "
                "dtypes=('float32', 'float64', 'bfloat16'))\ndef relu_grad(ctx):\n    pass\n",
                line=5, config=_PAIRS),
        Example(_HEAD + "@register_kernel('relu', dtypes='float32')\ndef relu_kernel(ctx):\n    pass\n", line=5),
        Example(_HEAD + "@register_kernel('relu_grad', place='GPU', dtypes=('float64', 'float16'))\n"
                "def relu_grad_kernel(ctx):\n    pass\n", line=5),
        # a loop over a literal tuple is unrolled
        Example(_HEAD + "def k(ctx):\n    pass\n\nfor dt in ('float32',):\n"
                        "    register_kernel('neg', dtypes=dt)(k)\n", line=9),
        # a registration helper of the module called with literal arguments
        Example(_HEAD + "def k(ctx):\n    pass\n\ndef _register(op, fn):\n"
                        "    register_kernel(op, dtypes='float64')(fn)\n\n_register('neg', k)\n", line=9),
    ]

    def check(self, ctx):
        index = ctx.index
        if index.unresolved_kernel_ops:
            return
        by_op: dict[str, list] = {}
        for reg in index.kernel_regs:
            by_op.setdefault(reg.op, []).append(reg)
        handed = _ops_handed_to_imported_helpers(ctx, set(by_op))
        pairs = getattr(ctx.config, "low_precision_pairs", False)
        for op, regs in by_op.items():
            if op in handed or any(r.places is UNRESOLVED or r.dtypes is UNRESOLVED
                                   for r in regs):
                continue
            places: dict[str, set] = {}
            first: dict[str, object] = {}
            for reg in regs:
                for place in reg.places:
                    places.setdefault(place, set()).update(reg.dtypes)
                    first.setdefault(place, reg.call)
            for place, dtypes in places.items():
                missing = [d for d in REQUIRED if d not in dtypes]
                if missing:
                    yield Report(first[place],
                                 f"op '{op}' registers {place} kernels for "
                                 f"{', '.join(sorted(dtypes)) or 'no dtype'} but not for "
                                 f"{' and '.join(missing)}")
                elif pairs and len([d for d in PAIR if d in dtypes]) == 1:
                    have, lack = (PAIR if PAIR[0] in dtypes else PAIR[::-1])
                    yield Report(first[place],
                                 f"op '{op}' registers a {place} {have} kernel without its "
                                 f"{lack} twin (low-precision-pairs = true in "
                                 f"[tool.opkit.lint])")


def _ops_handed_to_imported_helpers(ctx, ops: set) -> set:
    """The op types (of `ops`) the module passes as a literal argument to a function it
    imports from a module outside opkit: such a helper may register kernels itself."""
    import libcst as cst

    from checkers.lint.astutil import string_value

    index = ctx.index
    handed = set()
    for call, _dynamic in ctx.collector.calls:
        func = call.func
        if not isinstance(func, cst.Name):
            continue
        origin = index.from_imports.get(func.value)
        if origin is None or origin.split(".")[0] == "opkit":
            continue
        for arg in call.args:
            value = string_value(arg.value)
            if isinstance(value, str) and value in ops:
                handed.add(value)
    return handed
