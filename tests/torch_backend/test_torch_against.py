"""`--against torch`: opkit's built-in ops beside their torch twins (opkit_torch.twins). The
table translates names and attrs; a planted wrong twin is a disagreement whose message
names both values and the side the oracle (the OpTest's expected output) supports; a
correct twin agrees on the test's case and every derived case."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.backend.case import VarSpec

ROOT = Path(__file__).resolve().parents[2]


def _specs(**arrays):
    return {k: [VarSpec(k, v)] for k, v in arrays.items()}


def test_every_twin_is_an_opkit_op_and_a_torch_op():
    from opkit.registry import has_op
    from opkit_torch import env, twins

    assert len(twins.TWINS) >= 40
    for op in twins.TWINS:
        assert has_op(op), op
        try:
            aten, _ = twins.translate(op, {})
        except twins.Untranslatable:
            continue           # a required attr (transpose's axis, clip's bounds)
        env.resolve(aten)


def test_attrs_and_slots_are_translated():
    from opkit_torch import plugin

    x = np.array([[-2.0, -0.5, 0.5, 3.0]])
    p = plugin.make("leaky_relu", {"X": [VarSpec("x0", x)]}, {"alpha": 0.25,
                                                              "use_mkldnn": False},
                    {"Out": ["y"]})
    assert np.array_equal(p.forward()["y"], np.where(x > 0, x, 0.25 * x))
    g = p.backward({"y": np.ones_like(x)}, ["x0"])["x0"]
    assert np.array_equal(g, np.where(x > 0, 1.0, 0.25))
    p = plugin.make("softmax", _specs(X=x), {"axis": -1})
    assert np.allclose(p.forward()["Out"], np.exp(x) / np.exp(x).sum())
    p = plugin.make("mean", _specs(X=x), {})
    assert p.forward()["Out"].shape == (1,)              # opkit's shape [1], not torch's ()


def test_elementwise_y_broadcasts_at_axis_and_its_gradient_keeps_its_shape():
    from opkit_torch import plugin

    x, y = np.arange(24.0).reshape(2, 3, 4), np.array([1.0, 2.0, 3.0])
    p = plugin.make("elementwise_add", _specs(X=x, Y=y), {"axis": 1})
    assert np.array_equal(p.forward()["Out"], x + y[None, :, None])
    g = p.backward({"Out": np.ones_like(x)}, ["Y"])["Y"]
    assert g.shape == (3,) and np.array_equal(g, [8.0, 8.0, 8.0])


def test_a_case_without_torch_equivalent_is_not_compared():
    from opkit_torch import plugin, twins

    with pytest.raises(twins.Untranslatable, match="beta") as info:
        plugin.make("swish", _specs(X=np.ones((2, 2))), {"beta": 2.0})
    assert info.value.no_equivalent and plugin.refused(info.value)


def _against(op, *extra):
    env = dict(os.environ, OMP_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.run([sys.executable, "-m", "opkit", "test", op, "--against", "torch",
                        "--checks", "against", "--format", "json", "--seed", "2024", *extra],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=600)
    assert p.returncode in (0, 1), p.stderr[-2000:]
    (report,) = json.loads(p.stdout)["ops"]
    return p.returncode, [c for c in report["checks"] if c["check"] == "against"]


def test_agreeing_sides_pass():
    rc, checks = _against("acos")
    assert rc == 0 and checks and {c["status"] for c in checks} == {"pass"}, checks
    assert "agree with torch" in checks[0]["message"]


def test_a_planted_wrong_twin_is_a_disagreement_the_oracle_settles(tmp_path):
    plant = tmp_path / "plant_wrong_twin.py"    # tanh's twin: aten::hardtanh (clips)
    plant.write_text("from opkit_torch import twins\n"
                     "twins.TWINS['tanh'] = twins.Twin('tanh', lambda a: "
                     "('aten::hardtanh', {}))\n")
    rc, checks = _against("tanh", "--ops", str(plant))
    fails = [c for c in checks if c["status"] == "fail"]
    assert rc == 1 and fails, checks
    msg = fails[0]["message"]
    assert "opkit " in msg and "torch " in msg and "supports opkit" in msg, msg
