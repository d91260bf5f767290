"""One home for the exact gradient verdict (issue 44, point 5): harness.judging.grad_judge.
exact_verdict decides for the first-order `grad` check and for the second-order checks
(harness.judging.second_order.judge_exact) alike, and no other module compares an analytic gradient
with harness.judging.numeric_gradient.compare or takes kinks out with harness.judging.one_sided.unexplained."""
from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from harness.backend.case import VarSpec
from harness.judging.grad_judge import exact_verdict
from harness.judging.numeric_gradient import NumericEngine
from harness.backend.seam import make
from harness.judging.second_order import judge_exact

HARNESS = Path(__file__).resolve().parents[2] / "harness"
FLUID = HARNESS.parent / "opkit_fluid"      # the Fluid family's checks (LoD's gradients)
JUDGE_PARTS = {("harness.judging.numeric_gradient", "compare"), ("harness.judging.one_sided", "unexplained")}
OWNERS = {"grad_judge.py", "numeric_gradient.py", "one_sided.py"}


def _users(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name in OWNERS and path.parent == root / "judging":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and any(
                    (node.module, a.name) in JUDGE_PARTS for a in node.names):
                found.append(str(path.relative_to(root.parent)))
    return found


def test_only_grad_judge_compares_gradients():
    assert _users(HARNESS) == [] and _users(FLUID) == []


def test_the_scan_finds_a_planted_second_judge(tmp_path):
    (tmp_path / "second.py").write_text("from harness.judging.numeric_gradient import compare\n")
    assert _users(tmp_path) == [f"{tmp_path.name}/second.py"]


def _relu_engine(x):
    p = make("relu", {"X": [VarSpec("x", x)]}, {}, {"Out": ["out"]})
    out = p.forward()["out"]
    return NumericEngine(p, {"out": np.ones_like(out)}, seed=3)


@pytest.mark.parametrize("at_zero, passes", [(0.0, True), (1.0, True), (0.25, False)])
def test_first_and_second_order_give_one_verdict(at_zero, passes):
    """relu at 0 (a kink): either one-sided slope passes, another value fails -- the same
    answer from the first-order wording and from the second-order one."""
    x = np.array([-1.5, 0.0, 2.0])
    ana = np.array([0.0, at_zero, 1.0])
    c, ok = exact_verdict(_relu_engine(x), "x", ana)
    msg, _ = judge_exact(_relu_engine(x), "x", ana)
    assert ok is passes and (msg is None) is passes, (c, msg)
    if not passes:
        assert "x[1]" in msg and "analytic 0.25" in msg
