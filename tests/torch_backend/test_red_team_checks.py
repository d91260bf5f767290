"""The red team's ops (red_team/red_team_ops.py) against the torch backend's own checks:
each broken op fails the check made for it, its twin passes."""
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.backend.case import Case
from harness.backend.context import CheckContext

sys.path.insert(0, str(Path(__file__).resolve().parent / "red_team"))
CTX = CheckContext(places=("CPU",), dtypes=("float64",))
X = np.random.default_rng(0).uniform(-2, 2, (3, 4))


@pytest.fixture(scope="module", autouse=True)
def red_team():
    import red_team_ops  # noqa: F401 - registers the rt:: ops


@pytest.mark.usefixtures("torch_backend")
@pytest.mark.parametrize("check, op, found", [
    ("describe", "square_bad_fake", "dtype torch.float32"),
    ("mutation", "scale_inplace_undeclared", "changed input 'x'"),
    ("aliasing", "flatten_view", "shares storage with input 'x'"),
])
def test_the_broken_op_fails_its_twin_passes(check, op, found):
    from opkit_torch.checks import override

    def judge(name):
        case = Case(name=name, op_type=f"rt::{name}", inputs={"x": X}, attrs={}, outputs={})
        return override(check)(case, CTX)

    broken = judge(op)
    assert [r.status for r in broken] == ["fail"] and found in broken[0].message
    assert [r.status for r in judge(op + "_ok")] == ["pass"]
