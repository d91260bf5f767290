"""Paddle's bfloat16 carrier: uint16 bits <-> ml_dtypes bfloat16, bit for bit, through
OpTest slots (plain, (array, LoD), duplicable)."""
import numpy as np

from opkit_paddle.optest_surface import as_bfloat16, as_bfloat16_slots, as_uint16
from opkit.framework.dtypes import bfloat16


def test_round_trip_keeps_the_bits():
    bits = np.array([0x3F80, 0xC000, 0x7F80, 0x0001], np.uint16)   # 1, -2, inf, subnormal
    b = as_bfloat16(bits)
    assert b.dtype == bfloat16
    assert b.astype(np.float32)[:3].tolist() == [1.0, -2.0, np.inf]
    assert np.array_equal(as_uint16(b), bits)
    assert as_bfloat16(np.ones(2)).dtype == np.float64        # other dtypes pass through


def test_slots_of_every_shape_are_converted():
    bits = np.array([[0x3F80, 0x4000]], np.uint16)
    slots = as_bfloat16_slots({"X": bits, "L": (bits, [[1]]), "D": [("a", bits), ("b", bits)],
                               "I": np.array([1, 2], np.int64)})
    assert slots["X"].dtype == bfloat16 and slots["L"][0].dtype == bfloat16
    assert slots["L"][1] == [[1]]
    assert [name for name, _ in slots["D"]] == ["a", "b"]
    assert all(a.dtype == bfloat16 for _, a in slots["D"])
    assert slots["I"].dtype == np.int64
