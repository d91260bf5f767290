"""`kinks` on Paddle's atan2: the variant zeroes both inputs, and (0, 0) is a singular point
(atan2 is not continuous there: no one-sided derivative exists; Paddle's gradient is NaN,
as the formula x / (x^2 + y^2) gives), not a kink. The check skips such points; a real kink
bug is still caught (tests/broken_ops' broken_kink_relu, tests/broken_ops/
test_variant_breakers.py)."""
from __future__ import annotations

import json
import textwrap

import pytest

from paddle_backend_helpers import paddle_missing, run_opkit

ATAN2 = textwrap.dedent('''
    import numpy as np
    from op_test import OpTest


    class TestAtan2(OpTest):
        def setUp(self):
            self.op_type = "atan2"
            x1 = np.random.uniform(-1, -0.1, [4, 5]).astype("float64")
            x2 = np.random.uniform(0.1, 1, [4, 5]).astype("float64")
            self.inputs = {"X1": x1, "X2": x2}
            self.outputs = {"Out": np.arctan2(x1, x2)}

        def test_check_output(self):
            self.check_output()

        def test_check_grad(self):
            self.check_grad(["X1", "X2"], "Out")
''')


def test_atan2_at_the_origin_is_singular_not_a_kink(tmp_path):
    why = paddle_missing()
    if why:
        pytest.skip(why)
    path = tmp_path / "test_atan2_op.py"
    path.write_text(ATAN2)
    proc = run_opkit("test", "--paddle", "--backend", "paddle", "--tests", str(path),
                     "--checks", "kinks", "--format", "json")
    checks = json.loads(proc.stdout)["ops"][0]["checks"]
    assert proc.returncode == 0, checks
    assert {c["status"] for c in checks} <= {"pass", "skip"}
    assert "analytic nan" not in json.dumps(checks)


def test_a_jump_is_discontinuous_a_kink_is_not():
    from harness.judging.one_sided import discontinuous

    class Engine:          # the loss along one element: f(x0 + t)
        delta = 0.005

        def __init__(self, f):
            self.f = f
            self.base = {"X": __import__("numpy").zeros(3)}

        def loss(self, name, x):
            return float(self.f(x[1]))

        def restore(self, name):
            pass

    import numpy as np

    assert discontinuous(Engine(lambda t: np.arctan2(t, 0.0)), "X", 1)    # atan2 at (0, 0)
    assert discontinuous(Engine(np.sign), "X", 1)
    assert not discontinuous(Engine(lambda t: max(t, 0.0)), "X", 1)       # relu: a kink
    assert not discontinuous(Engine(abs), "X", 1)
    assert not discontinuous(Engine(lambda t: t * t), "X", 1)             # smooth
    assert not discontinuous(Engine(lambda t: np.sqrt(t)), "X", 1)        # a domain edge
