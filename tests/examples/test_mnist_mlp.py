import mnist_mlp


def test_mnist_mlp_reaches_90_percent():
    result = mnist_mlp.train(verbose=False)
    assert result["test_accuracy"] >= 0.90, result
    assert result["losses"][-1] < result["losses"][0] / 5, result["losses"]


def test_synthetic_digits_are_mnist_shaped():
    x, y = mnist_mlp.make_data(50, seed=3)
    assert x.shape == (50, 784) and x.dtype.name == "float32"
    assert y.shape == (50, 1) and y.dtype.name == "int64"
    assert 0.0 <= x.min() and x.max() <= 1.0
