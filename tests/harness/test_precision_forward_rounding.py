"""precision: a grad op reads the forward's outputs, and a correct float32 forward rounds
them; the bound of a gradient includes what one float32 rounding of those outputs moves."""
from __future__ import annotations

import numpy as np

from harness.backend.case import VarSpec
from harness.backend.seam import make


def test_backward_reads_the_forward_outputs_it_is_given():
    # softmax over one element: Out is 1 and the gradient out * (dout - out * dout) is 0
    x = np.array([[0.3], [-1.2]])
    p = make("softmax", {"X": [VarSpec("x", x)]}, {}, {"Out": ["out"]})
    out = p.forward()["out"]
    cot = np.array([[1.0], [2.0]])
    assert np.all(p.backward({"out": cot}, ["x"])["x"] == 0)
    moved = out * (1 - 2.0 ** -24)
    g = p.backward({"out": cot}, ["x"], forward_outputs={"out": moved})["x"]
    np.testing.assert_allclose(g, moved * (cot - moved * cot), rtol=1e-6)
    assert np.all(g != 0)
