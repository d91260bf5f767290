"""harness.processes.fresh, the one fresh-interpreter protocol, and its users that run no OpTest
pair: a fuzz reproducer verified before it is printed (harness.optest.reproduce.confirm) and the
`state` check's "does that case fail alone?" (harness.checks.runs.state.fails_alone). The hash
seed pair is tests/harness/test_hashseed_check.py's."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from harness_test_helpers import BROKEN


def test_value_env_and_hash_seed_reach_the_child():
    from harness.processes import fresh

    assert fresh.run("os.path:basename", "/a/b.py") == "b.py"
    assert fresh.run("os:getenv", "PYTHONHASHSEED", hash_seed=7) == "7"
    assert fresh.run("os:getenv", "OPKIT_FRESH_PROBE", env={"OPKIT_FRESH_PROBE": "x"}) == "x"
    # what the function prints goes to standard error: it does not spoil the answer
    assert fresh.run("builtins:print", "a line on stdout") is None


def test_a_raising_function_is_a_clean_error():
    from harness.processes import fresh

    with pytest.raises(fresh.FreshError) as err:
        fresh.run("json:loads", "{not json")
    assert err.value.raised and "json:loads raised JSONDecodeError" in str(err.value)
    with pytest.raises(fresh.FreshError) as err:
        fresh.run("harness.no_such_module:f", None)
    assert err.value.raised and "ModuleNotFoundError" in str(err.value)


def test_a_child_that_dies_or_hangs_is_a_clean_error():
    from harness.processes import fresh

    with pytest.raises(fresh.FreshError) as err:
        fresh.run("os:_exit", 3)
    assert not err.value.raised and "exited with status 3" in str(err.value)
    with pytest.raises(fresh.FreshError) as err:
        fresh.run("time:sleep", 60, timeout=1)
    assert not err.value.raised and "did not finish in 1 s" in str(err.value)


@pytest.fixture
def sign_relu():
    """The sign_relu ops registered from a module that the fresh interpreter can load from
    its file (harness.optest.reproduce finds the kernels' modules in sys.modules)."""
    from opkit.registry import scratch

    name = "fresh_test_sign_relu_op"
    with scratch():
        spec = importlib.util.spec_from_file_location(name, BROKEN / "sign_relu_op.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
            yield
        finally:
            sys.modules.pop(name, None)


REPRODUCER = '''
import numpy as np
from harness import OpTest


class TestSignReluMinimal(OpTest):
    def setUp(self):
        self.op_type = "{op}"
        x = np.array([[-0.5, 0.25], [0.75, -1.0]])
        self.inputs = {{"X": x}}
        self.attrs = {{}}
        self.outputs = {{"Out": np.maximum(x, 0)}}

    def test_check_output(self):
        self.check_output()

    def test_check_grad(self):
        self.check_grad(["X"], "Out")
'''


def test_a_reproducer_is_verified_in_a_fresh_interpreter(sign_relu):
    from harness.optest.reproduce import confirm

    ops = ["broken_sign_relu", "broken_sign_relu_grad"]
    assert confirm(ops, REPRODUCER.format(op="broken_sign_relu"), "TestSignReluMinimal",
                   "grad", 2024) is True
    good = ["good_sign_relu", "good_sign_relu_grad"]
    assert confirm(good, REPRODUCER.format(op="good_sign_relu"), "TestSignReluMinimal",
                   "grad", 2024) is False
    # no answer in time: unknown, not a verdict
    assert confirm(ops, REPRODUCER.format(op="broken_sign_relu"), "TestSignReluMinimal",
                   "grad", 2024, timeout=0.01) is None


WRONG_EXPECTATION = '''
import numpy as np
from harness import OpTest


class TestReluWrongExpectation(OpTest):
    def setUp(self):
        self.op_type = "relu"
        x = np.array([[-0.5, 0.25], [0.75, -1.0]])
        self.inputs = {"X": x}
        self.outputs = {"Out": np.maximum(x, 0) + 1.0}

    def test_check_output(self):
        self.check_output()


class TestReluRight(OpTest):
    def setUp(self):
        self.op_type = "relu"
        x = np.array([[-0.5, 0.25], [0.75, -1.0]])
        self.inputs = {"X": x}
        self.outputs = {"Out": np.maximum(x, 0)}

    def test_check_output(self):
        self.check_output()
'''


def test_state_asks_a_fresh_interpreter_whether_a_case_fails_alone(tmp_path):
    from harness.checks.runs.state import fails_alone
    from harness.backend.context import Combo
    from harness.selecting.discovery import discover

    path = tmp_path / "test_relu_expectations.py"
    path.write_text(WRONG_EXPECTATION)
    classes = {t.name: t.cls for t in discover([str(path)]).tests}
    combo = Combo("CPU", "float64")
    assert fails_alone(classes["TestReluWrongExpectation"], "relu", combo, 2024) is True
    assert fails_alone(classes["TestReluRight"], "relu", combo, 2024) is False


MUTATION_REPRODUCER = '''
import numpy as np
from harness import OpTest


class TestMutateScaleMinimal(OpTest):
    def setUp(self):
        self.op_type = "{op}"
        x = np.array([[-0.5, 0.25], [0.75, -1.0]])
        self.inputs = {{"X": x}}
        self.attrs = {{}}
        self.outputs = {{"Out": x * 2}}

    def test_check_output(self):
        self.check_output()
'''


@pytest.fixture
def mutate_scale():
    from opkit.registry import scratch

    name = "fresh_test_mutate_scale_op"
    with scratch():
        spec = importlib.util.spec_from_file_location(name, BROKEN / "mutate_scale_op.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
            yield
        finally:
            sys.modules.pop(name, None)


def test_a_reproducer_of_another_check_is_verified_by_the_checking_verifier(mutate_scale):
    """harness.optest.reproduce judges output and grad by itself (it imports no check registry, so
    the `explore` check can use it); the fuzzer's failures of other checks (mutation, layout,
    ...) are verified by harness.executing.in_process:verify_reproducer, which runs the check by name."""
    from harness.optest.reproduce import confirm

    verifier = "harness.executing.in_process:verify_reproducer"
    assert confirm(["broken_mutate_scale"], MUTATION_REPRODUCER.format(op="broken_mutate_scale"),
                   "TestMutateScaleMinimal", "mutation", 2024, verifier=verifier) is True
    assert confirm(["good_mutate_scale"], MUTATION_REPRODUCER.format(op="good_mutate_scale"),
                   "TestMutateScaleMinimal", "mutation", 2024, verifier=verifier) is False
    # the default verifier cannot run `mutation`: a clear error, not a made-up verdict
    with pytest.raises(ValueError, match="judges output and grad only"):
        confirm(["broken_mutate_scale"], MUTATION_REPRODUCER.format(op="broken_mutate_scale"),
                "TestMutateScaleMinimal", "mutation", 2024)
