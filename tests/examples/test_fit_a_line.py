import numpy as np

import fit_a_line


def test_fit_a_line_converges():
    result = fit_a_line.train(verbose=False)
    losses = result["losses"]
    assert losses[-1] * 10 <= losses[0], losses
    np.testing.assert_allclose(result["w"], result["w_true"], atol=0.05)
    np.testing.assert_allclose(result["b"].reshape(-1)[0], result["b_true"], atol=0.05)
