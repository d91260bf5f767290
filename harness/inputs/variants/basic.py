"""The case itself, and the case with every attr at its default."""
from __future__ import annotations

from dataclasses import replace

from harness.backend import dispatch as backends
from harness.backend.case import Derived, Unsupported
from harness.backend.context import Combo, prepare


def same(case, context=None):
    return Derived("case", case, case)


def default_attrs(case, context=None):
    """Every attr the test sets, put back to its registered default (attrs without a default
    keep the test's value). Unsupported when no attr changes."""
    proto = backends.proto(case.op_type)
    if proto is None or not case.attrs:
        return Unsupported("default_attrs", "the case sets no attrs: nothing to default")
    defaults = {a.name: a.default for a in getattr(proto, "attrs", []) or []
                if a.has_default and not a.generated and not a.extra}
    changed = [k for k, v in case.attrs.items() if k in defaults and defaults[k] != v]
    attrs = {k: defaults[k] if k in changed else v for k, v in case.attrs.items()}
    if not changed:
        return Unsupported("default_attrs", "every attr the case sets is already its default")
    derived = replace(case, attrs=attrs, outputs={}, reference=None,
                      name=case.name + "[default_attrs]")
    try:   # defaults that do not fit the case's inputs (a reshape's shape, ...) are no variant
        prepare(derived, Combo("CPU", "")).forward()
    except Exception as exc:  # noqa: BLE001
        return Unsupported("default_attrs", f"with its attrs at their defaults the op refuses "
                                            f"the case's inputs ({type(exc).__name__})")
    return Derived("default_attrs", derived, case, f"attrs {', '.join(changed)} at defaults")
