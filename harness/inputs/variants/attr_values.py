"""`attr_values`: the case with one attribute at another value the op accepts (docs/harness.md,
"`attrs`": which values, which attrs are left alone, how a variant is judged)."""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from harness.backend import dispatch as backends
from harness.backend.case import Derived, normalize_slots
from harness.backend.context import Combo, grad_outputs, op_refused, prepare
from harness.inputs.explore import _rank_of, explorable_attrs
from harness.backend.seam import make_cotangents

__all__ = ["derive", "candidates", "gradients_defined", "MAX_VARIANTS"]

MAX_VARIANTS = 2


def _alias(v: int, n: int) -> int:
    return v - n if v >= 0 else v + n


def candidates(proto, attrs: dict, rank: int | None) -> list[tuple[str, object, str]]:
    """[(attr name, new value, why)], most telling first."""
    out = []
    for a, v in explorable_attrs(proto, attrs, skip=("seed", "dtype")):
        if a.type == "bool" and isinstance(v, (bool, np.bool_)):
            out.append((a.name, not bool(v), "flipped"))
        elif a.type == "int" and rank and isinstance(v, (int, np.integer)) and \
                not isinstance(v, bool) and -rank <= int(v) < rank and rank >= 2:
            v = int(v)
            out.append((a.name, _alias(v, rank), "the same axis spelled the other way"))
            other = -2 if v in (-1, rank - 1) else -1
            out.append((a.name, other, "another negative axis"))
        elif a.type == "ints" and rank and isinstance(v, (list, tuple)) and v and \
                all(isinstance(x, (int, np.integer)) and -rank <= int(x) < rank for x in v):
            vals = [int(x) for x in v]
            if len(vals) >= 3 and sorted(vals) == list(range(len(vals))) and len(vals) == rank:
                out.append((a.name, vals[1:] + vals[:1], "another permutation"))
            if rank >= 2 and len(set(_alias(x, rank) % rank for x in vals)) == len(vals):
                out.append((a.name, [_alias(x, rank) for x in vals],
                            "the same axes spelled the other way"))
    # one per attr first, then the second ones
    first, rest, seen = [], [], set()
    for c in out:
        (rest if c[0] in seen else first).append(c)
        seen.add(c[0])
    return first + rest


def gradients_defined(p, case) -> bool:
    """False when the op, with this attr value, refuses gradients on purpose (a typed opkit
    error: dropout's grad with is_test) or gives them in another form (a sparse gradient
    with is_sparse): then only the outputs are judged."""
    if p is None:
        return True
    try:
        outs = {n: p.array(n) for n in p.output_names()}
        cot = make_cotangents(outs, grad_outputs(case, outs))
        cot = {n: c.astype(outs[n].dtype) for n, c in cot.items()}
        got = p.backward(cot, list(case.grad_inputs), tuple(case.no_grad_set or ()))
    except Exception as exc:  # noqa: BLE001 - a raw error: judged (check_grad reports it)
        return not op_refused(exc)
    return all(isinstance(g, np.ndarray) for g in got.values())


def _old(proto, case, name) -> str:
    if name in (case.attrs or {}):
        return repr(case.attrs[name])
    a = next((a for a in proto.attrs if a.name == name), None)
    return f"{a.default!r} (its default)" if a is not None else "its default"


def derive(case, context=None):
    if case.reference is None and not case.grad_inputs:
        return []   # nothing judges other values (the attrs check's own run still reports)
    proto = backends.proto(case.op_type)
    if proto is None or any(a.name == "seed" for a in proto.attrs):
        return []   # a random op: other attrs (is_test) draw other random numbers
    out = []
    rank = _rank_of(normalize_slots(case.inputs))
    for name, value, why in candidates(proto, dict(case.attrs), rank):
        if len(out) >= MAX_VARIANTS:
            break
        derived = replace(case, attrs={**case.attrs, name: value}, outputs={},
                          name=f"{case.name}[{name}={value!r}]")
        try:
            p = prepare(derived, Combo("CPU", ""))
            p.forward()
        except Exception as exc:  # noqa: BLE001
            if op_refused(exc):
                continue   # the op refuses the value on purpose: no variant
            p = None       # a raw error, or outputs infer_shape did not promise: judged
        grads = bool(case.grad_inputs) and gradients_defined(p, derived)
        out.append(Derived("attr_values", derived, case,
                           f"attr {name} = {value!r} instead of {_old(proto, case, name)}: "
                           f"{why}",
                           {"grads": grads, "kind": "bool" if isinstance(value, bool) else "axis",
                            "same_meaning": why.startswith("the same")}))
    return out   # [] when no other value is accepted: no variant, no skip row
