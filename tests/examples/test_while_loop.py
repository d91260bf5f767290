import numpy as np

import while_loop


def test_while_loop_example():
    result = while_loop.run(steps=10, ratio=0.5, verbose=False)
    assert result["iterations"] == 10
    np.testing.assert_allclose(result["acc"], result["expected"], rtol=1e-12)
    partial = result["partial"]
    assert len(partial) == 10
    x = result["x"]
    for t, p in enumerate(partial):
        np.testing.assert_allclose(p, x * (1 - 0.5 ** (t + 1)) / 0.5, rtol=1e-12)


def test_while_loop_zero_steps():
    result = while_loop.run(steps=0, verbose=False)
    assert result["iterations"] == 0
    assert len(result["partial"]) == 0
    np.testing.assert_array_equal(result["acc"], np.zeros_like(result["x"]))
