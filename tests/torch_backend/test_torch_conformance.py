"""The torch backend keeps the backend contract: harness.testing's conformance suite, on
torch samples (the default samples are opkit op names torch does not have)."""
import numpy as np

from harness.testing import Sample, conformance_failures

RNG = np.random.default_rng(7)

SAMPLES = (
    Sample("aten::relu", {"self": RNG.uniform(-1, 1, (3, 4)) + 0.05}, outputs=("out",)),
    Sample("aten::add.Tensor", {"self": RNG.uniform(-1, 1, (2, 3)),
                                "other": RNG.uniform(-1, 1, (2, 3))}, outputs=("out",)),
    Sample("aten::sum.dim_IntList", {"self": RNG.uniform(-1, 1, (2, 3, 4))},
           {"dim": [1], "keepdim": False}, outputs=("out",)),
    Sample("aten::add_.Tensor", {"self": RNG.uniform(-1, 1, (2, 3)),
                                 "other": RNG.uniform(-1, 1, (2, 3))}, outputs=("out",)),
    Sample("aten::sum.dim_IntList", {"self": RNG.uniform(-1, 1, (2, 3))},
           {"dim": [7], "keepdim": False}, outputs=("out",), refuses=True),
    Sample("opkit_test::checked", {"x": RNG.uniform(-1, 1, (3,))}, outputs=("out",),
           refuses=True),
)


def test_the_torch_backend_passes_the_conformance_suite():
    from harness.backend.dispatch import plugin

    assert conformance_failures(plugin("torch"), SAMPLES) == []


def test_the_suite_catches_a_torch_backend_that_writes_undeclared():
    """A planted offender: a backend whose read-back shows an input written that the schema
    does not declare."""
    from opkit_torch import TorchBackend
    from opkit_torch.op import TorchPreparedOp

    class Writes(TorchPreparedOp):
        def read_inputs(self):
            return {n: np.zeros_like(v) for n, v in super().read_inputs().items()}

    class Planted(TorchBackend):
        def make(self, *args, **kwargs):
            return Writes(*args, **kwargs)

    bad = conformance_failures(Planted(), SAMPLES[:1])
    assert any("read_inputs" in b for b in bad)
