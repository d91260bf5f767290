"""Sharding (`opkit test --shard`, `pytest --opkit-shard`): the N parts are disjoint and
together exactly the unsharded run, balanced by recorded durations; the pytest plugin's
per-check items give the verdicts of `opkit test`; reproduce node ids are valid for classes
made in a factory function."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

from harness_test_helpers import ROOT

BROKEN = ROOT / "tests" / "broken_ops"
# a hang guard only (no verdict rests on speed): many times what the slowest run here takes
# on a loaded 2-core machine
HANG_GUARD = 1800


def run(args, cwd=ROOT, timeout=HANG_GUARD):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, *map(str, args)], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout, env=env)


# -- the splitting itself ---------------------------------------------------------------------
def test_split_round_robin_without_durations():
    from harness.selecting.sharding import split

    units = [f"op{i}" for i in range(7)]
    parts = split(units, 3)
    assert parts == [["op0", "op3", "op6"], ["op1", "op4"], ["op2", "op5"]]


def test_split_balances_by_durations():
    from harness.selecting.sharding import split

    durations = {"big": 10.0, "a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 6.0}
    units = sorted(durations) + ["unknown"]
    parts = split(units, 2, durations)
    assert sorted(sum(parts, [])) == sorted(units)
    assert not set(parts[0]) & set(parts[1])
    load = [sum(durations.get(u, 1.0) for u in p) for p in parts]
    assert max(load) <= 11.0, (parts, load)          # round-robin would give 17 vs 4
    assert split(units, 2, durations) == parts       # deterministic


def test_durations_file_round_trip(tmp_path):
    from harness.selecting.sharding import ShardError, read_durations, write_durations

    f = tmp_path / "d.json"
    write_durations(f, {"relu": 1.23456})
    write_durations(f, {"clip": 2})
    assert read_durations(f) == {"relu": 1.235, "clip": 2.0}
    f.write_text("{nope")
    with pytest.raises(ShardError, match="d.json"):
        read_durations(f)


# -- opkit test --shard ---------------------------------------------------------------------------
def _ops(p):
    assert p.returncode in (0, 1), p.stderr
    return {o["op"]: o for o in json.loads(p.stdout)["ops"]}


def test_cli_shards_are_disjoint_and_make_the_whole_run(tmp_path):
    base = ["-m", "opkit", "test", "--ops", BROKEN, "--tests", BROKEN, "--checks",
            "dtypes,mutation", "--format", "json", "--durations", tmp_path / "d.json"]
    whole = _ops(run(base + ["--record-durations"]))
    durations = json.loads((tmp_path / "d.json").read_text())["durations"]
    # every op that ran (an op of --ops with no OpTest fails without running: no duration)
    assert set(durations) == {op for op, rep in whole.items()
                              if not rep["checks"][0]["message"].startswith("no OpTest found")}
    for n in (2, 3):
        parts = [_ops(run(base + ["--shard", f"{k}/{n}"])) for k in range(1, n + 1)]
        names = [set(p) for p in parts]
        assert all(not a & b for i, a in enumerate(names) for b in names[i + 1:])
        assert set().union(*names) == set(whole)
        for part in parts:
            for op, rep in part.items():
                assert rep == whole[op], op


# -- pytest --opkit-shard and the per-check items -----------------------------------------------
def _collect(*extra):
    p = run(["-m", "pytest", "-p", "no:xdist", "--collect-only", "-q",
             "reference_ops/tests/test_relu_op.py", "reference_ops/tests/test_clip_op.py",
             "reference_ops/tests/test_scale_op.py", "reference_ops/tests/test_while_op.py",
             "--opkit-check-items", *extra])
    assert p.returncode == 0, p.stdout + p.stderr
    return [ln for ln in p.stdout.splitlines() if "::" in ln]


def test_pytest_shards_are_disjoint_and_make_the_whole_run():
    whole = _collect()
    assert any(n.endswith("TestReluOp::opkit[mutation]") for n in whole), whole
    parts = [_collect("--opkit-shard", f"{k}/3") for k in (1, 2, 3)]
    assert sorted(sum(parts, [])) == sorted(whole)
    assert len(set(sum(parts, []))) == len(whole)
    # an OpTest class goes with its op: all its items in one part
    for part in parts:
        classes = {n.rsplit("::", 1)[0] for n in part if "::Test" in n}
        for other in parts:
            if other is not part:
                assert not classes & {n.rsplit("::", 1)[0] for n in other if "::Test" in n}


def test_check_items_can_be_turned_off():
    items = _collect("--opkit-no-check-items")
    assert items and not any("opkit[" in n for n in items)


CONFTEST = '''
import importlib.util
import pathlib

for path in sorted(pathlib.Path(__file__).parent.glob("ops/*_op.py")):
    spec = importlib.util.spec_from_file_location("parity_" + path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
'''


# broken op files (and their OpTests) that cover the ways a check runs: a per-case check
# (mutation), a check in a forked child (state), the low-precision dtypes (precision, in
# state_breakers' F16Tanh), the fresh interpreters (determinism across processes). The
# whole of tests/broken_ops: benchmarks/pytest_opkit_parity.py.
SAMPLE = ("mutate_scale", "state_breakers", "hashseed_breakers")


def parity_project(root, names=None):
    """A project of the broken ops `names` (stems of tests/broken_ops/*_op.py; None: all) and
    the OpTests of each: tests/test_<stem>.py, the stem without "_breakers" too."""
    (root / "ops").mkdir()
    (root / "tests").mkdir()
    for path in BROKEN.glob("*.py"):
        stem = path.stem.removeprefix("test_").removesuffix("_op")
        if names is not None and stem not in names:
            continue
        if path.name.endswith("_op.py"):
            shutil.copy(path, root / "ops")
        elif path.name.startswith("test_"):
            shutil.copy(path, root / "tests")
    (root / "conftest.py").write_text(CONFTEST)
    (root / "pytest.ini").write_text("[pytest]\n")


def parity(root, timeout=HANG_GUARD):
    """{(OpTest class, check): (pytest's status, opkit test's status)} for the parity
    project at `root`, where opkit test has that check for that class."""
    xml = root / "out.xml"
    p = run(["-m", "pytest", "-p", "no:xdist", "-q", "tests", f"--junitxml={xml}"],
            cwd=root, timeout=timeout)
    assert p.returncode == 1, p.stdout[-3000:]
    verdicts = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = case.get("name")
        if not name.startswith("opkit["):
            continue
        status = ("fail" if case.find("failure") is not None or case.find("error") is not None
                  else "skip" if case.find("skipped") is not None else "pass")
        verdicts[(case.get("classname").rsplit(".", 1)[-1], name[6:-1])] = status
    q = run(["-m", "opkit", "test", "--ops", root / "ops", "--tests", root / "tests",
             "--format", "json"], cwd=root, timeout=timeout)
    expected = {}
    for op in json.loads(q.stdout)["ops"]:
        for c in op["checks"]:
            # "TestX/variant" and "fuzz:TestX" are TestX's
            key = (c["case"].split("/")[0].removeprefix("fuzz:"), c["check"])
            if c["case"] and (key[0], key[1]) in verdicts or key in expected:
                rank = {"fail": 2, "pass": 1, "skip": 0}
                old = expected.get(key, "skip")
                expected[key] = c["status"] if rank[c["status"]] > rank[old] else old
    return {k: (verdicts.get(k), v) for k, v in expected.items()}, verdicts


def test_pytest_and_opkit_test_agree_on_broken_ops(tmp_path):
    parity_project(tmp_path, SAMPLE)
    assert len(list((tmp_path / "ops").glob("*_op.py"))) == len(SAMPLE)
    both, verdicts = parity(tmp_path)
    assert both, verdicts
    mismatch = {k: v for k, v in both.items() if v[0] != v[1]}
    assert not mismatch, mismatch
    assert verdicts[("TestBrokenMutateScale", "mutation")] == "fail"
    assert verdicts[("TestGoodMutateScale", "mutation")] == "pass"
    assert verdicts[("TestBrokenScaleCache", "state")] == "fail"
    assert verdicts[("TestBrokenF16Tanh", "precision")] == "fail"
    # across processes (the fresh interpreters of the hash-seed comparison)
    assert verdicts[("TestBrokenSetSum", "determinism")] == "fail"
    assert verdicts[("TestGoodSetSum", "determinism")] == "pass"


# -- reproduce node ids -----------------------------------------------------------------------
FACTORY_TEST = '''
import numpy as np
from harness import OpTest


def make(scale):
    class TestScaleMade(OpTest):
        def setUp(self):
            self.op_type = "scale"
            x = np.ones((2, 3))
            self.inputs = {"X": x}
            self.attrs = {"scale": scale}
            self.outputs = {"Out": x * (scale + 1)}    # wrong on purpose

        def test_check_output(self):
            self.check_output()
    return TestScaleMade


TestScaleTwo = make(2.0)
'''


def test_reproduce_node_id_of_a_factory_class_is_valid(tmp_path):
    (tmp_path / "test_made.py").write_text(FACTORY_TEST)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    p = run(["-m", "pytest", "-p", "no:xdist", "-q", "test_made.py",
             "--opkit-no-check-items"], cwd=tmp_path)
    assert p.returncode == 1
    line = next(ln for ln in p.stdout.splitlines() if "reproduce: python -m pytest" in ln)
    target = line.split("reproduce: python -m pytest ", 1)[1].split("  (or:")[0]
    assert "<locals>" not in target and "TestScaleTwo" in target, target
    again = subprocess.run(f"{sys.executable} -m pytest -p no:xdist -q --opkit-no-check-items "
                           f"{target}", shell=True, cwd=tmp_path, capture_output=True,
                           text=True, timeout=HANG_GUARD)
    assert "1 failed" in again.stdout, again.stdout + again.stderr
