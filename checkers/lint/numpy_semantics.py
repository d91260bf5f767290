"""Lookups in the generated numpy table (checkers/lint/numpy_table.py, built from numpy by
`python -m checkers.lint.numpy_probe`): what a numpy call does to the arrays it is given."""
from __future__ import annotations

import libcst as cst

from checkers.lint import numpy_table as T
from checkers.lint.astutil import is_false, is_true

UFUNCS = T.UFUNCS
# attributes that are not arrays but reach the array's memory (an iterator, the owner)
HANDLE_ATTRS = {"flat", "base"}
VIEW_ATTRS = {name for name, flags in T.ATTRS.items() if "v" in flags} | HANDLE_ATTRS


def _form_key(forms: dict, call: cst.Call, offset: int) -> str | None:
    for arg in call.args:
        if arg.keyword is None:
            continue
        if arg.keyword.value == "copy" and is_false(arg.value) and "copy=False" in forms:
            return "copy=False"
        if arg.keyword.value == "inplace" and is_true(arg.value) and "inplace=True" in forms:
            return "inplace=True"
    count = sum(1 for a in call.args if a.keyword is None and not a.star) + offset
    counts = sorted(int(k) for k in forms if k.isdigit())
    if not counts:
        return None
    below = [c for c in counts if c <= count]
    return str(below[-1] if below else counts[0])


def flags(table: dict, name: str, call: cst.Call, offset: int = 0) -> str | None:
    """Flags (`w` writes its array, `v` view, `s` sequence of views, `n` new) of this call
    form, or None when numpy was not probed for `name`."""
    forms = table.get(name)
    if not forms:
        return None
    key = _form_key(forms, call, offset)
    return forms.get(key) if key is not None else None


def function_flags(name: str, call: cst.Call) -> str | None:
    return flags(T.FUNCS, name, call)


def method_flags(name: str, call: cst.Call) -> str | None:
    return flags(T.METHODS, name, call)


def random_flags(name: str, call: cst.Call) -> str | None:
    return flags(T.RANDOM, name, call, offset=0)


def out_positions(name: str, method: bool = False) -> tuple:
    """Positions (0-based among the positional arguments) at which outputs may be passed."""
    if not method and name in UFUNCS:
        nin, nout = UFUNCS[name]
        return tuple(range(nin, nin + nout))
    pos = T.OUT_POSITION.get(("ndarray." + name) if method else name, -1)
    return (pos,) if pos >= 0 else ()


def known_function(name: str) -> bool:
    return name in T.FUNCS or name in UFUNCS or name in T.OUT_POSITION


def known_method(name: str) -> bool:
    return name in T.METHODS or ("ndarray." + name) in T.OUT_POSITION or name in T.ATTRS


def known_random(name: str) -> bool:
    return name in T.RANDOM


def written_param(name: str) -> str:
    return T.WRITTEN_PARAM.get(name, "")
