"""The plain-torch reproducers under examples/torch_bugs/ run and say STILL SHOWS or FIXED;
opkit's check that found each bug still finds it. The torchvision ones (torchvision_*.py)
skip where torchvision does not import beside this torch (asked in a child process: the
test process never imports torchvision)."""
import functools
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.backend.case import Case
from harness.backend.context import CheckContext

EXAMPLES = sorted((Path(__file__).resolve().parents[2] / "examples" / "torch_bugs")
                  .glob("*.py"))


def test_there_are_reproducers():
    assert EXAMPLES


@functools.lru_cache(maxsize=1)
def torchvision_missing():
    """Why torchvision cannot run here (None: it imports beside this torch)."""
    out = subprocess.run([sys.executable, "-c", "import torchvision"], capture_output=True,
                         text=True, timeout=300)
    if out.returncode == 0:
        return None
    last = (out.stderr.strip().splitlines() or ["no message"])[-1]
    return f"torchvision does not import beside this torch: {last}"


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_a_reproducer_runs_and_says_whether_the_bug_shows(path):
    if path.stem.startswith("torchvision_") and torchvision_missing():
        pytest.skip(torchvision_missing())
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] in ("STILL SHOWS", "FIXED")


@pytest.mark.usefixtures("torch_backend")
def test_mutation_finds_the_undeclared_running_stat_write():
    from opkit_torch.checks import override

    r = np.random.default_rng(0)
    case = Case(name="bn", op_type="aten::native_batch_norm",
                inputs={"input": r.uniform(-1, 1, (6, 3)), "running_mean": np.zeros(3),
                        "running_var": np.ones(3)},
                attrs={"training": True, "momentum": 0.1, "eps": 1e-5})
    results = override("mutation")(case, CheckContext(places=("CPU",), dtypes=("float64",)))
    assert [r.status for r in results] == ["fail"]
    assert "changed input 'running_mean'" in results[0].message
    case.attrs = dict(case.attrs, training=False)       # evaluation mode writes nothing
    results = override("mutation")(case, CheckContext(places=("CPU",), dtypes=("float64",)))
    assert [r.status for r in results] == ["pass"]
