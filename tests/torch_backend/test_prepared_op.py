"""The torch backend's prepared op: forward on numpy inputs, strides, writes, backward."""
import numpy as np
import pytest

from harness.backend.case import VarSpec


def make(op_type, inputs, attrs=None, outputs=None):
    from opkit_torch import plugin

    return plugin.make(op_type, {k: [VarSpec(k, v)] for k, v in inputs.items()}, attrs,
                       outputs)


def test_forward_values_and_attr_defaults():
    x = np.random.default_rng(0).uniform(-1, 1, (4, 5))
    assert np.array_equal(make("aten::hardshrink", {"self": x}).forward()["out"],
                          np.where(np.abs(x) > 0.5, x, 0))
    assert np.array_equal(make("aten::hardshrink", {"self": x}, {"lambd": 0.2}).forward()["out"],
                          np.where(np.abs(x) > 0.2, x, 0))


def test_a_transposed_input_reaches_the_kernel_with_its_strides():
    from torch_test_ops import SEEN

    x = np.arange(12.0).reshape(3, 4)
    make("opkit_test::record_layout", {"x": x.T}).forward()
    assert SEEN == {"contiguous": False, "stride": (1, 4)}
    make("opkit_test::record_layout", {"x": np.ascontiguousarray(x.T)}).forward()
    assert SEEN["contiguous"]


def test_writes_show_in_the_read_back_and_never_reach_the_fed_array():
    x = np.ones((2, 3))
    p = make("aten::add_.Tensor", {"self": x, "other": np.full((2, 3), 2.0)})
    p.read_back = True
    out = p.forward()["out"]
    assert np.array_equal(out, np.full((2, 3), 3.0))
    assert np.array_equal(p.read_inputs()["self"], np.full((2, 3), 3.0))
    assert np.array_equal(x, np.ones((2, 3)))          # the harness's array is untouched
    assert np.array_equal(p.forward()["out"], out)      # each run starts from the fed data


def test_backward_with_cotangents_wrt_and_no_grad_set():
    rng = np.random.default_rng(1)
    x, y = rng.uniform(1, 2, (3, 4)), rng.uniform(1, 2, (3, 4))
    cot = rng.uniform(-1, 1, (3, 4))
    p = make("aten::mul.Tensor", {"self": x, "other": y})
    p.forward()
    g = p.backward({"out": cot}, ["self", "other"])
    assert np.allclose(g["self"], cot * y) and np.allclose(g["other"], cot * x)
    g = p.backward({"out": cot}, ["self"], no_grad_set=("other",))
    assert np.allclose(g["self"], cot * y) and set(g) == {"self"}


def test_an_output_without_a_cotangent_counts_as_zeros():
    x = np.random.default_rng(2).uniform(-1, 1, (3, 5))
    p = make("aten::native_layer_norm", {"input": x},
             {"normalized_shape": [5], "eps": 1e-5})
    p.forward()
    g = p.backward({"out0": np.ones((3, 5))}, ["input"])
    assert np.allclose(g["input"], 0, atol=1e-12)        # sum of a normalised row: constant


def test_second_order_through_create_graph():
    import torch

    x = np.array([0.3, -1.2, 2.0])
    p = make("aten::tanh", {"self": x})
    p.forward()
    p.backward({"out": np.ones(3)}, ["self"], create_graph=True)
    (gg,) = torch.autograd.grad(p.grads["self"].sum(), p.graph_inputs()["self"])
    t = np.tanh(x)
    assert np.allclose(gg.numpy(), -2 * t * (1 - t * t))


def test_dtypes_bfloat16_and_float16_round_trip():
    import ml_dtypes

    x = np.array([[1.5, -2.25]], dtype=ml_dtypes.bfloat16)
    out = make("aten::neg", {"self": x}).forward()["out"]
    assert out.dtype == x.dtype and np.array_equal(out.astype(float), [[-1.5, 2.25]])
    h = np.array([0.5, 3.0], dtype=np.float16)
    assert make("aten::neg", {"self": h}).forward()["out"].dtype == np.float16


def test_duplicable_inputs_and_outputs():
    from opkit_torch import plugin

    a, b = np.ones((2, 2)), np.zeros((1, 2))
    p = plugin.make("aten::cat", {"tensors": [VarSpec("a", a), VarSpec("b", b)]}, {"dim": 0})
    assert p.forward()["out"].shape == (3, 2)
    p = plugin.make("aten::split.Tensor", {"self": [VarSpec("self", np.arange(6.0))]},
                    {"split_size": 2}, {"out": ["p0", "p1", "p2"]})
    got = p.forward()
    assert [got[n].tolist() for n in ("p0", "p1", "p2")] == [[0, 1], [2, 3], [4, 5]]


def test_unknown_attrs_and_slots_are_named():
    with pytest.raises(ValueError, match="no attr 'lamda'"):
        make("aten::hardshrink", {"self": np.ones(2)}, {"lamda": 0.1})
    with pytest.raises(ValueError, match="no tensor argument 'X'"):
        make("aten::hardshrink", {"X": np.ones(2)})
