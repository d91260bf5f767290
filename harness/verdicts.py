"""Op-level verdicts the per-case checks cannot give (no false greens).

- an op with no OpTest fails `output`, unless `[tool.opkit] exempt` names it with a reason
  (then it is *exempt*, counted apart from skips);
- an op with a grad op whose OpTests never check gradients fails `grad` with
  "no gradient test", unless an OpTest opts out: `opkit_skip = {"grad": "reason"}`;
- an OpTest whose `op_type` is not registered, or a test file that cannot be imported,
  fails (with the file and line);
- when none of the places asked for can run (`--place GPU` without a GPU) nothing runs:
  every op is *skip* with the reason, never *pass*.
Used by `opkit test` and the pytest plugin alike.
"""
from __future__ import annotations

import inspect
import re
from pathlib import Path

from harness.report import FAIL, SKIP, CheckResult

__all__ = ["no_optest_result", "lacks_gradient_test", "no_gradient_test_result",
           "class_location", "guess_op_from_file", "NO_GRADIENT_TEST"]

NO_GRADIENT_TEST = "no gradient test"


def class_location(cls) -> str:
    """'path:line' of a class definition (best effort)."""
    try:
        path = inspect.getsourcefile(cls) or "?"
        line = inspect.getsourcelines(cls)[1]
        return f"{path}:{line}"
    except (OSError, TypeError):
        return getattr(cls, "__module__", "?")


def guess_op_from_file(path) -> str | None:
    """`test_relu_op.py` -> 'relu' (the file naming convention of OpTest files)."""
    m = re.fullmatch(r"test_(.+?)(_op)?\.py", Path(str(path)).name)
    return m.group(1) if m else None


def no_optest_result(op: str, exempt: dict) -> tuple[CheckResult, str]:
    """(the result, the op's exempt reason or "") for an op without any OpTest."""
    reason = exempt.get(op)
    if reason:
        return CheckResult("output", SKIP, "", "", "", f"exempt: {reason}"), reason
    return CheckResult("output", FAIL, "", "", "",
                       f"no OpTest found for op '{op}': write one, or exempt it with a "
                       f"reason in pyproject.toml ([tool.opkit.exempt] {op} = \"...\")"), ""


def _opt_out(cls) -> str | None:
    skips = getattr(cls, "opkit_skip", None) or {}
    reason = skips.get("grad") if isinstance(skips, dict) else None
    return str(reason) if reason else None


def _mentions_check_grad(cls) -> bool:
    for klass in cls.__mro__:
        if klass.__module__.startswith(("harness.", "unittest", "builtins")):
            continue
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            return True      # cannot tell: do not accuse
        if "check_grad" in source:
            return True
    return False


def lacks_gradient_test(op: str, classes: list) -> bool:
    """The op has a grad op, and none of its OpTest classes checks gradients or opts out."""
    try:
        from opkit.registry import op_info

        if op_info(op).grad_maker is None:
            return False
    except Exception:  # noqa: BLE001 - unregistered: reported elsewhere
        return False
    return not any(_mentions_check_grad(c) or _opt_out(c) for c in classes)


def no_gradient_test_result(op: str, classes: list) -> CheckResult:
    names = ", ".join(c.__name__ for c in classes)
    return CheckResult("grad", FAIL, "", "", "",
                       f"{NO_GRADIENT_TEST}: op '{op}' has a grad op but none of its OpTests "
                       f"({names}) calls check_grad; add one, or opt out with "
                       f"opkit_skip = {{\"grad\": \"<reason>\"}} on the OpTest")
