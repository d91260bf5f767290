"""OpTests of the adversarial kernels (adversarial_op.py) and their twins: the case an
author would write, with a `reference()`. Not collected by `opkit test --tests
tests/broken_ops` (no test_ prefix); run with::

    opkit test --ops tests/broken_ops/adversarial_op.py \\
        --tests tests/broken_ops/adversarial_optests.py

or `python tests/broken_ops/adversarial_catch_rate.py` (which checks catch each).
"""
import numpy as np

from harness import OpTest


class _Case:
    """Shared setUp and test methods (a mixin: not an OpTest itself)."""

    op = ""
    shape = (4, 5)
    lo, hi = -1.0, 1.0

    def setUp(self):
        self.op_type = self.op
        x = np.random.default_rng(11).uniform(self.lo, self.hi, self.shape)
        self.inputs = {"X": x}
        self.attrs = {}
        self.outputs = self.reference(self.inputs, self.attrs)

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")


def _x(inputs):
    x = inputs["X"]
    return x[0] if isinstance(x, tuple) else x


class _Double(_Case):
    def reference(self, inputs, attrs):
        return {"Out": _x(inputs) * 2.0}


class _RowSum(_Case):
    shape = (4, 8)

    def reference(self, inputs, attrs):
        return {"Out": _x(inputs).sum(axis=-1)}


class _RowSum7(_RowSum):
    shape = (4, 7)


class _RowMean(_RowSum):
    def reference(self, inputs, attrs):
        return {"Out": _x(inputs).mean(axis=-1)}


class _Abs2(_Case):
    def reference(self, inputs, attrs):
        return {"Out": np.abs(_x(inputs)) * 2.0}


class _Square(_Case):
    def reference(self, inputs, attrs):
        return {"Out": _x(inputs) ** 2}


class _Tanh(_Case):
    def reference(self, inputs, attrs):
        return {"Out": np.tanh(_x(inputs))}


_KINDS = {
    "ptr_cache": _Double, "id_cache": _Double, "digest_cache": _Double, "seen_skip": _Double,
    "autotune3": _RowSum7, "autotune10": _RowSum7, "autotune50": _RowSum7,
    "trust_after": _Abs2, "ones_cot": _Square, "onehot_cot": _Square,
    "cpu_mean": _RowMean, "threads_mean": _RowMean, "alarm_path": _RowSum,
    "time_budget": _RowSum, "mem_budget": _RowSum, "stack_oracle": _Tanh,
    "gc_oracle": _Tanh, "patch_compare": _Double, "import_test": _Double,
    "shared_buffer": _Double, "bias_f64": _Tanh, "bias_f32": _Tanh, "poly_tanh": _Tanh,
    "size_sum": _RowSum, "pid_path": _Double, "main_thread": _Double,
    "detect_harness": _Double,
}


def _camel(name):
    return "".join(p.capitalize() for p in name.split("_"))


for _name, _base in _KINDS.items():
    for _prefix, _cls in (("broken", "TestAdv"), ("good", "TestGoodAdv")):
        _t = f"{_cls}{_camel(_name)}"
        globals()[_t] = type(_t, (_base, OpTest), {"op": f"{_prefix}_adv_{_name}",
                                             "__module__": __name__})
del _t, _name, _base, _prefix, _cls
