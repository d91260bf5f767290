"""The op description the torch backend reads from a schema."""
import pytest

from harness.backend.contract import REQUIRED


@pytest.fixture(scope="module")
def backend():
    from opkit_torch import plugin

    return plugin


def test_tensor_args_are_slots_the_others_attrs_with_defaults(backend):
    d = backend.describe("aten::hardshrink")
    assert [s.name for s in d.inputs] == ["self"]
    assert d.attrs == {"lambd": 0.5}
    assert [s.name for s in d.outputs] == ["out"]        # an unnamed single return
    assert d.has_grad and d.writes == {}


def test_optional_tensors_are_dispensable_several_returns_numbered(backend):
    d = backend.describe("aten::native_layer_norm")
    slots = {s.name: s for s in d.inputs}
    assert slots["weight"].dispensable and slots["bias"].dispensable
    assert not slots["input"].dispensable
    assert d.attrs["normalized_shape"] is REQUIRED and d.attrs["eps"] is REQUIRED
    assert [s.name for s in d.outputs] == ["out0", "out1", "out2"]


def test_tensor_lists_are_duplicable_named_returns_keep_their_names(backend):
    assert backend.describe("aten::cat").inputs[0].duplicable
    assert [s.name for s in backend.describe("aten::topk").outputs] == ["values", "indices"]
    assert backend.describe("aten::split.Tensor").outputs[0].duplicable


def test_alias_annotations_are_the_declared_writes(backend):
    assert backend.describe("aten::add_.Tensor").writes == {"out": "self"}
    assert backend.describe("aten::add.Tensor").writes == {}


def test_an_op_name_without_overload_takes_default_or_names_the_choices(backend):
    from opkit_torch import env

    assert env.resolve("aten::hardshrink").name() == "aten::hardshrink"
    with pytest.raises(ValueError, match="several overloads.*aten::add.Tensor|aten::add\\."):
        env.resolve("aten::add")
    with pytest.raises(ValueError, match="torch has no op"):
        env.resolve("aten::no_such_op")
    assert not backend.has_op("sequence_pool")      # not a torch name, no torch twin
    assert backend.has_op("relu")                   # opkit's op with a twin: aten::relu
    assert not backend.has_op("aten::no_such_op")
    assert backend.has_op("aten::add.Tensor")


@pytest.mark.no_torch_needed
def test_importing_the_plugin_does_not_import_torch():
    import subprocess
    import sys

    code = "import sys, opkit_torch; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_kernel_places_leave_out_a_dtype_the_kernel_lacks(backend):
    assert backend.kernel_places("aten::tanh")["CPU"] == [
        "float16", "bfloat16", "float32", "float64"]
    assert backend.kernel_places("aten::linalg_inv")["CPU"] == ["float32", "float64"]
    assert backend.kernel_places("aten::no_such_op") == {}
