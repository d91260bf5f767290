"""The `lod` check: generated edge cases catch kernels that mishandle empty sequences, and
it checks gradient LoD and compile-time lod_level for every LoD case."""
import importlib.util
import os

import numpy as np
import pytest

import reference_ops  # noqa: F401
from harness.backend.case import Case
from harness.backend.context import CheckContext
from opkit_fluid.checks.lod import check
from opkit_fluid.checks.lod_cases import EDGES, edge_inputs, edges_for

HERE = os.path.dirname(__file__)
BROKEN = os.path.join(HERE, "..", "broken_ops")


def _load(name):
    path = os.path.join(BROKEN, name)
    spec = importlib.util.spec_from_file_location(name[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


OPTESTS = _load("broken_sequence_pool_optests.py")


@pytest.fixture(autouse=True)
def _registry():
    """The broken kernels (and the ops the tests below define) exist only during a test."""
    from opkit.registry import scratch

    with scratch():
        _load("broken_sequence_pool_op.py")
        yield
CPU64 = CheckContext(places=("CPU",), dtypes=("float64",))


def _case(cls):
    t = cls()
    t.setUp()
    return t, t.to_case()


def _by_edge(results):
    return {r.case.split("/", 1)[1]: r for r in results if "/" in r.case}


@pytest.mark.parametrize("cls", [OPTESTS.TestBrokenSequencePoolReduceat,
                                 OPTESTS.TestBrokenSequencePoolLast])
def test_broken_kernel_passes_its_own_case_but_fails_lod(cls):
    t, case = _case(cls)
    t.check_output()                     # its own case has no empty sequence: passes
    t.check_grad(["X"], "Out")
    results = check(case, CPU64)
    edges = _by_edge(results)
    assert edges["given"].status == "pass"
    failed = {name for name, r in edges.items() if r.status == "fail"}
    assert {"empty_middle", "empty_last", "all_empty"} <= failed, edges
    assert edges["single_sequence"].status == "pass"
    assert edges["all_length_one"].status == "pass"
    msg = edges["empty_middle"].message
    assert "an empty sequence in the middle" in msg and "Out[1, 0]" in msg, msg
    assert all(r.case.startswith(cls.__name__ + "/") for r in results)


def test_reduceat_failure_names_the_kernel_line():
    _, case = _case(OPTESTS.TestBrokenSequencePoolReduceat)
    edges = _by_edge(check(case, CPU64))
    msg = edges["empty_last"].message
    assert "the op raised" in msg and "broken_sequence_pool_op.py" in msg, msg


@pytest.mark.parametrize("cls", [OPTESTS.TestGoodSequencePoolSum,
                                 OPTESTS.TestGoodSequencePoolLast])
def test_real_kernel_passes_every_edge(cls):
    _, case = _case(cls)
    results = check(case, CheckContext(places=("CPU",)))
    assert results and all(r.status == "pass" for r in results), \
        [(r.case, r.dtype, r.message) for r in results if r.status != "pass"]
    names = {r.case.split("/", 1)[1] for r in results}
    assert names == {"given", "two_level"} | {e.name for e in EDGES}


def test_no_lod_input_is_a_skip():
    case = Case("TestDense", "scale", {"X": np.ones((2, 3))}, {"scale": 2.0})
    assert [(r.status, r.message) for r in check(case, CPU64)] == [("skip", "no LoD input")]


def test_without_reference_only_gradient_lod_is_checked():
    x = np.random.default_rng(0).uniform(-1, 1, (5, 3))
    case = Case("TestNoRef", "sequence_reverse", {"X": (x, [[2, 0, 3]])})
    results = check(case, CPU64)
    assert [(r.case, r.status) for r in results] == [("TestNoRef/given", "pass"),
                                                     ("TestNoRef/two_level", "pass"),
                                                     ("TestNoRef/edges", "skip")]


def test_gradient_lod_must_equal_input_lod():
    from opkit import (GradOpMaker, OpMaker, OperatorWithKernel, grad_var_name,
                       register_kernel, register_operator)

    class M(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("Out = X")

    class Fwd(OperatorWithKernel):
        def infer_shape(self, ctx):
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))
            ctx.share_lod("X", "Out")

    class G(GradOpMaker):
        def apply(self):
            op = self.new_grad_op("lodtest_nogradlod_grad")
            op.set_input(grad_var_name("Out"), self.output_grad("Out"))
            op.set_output(grad_var_name("X"), self.input_grad("X"))
            return [op]

    class Bwd(OperatorWithKernel):
        def infer_shape(self, ctx):       # BUG: no share_lod to X@GRAD
            ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim(grad_var_name("Out")))

    register_operator("lodtest_nogradlod", Fwd, M, grad_maker=G)
    register_operator("lodtest_nogradlod_grad", Bwd)

    @register_kernel("lodtest_nogradlod", dtypes=("float32", "float64"))
    def fwd(ctx):
        ctx.set_output("Out", ctx.input("X").copy())

    @register_kernel("lodtest_nogradlod_grad", dtypes=("float32", "float64"))
    def bwd(ctx):
        ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")).copy(), lod=[])

    x = np.ones((5, 2))
    case = Case("TestNoGradLoD", "lodtest_nogradlod", {"X": (x, [[2, 0, 3]])})
    (given,) = [r for r in check(case, CPU64) if r.case.endswith("/given")]
    assert given.status == "fail"
    assert "X@GRAD has LoD (lengths) [], expected [[2, 0, 3]]" in given.message


def test_compile_time_lod_level_must_match_run_time():
    from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator

    class M(OpMaker):
        def make(self):
            self.add_input("X", "x")
            self.add_output("Out", "out")
            self.add_comment("Out = first row of every sequence")

    class Fwd(OperatorWithKernel):
        def infer_shape(self, ctx):       # BUG: keeps X's lod_level; the kernel drops it
            ctx.set_output_dim("Out", ctx.get_input_dim("X"))
            ctx.share_lod("X", "Out")

    register_operator("lodtest_levels", Fwd, M)

    @register_kernel("lodtest_levels", dtypes=("float32", "float64"))
    def fwd(ctx):
        ctx.set_output("Out", ctx.input("X").copy(), lod=[])

    case = Case("TestLevels", "lodtest_levels", {"X": (np.ones((3, 2)), [[1, 2]])})
    (given,) = [r for r in check(case, CPU64) if r.case.endswith("/given")]
    assert given.status == "fail"
    assert ("output variable 'Out' has lod_level 1 at compile time but a LoD of level 0 at "
            "run time") in given.message


def test_level2_edge_only_for_two_level_inputs():
    x = np.zeros((3, 2))
    one = Case("A", "sequence_pool", {"X": (x, [[1, 2]])})
    two = Case("B", "sequence_pool", {"X": (x, [[2], [1, 2]])})
    assert "level2_empty_subsequences" not in {e.name for e in edges_for(one)}
    edge = edges_for(two)[-1]
    assert edge.name == "level2_empty_subsequences"
    data, lengths = edge_inputs(two, edge, np.random.default_rng(0))["X"]
    assert lengths == [[3, 0, 2], [0, 2, 0, 1, 0]] and data.shape == (3, 2)


def test_all_empty_edge_has_zero_rows():
    case = Case("A", "sequence_pool", {"X": (np.zeros((3, 4)), [[1, 2]])})
    edge = [e for e in EDGES if e.name == "all_empty"][0]
    data, lengths = edge_inputs(case, edge, np.random.default_rng(0))["X"]
    assert data.shape == (0, 4) and lengths == [[0, 0, 0]]
