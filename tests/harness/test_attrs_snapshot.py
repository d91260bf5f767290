"""`attrs` snapshots attr values it cannot deep-copy (Paddle's Scalar attrs: deepcopy
pickles them, and they refuse) instead of failing the case; copied values still show an
in-place edit."""
from __future__ import annotations

import copy

import numpy as np
import pytest


class Unpicklable:
    """Refuses pickling, as paddle.base.libpaddle.Scalar does."""

    def __init__(self, v):
        self.v = v

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle '{type(self).__name__}' object")

    def __eq__(self, other):
        return isinstance(other, Unpicklable) and other.v == self.v


def test_an_unpicklable_attr_is_kept_and_the_rest_copied():
    from harness.checks.declarations.attrs import _changed, attr_snapshot

    with pytest.raises(TypeError, match="cannot pickle"):
        copy.deepcopy(Unpicklable(1.5))
    attrs = {"values": [Unpicklable(1.5), Unpicklable(2.5)], "shape": [2], "w": np.ones(2)}
    snap = attr_snapshot(attrs)
    assert snap["values"][0] is attrs["values"][0] and snap["values"] is not attrs["values"]
    assert _changed(snap, attrs) is None
    attrs["shape"].append(3)                       # an in-place edit is still seen
    attrs["w"][0] = 7.0
    assert _changed(snap, attrs)[0] == "shape"
    attrs["shape"].pop()
    assert _changed(snap, attrs)[0] == "w"
