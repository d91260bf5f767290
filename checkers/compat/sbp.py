"""Parallel signatures (OneFlow's SBP) in op-description dumps: `sbp-removed` (breaking) and
`sbp-added` (a note).

`opkit dump` writes, per op that declares them, the key ``SbpSignatures``: ``{op type:
[signature text, ...]}`` for the op and for its grad op ``<op>_grad`` (grad ops have no
entry of their own in a dump). A signature is compared by its text (docs/sbp.md spells it),
so a removed text is a removed signature: a parallel plan that chose it no longer exists.
An op whose OLD or NEW entry has neither this key nor ``OpVersion`` (a Paddle dump) gets
no findings; in an opkit dump (``OpVersion`` present) a missing key means "no signatures", so
an op's first declaration gives `sbp-added` notes and dropping them all `sbp-removed`. Pure JSON: imports neither numpy nor the framework.
"""
from __future__ import annotations

from .load import validate_sbp  # noqa: F401 - the loader validates the section

SBP_KEY = "SbpSignatures"
SBP_KINDS = ("sbp-removed", "sbp-added")

__all__ = ["SBP_KEY", "SBP_KINDS", "validate_sbp", "compare_sbp"]


def compare_sbp(out, op: str, old: dict, new: dict) -> None:
    """Add the signature findings of one op (present in both dumps) to the collector."""
    for desc in (old, new):
        if SBP_KEY not in desc and "OpVersion" not in desc:
            return      # a Paddle dump: nothing to compare with
    o, n = old.get(SBP_KEY, {}), new.get(SBP_KEY, {})
    for sub in sorted(o.keys() | n.keys()):
        before, after = set(o.get(sub, ())), set(n.get(sub, ()))
        where = f"op '{sub}'" + (f" (the grad op of '{op}')" if sub != op else "")
        for text in sorted(before - after):
            out.add(True, op, "sbp-removed", sub, text, None,
                    f"parallel signature '{text}' of {where} removed: a parallel plan that "
                    "chose it no longer exists")
        for text in sorted(after - before):
            out.add(False, op, "sbp-added", sub, None, text,
                    f"parallel signature '{text}' of {where} added")
