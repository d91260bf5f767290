"""`arrays_like` draws an input's own values, refined by float32 midpoints; an input whose
only values are adjacent float32 numbers has no midpoint to add, and drawing must still end
(it looped forever before)."""
from __future__ import annotations

import signal

import numpy as np
import pytest
from hypothesis import given, settings

from harness.inputs.strategies import arrays_like


def _within(seconds):
    def stop(*_):
        raise TimeoutError(f"arrays_like did not return within {seconds} s")
    return signal.signal(signal.SIGALRM, stop), signal.alarm(seconds)


@pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="needs SIGALRM")
def test_adjacent_float32_values_end_and_stay_in_the_inputs_values():
    one = np.float32(1.0)
    a = np.array([[one, np.nextafter(one, np.float32(2))]] * 2, dtype=np.float32)
    seen = []
    old, _ = _within(20)
    try:
        @settings(max_examples=20, database=None, deadline=None)
        @given(arrays_like(a))
        def draw(x):
            seen.append(x)

        draw()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert seen
    allowed = set(a.ravel().tolist())
    assert all(set(x.ravel().tolist()) <= allowed for x in seen)


def test_inputs_with_room_between_values_still_get_distinct_values():
    a = np.array([[0.0, 1.0], [2.0, 3.0]], dtype=np.float64)
    seen = []

    @settings(max_examples=10, database=None, deadline=None)
    @given(arrays_like(a, shape=(3, 3)))
    def draw(x):
        seen.append(x)

    draw()
    assert all(np.unique(x).size == x.size for x in seen)
