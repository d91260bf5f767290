"""The engine's vectorized paths give the numbers of the plain formulation (issue 27)."""
from __future__ import annotations

import numpy as np

from harness.backend.case import Case
from harness.judging.output_judge import prepare_case
from harness.judging.numeric_gradient import NumericEngine, _axis_index, _signs
from harness.backend.seam import make_cotangents


def test_signs_are_the_draws_of_rng_choice_bit_for_bit():
    for shape in [(7,), (100, 100), (3, 4, 5)]:
        a = _signs(np.random.default_rng(11), shape)
        b = np.random.default_rng(11).choice([-1.0, 1.0], shape)
        assert a.dtype == b.dtype and np.array_equal(a, b)


def test_axis_index_broadcasts_like_np_indices():
    shape = (3, 1, 5, 2)
    for axis in range(len(shape)):
        assert np.array_equal(np.broadcast_to(_axis_index(shape, axis), shape),
                              np.indices(shape)[axis])


def _engine(case, outputs=("Out",)):
    p = prepare_case(case, "CPU", "float64")
    return NumericEngine(p, make_cotangents(p.forward(), list(outputs), seed=3))


def _coloured_and_dense(case, name):
    engine = _engine(case)
    coloured = engine.exact(name)
    dense = _engine(case).exact(name, dense=True)
    np.testing.assert_allclose(coloured, dense, rtol=1e-9, atol=1e-12)
    return engine


def test_outputs_without_an_owner_and_broadcast_owners():
    rng = np.random.default_rng(5)
    x1, x2 = rng.uniform(-1, 1, (3, 4)), rng.uniform(-1, 1, (2, 4))
    case = Case("TestConcat", "concat", {"X": [("x1", x1), ("x2", x2)]}, {"axis": 0}, {})
    engine = _coloured_and_dense(case, "x1")
    s = engine.info["x1"]["structure"]
    assert engine.info["x1"]["method"] == "coloured" and s.colours == 1
    # rows 0-2 of Out are x1's (owner = the row), rows 3-4 are x2's: no owner in x1
    assert list(s.owners[0].reshape(5, 4)[:, 0]) == [0, 1, 2, -1, -1]
    assert list(s.owners[1].reshape(5, 4)[0]) == [0, 1, 2, 3]

    x, y = rng.uniform(-1, 1, (4, 5, 3)), rng.uniform(-1, 1, (5, 1))
    case = Case("TestAdd", "elementwise_add", {"X": x, "Y": y}, {"axis": 1}, {})
    engine = _coloured_and_dense(case, "Y")
    s = engine.info["Y"]["structure"]
    assert s.separating == (0, 1) and s.colours == 1
    assert np.array_equal(s.owners[0].reshape(4, 5, 3), np.broadcast_to(
        np.arange(5)[None, :, None], (4, 5, 3)))


def test_free_axes_offsets_match_the_dense_loop():
    rng = np.random.default_rng(6)
    x, y = rng.uniform(-1, 1, (9, 6)), rng.uniform(-1, 1, (6, 4))
    case = Case("TestMul", "mul", {"X": x, "Y": y}, {}, {})
    engine = _coloured_and_dense(case, "X")
    assert engine.info["X"]["structure"].colours == 6        # one per column of X
    engine = _coloured_and_dense(case, "Y")
    assert engine.info["Y"]["structure"].colours == 6        # one per row of Y


def test_colour_views_are_the_elements_of_each_colour():
    """A colour's strided view (index) holds exactly its elements, in the order of
    positions in a colour; colour_of and spread say the same."""
    from harness.judging.numeric_gradient import Structure, _ColourPlan

    shape = (3, 4, 5)
    for separating in [(0, 2), (1,), (), (0, 1, 2)]:
        s = Structure(shape, separating, {a: np.zeros(1, np.int64) for a in separating})
        plan = _ColourPlan(s, np.ones(1))
        flat = np.arange(60).reshape(shape)
        seen = np.concatenate([flat[plan.index(c)].reshape(-1) for c in range(plan.colours)])
        assert sorted(seen.tolist()) == list(range(60))      # every element once
        for c in range(plan.colours):
            assert np.array_equal(plan.elements(c), flat[plan.index(c)].reshape(-1))
            assert (plan.colour_of[plan.elements(c)] == c).all()
        per_local = np.arange(plan.n_local, dtype=np.float64)
        spread = plan.spread(per_local)
        for c in range(plan.colours):
            assert np.array_equal(spread[plan.elements(c)], per_local)


def test_discovery_of_an_op_with_no_output_elements():
    """An empty output (a slice of nothing): discovery finds no owner, without raising."""
    x = np.random.default_rng(2).uniform(-1, 1, (64, 80))
    case = Case("slice_empty", "slice", {"Input": x},
                {"axes": [0], "starts": [1], "ends": [1]}, {})
    engine = _engine(case)
    assert engine.exact("Input").shape == x.shape
