"""`distribution` with a law the harness inferred from the op's attrs (the OpTest declares
none): a misfit is confirmed only when no other convention the attrs allow fits either.

Paddle's dropout has `dropout_implementation` (downgrade_in_infer: kept values x 1;
upscale_in_train: x 1 / (1 - p)); an op with `dropout_prob` and no such attr may follow
either (PyTorch's dropout always upscales). When the samples misfit the inferred law and
fit the other convention, the result is `unconfirmed`, settled by declaring the law on the
OpTest (`distribution = {...}`, docs/harness.md); when they fit neither, the failure stands.
"""
from __future__ import annotations

from dataclasses import replace

from harness.confirm import unconfirm
from harness.distributions import dropout_laws
from harness.report import FAIL
from opkit.registry import op_info

__all__ = ["confirm_inferred", "alternatives"]


def alternatives(case) -> list[tuple[str, dict]]:
    """(name, laws) of the other conventions the op's attrs allow."""


    proto = op_info(case.op_type).proto
    pattrs = {a.name for a in proto.attrs} if proto is not None else set()
    if "dropout_prob" in pattrs and "dropout_implementation" not in pattrs:
        return [("dropout that always upscales kept values by 1 / (1 - p)",
                 dropout_laws("dropout_prob", None, upscale=True))]
    return []


def confirm_inferred(check, derived, context, results):
    """`results` of the distribution check, with a failure of an inferred law made
    `unconfirmed` when another convention fits (see the module docstring)."""
    test = getattr(context, "test", None)
    case = derived.case
    own = getattr(test, "distribution", None) or (case.options or {}).get("distribution")
    failed = [r for r in results if r.status == FAIL]
    if own or not failed:
        return results
    for name, laws in alternatives(case):
        other = replace(case, options={**(case.options or {}), "distribution": laws})
        try:
            again = check._verdict(replace(derived, case=other), context)
        except Exception:  # noqa: BLE001 - no confirmation either way
            continue
        if again and not any(r.status == FAIL for r in again):
            declaration = ("declare the law on the OpTest: distribution = "
                           "harness.distributions.dropout_laws('dropout_prob', None, "
                           "upscale=True) (or any {output: Law}; docs/harness.md)")
            return [unconfirm(failed[0], f"the harness inferred the law from the op's attrs; "
                                         f"the samples fit another convention they allow: "
                                         f"{name}", declaration)] + \
                [r for r in results if r.status != FAIL]
    return results
