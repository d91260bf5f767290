"""`opkit bench`: times, scaled cases, --against a git ref or an op path, usage errors, and
the CI recipe of docs/performance.md run as written in a scratch project."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import opkit.cli.bench_timing as hb
from opkit.cli.bench_timing import (CLOCKS, BenchCase, bootstrap_interval, interval, look_confidence,
                           looks, scale_case, sequential, t_interval, t_quantile, time_batch)

ROOT = Path(__file__).resolve().parents[1]
HANG_GUARD = 1800     # seconds: a hang guard only, no verdict rests on speed

SLEEPY_OP = '''import time
from opkit import (OpMaker, OperatorWithKernel, register_operator, register_kernel,
                   DefaultGradOpMaker, grad_var_name)

DELAY = {delay}
WAIT = "{wait}"     # "spin": DELAY seconds of CPU time; "sleep": DELAY seconds asleep
SPIN = {spin}       # with "sleep": first SPIN seconds of CPU time


def spin(seconds):
    end = time.process_time() + seconds
    while time.process_time() < end:
        pass


def wait():
    if WAIT == "sleep":
        spin(SPIN)
        time.sleep(DELAY)
        return
    spin(DELAY)


class M(OpMaker):
    def make(self):
        self.add_input("X", "x")
        self.add_output("Out", "x, after DELAY seconds")
        self.add_comment("sleepy: Out = X")


class Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


class GradOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim(grad_var_name("X"), ctx.get_input_dim("X"))


register_operator("sleepy", Op, M, grad_maker=DefaultGradOpMaker)
register_operator("sleepy_grad", GradOp)


@register_kernel("sleepy")
def sleepy(ctx):
    wait()
    ctx.set_output("Out", ctx.input("X").copy())


@register_kernel("sleepy_grad")
def sleepy_grad(ctx):
    wait()
    ctx.set_output(grad_var_name("X"), ctx.input(grad_var_name("Out")).copy())
'''

SLEEPY_TEST = '''import numpy as np
from harness import OpTest


class TestSleepy(OpTest):
    def setUp(self):
        self.op_type = "sleepy"
        x = np.random.rand(4, 3)
        self.inputs = {"X": x}
        self.outputs = {"Out": x}

    def test_check_output(self):
        self.check_output()
'''

PYPROJECT = '''[project]
name = "sleepy-ops"
version = "0"

[tool.opkit]
ops = ["sleepy_op.py"]
tests = ["test_sleepy.py"]
'''


def _git(root, *args):
    subprocess.run(["git", "-c", "user.email=t@t", "-c", "user.name=t", *args], cwd=root,
                   check=True, capture_output=True)


def _op(delay: float, wait: str = "spin", spin: float = 0.0) -> str:
    return SLEEPY_OP.format(delay=delay, wait=wait, spin=spin)


def _project(root: Path, delay: float, wait: str = "spin", spin: float = 0.0) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "pyproject.toml").write_text(PYPROJECT)
    (root / "sleepy_op.py").write_text(_op(delay, wait, spin))
    (root / "test_sleepy.py").write_text(SLEEPY_TEST)
    return root


def _opkit(cwd, *args):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "opkit", "bench", *args], cwd=cwd,
                          capture_output=True, text=True, env=env, timeout=HANG_GUARD)


# -- the parts -----------------------------------------------------------------------------
def test_bootstrap_interval_brackets_the_geometric_mean():
    logs = list(np.log([1.18, 1.22, 1.20, 1.21, 1.19, 1.2]))
    ratio, low, high = bootstrap_interval(logs)
    assert low <= ratio <= high
    assert 1.18 <= low and high <= 1.22
    assert abs(ratio - 1.2) < 0.01
    # noisy rounds give a wide interval, a single round none
    wide = bootstrap_interval(list(np.log([0.8, 1.3, 1.0, 1.25, 0.85])))
    assert wide[2] - wide[1] > 0.1
    assert bootstrap_interval([0.0])[1:] == (1.0, 1.0)


def test_scale_case_multiplies_the_batch_dimension_of_matching_inputs():
    import reference_ops  # noqa: F401 - registers on demand

    x, y = np.random.rand(6, 4), np.random.rand(6, 4)
    case = BenchCase("elementwise_add", "t", {"X": x, "Y": y}, {"axis": -1}, ["X", "Y"])
    scaled = scale_case(case, elements=240)
    assert scaled.scale == 10
    assert scaled.inputs["X"].shape == (60, 4) and scaled.inputs["Y"].shape == (60, 4)
    np.testing.assert_array_equal(scaled.inputs["X"][6:12], x)


def test_scale_case_keeps_lod_consistent():
    import reference_ops  # noqa: F401

    x = np.random.rand(5, 3)
    case = BenchCase("sequence_pool", "t", {"X": (x, [[2, 3]])}, {"pooltype": "SUM"}, ["X"])
    scaled = scale_case(case, elements=60)
    data, lengths = scaled.inputs["X"]
    assert data.shape == (20, 3) and lengths == [[2, 3] * 4]


def test_the_verdict_interval_is_the_wider_of_t_and_bootstrap():
    logs = list(np.log([1.02, 0.97, 1.10, 0.95, 1.01, 1.04, 0.99, 1.06, 0.93, 1.03]))
    est, low, high = interval(logs)
    _, t_low, t_high = t_interval(logs)
    _, b_low, b_high = bootstrap_interval(logs)
    assert low == min(t_low, b_low) and high == max(t_high, b_high)
    assert t_high - t_low > b_high - b_low      # with 10 rounds the bootstrap is narrower
    assert low < 1.0 < high and abs(est - 1.0) < 0.02


# -- sequential rounds ---------------------------------------------------------------------
def test_t_quantile_matches_the_tables():
    # two-sided 95% (df 1, 2, 9, 29) and 99% (df 9), 99.5% one-sided: textbook values
    for p, df, q in [(0.975, 1, 12.706), (0.975, 2, 4.303), (0.975, 9, 2.262),
                     (0.975, 29, 2.045), (0.995, 9, 3.250), (0.995, 4, 4.604)]:
        assert abs(t_quantile(p, df) - q) < 2e-3, (p, df)
    assert abs(t_quantile(0.975, 10_000) - 1.960) < 2e-3
    with pytest.raises(ValueError):
        t_quantile(0.4, 3)


def test_looks_are_every_rounds_rounds_up_to_the_maximum():
    assert looks(10, 30) == [10, 20, 30]
    assert looks(10, 25) == [10, 20, 25]
    assert looks(10, 10) == [10]
    assert look_confidence(0.95, 3) == pytest.approx(1 - 0.05 / 3)
    assert look_confidence(0.95, 1) == 0.95
    with pytest.raises(ValueError):
        looks(10, 5)


class _Rounds:
    """A fake timing source: round r gives each op the log of `ratios[op][r]`."""

    def __init__(self, **ratios):
        self.ratios = ratios
        self.calls = 0

    def __call__(self, r):
        self.calls += 1
        return {op: float(np.log(v[r])) for op, v in self.ratios.items()}


def test_a_clear_verdict_is_made_at_the_first_look():
    source = _Rounds(slow=[1.20, 1.22, 1.19, 1.21, 1.18, 1.2] * 5,
                     same=[1.0, 1.01, 0.99, 1.0, 1.02, 0.98] * 5)
    slow, same = sequential(source, rounds=6, max_rounds=18)
    assert source.calls == 6                      # no round beyond the first look
    assert slow.slower and slow.rounds == 6 and slow.low > 1.05
    assert not same.slower and same.rounds == 6 and same.high < 1.05
    assert slow.confidence == pytest.approx(1 - 0.05 / 3)


def test_a_straddling_interval_gets_more_rounds_and_then_a_verdict():
    # a ~17% slowdown whose first five rounds two bursts of load hit: one look (the
    # earlier rule) cannot tell; five more quiet rounds can
    first = [1.45, 1.16, 0.95, 1.18, 1.15]
    source = _Rounds(op=first + [1.17, 1.16, 1.18, 1.17, 1.16] + [1.17] * 5)
    (verdict,) = sequential(source, rounds=5, max_rounds=15)
    assert verdict.slower and verdict.rounds == 10 and source.calls == 10
    assert len(verdict.per_round) == 10
    (one_look,) = sequential(_Rounds(op=first), rounds=5, max_rounds=5)
    assert not one_look.slower and one_look.low < 1.05 < one_look.high
    assert one_look.confidence == 0.95
    assert (one_look.ratio, one_look.low, one_look.high) == interval(np.log(first).tolist())


def test_an_undecided_op_stops_at_max_rounds_with_the_last_looks_verdict():
    noisy = [1.3, 0.85, 1.25, 0.9, 1.2, 0.8] * 3
    source = _Rounds(op=noisy)
    (verdict,) = sequential(source, rounds=6, max_rounds=15)
    assert source.calls == 15 and verdict.rounds == 15      # looks at 6, 12, 15
    assert not verdict.slower and verdict.low < 1.05 < verdict.high


def test_an_op_decided_early_keeps_its_verdict_while_another_runs_on():
    source = _Rounds(clear=[1.3] * 3 + [1.31, 1.29, 1.3] + [0.5] * 6,
                     unclear=[1.3, 0.85, 1.25, 0.9, 1.2, 0.8] + [1.06] * 6)
    clear, unclear = sequential(source, rounds=6, max_rounds=12)
    assert source.calls == 12
    # decided at round 6: the later (planted, absurd) rounds do not move it
    assert clear.slower and clear.rounds == 6 and clear.ratio == pytest.approx(1.3, abs=1e-3)
    assert unclear.rounds == 12


def _false_alarms(runs: int, true_ratio: float, seed: int = 0) -> float:
    rng = np.random.default_rng(seed)
    flagged = 0
    for _ in range(runs):
        def next_round(r):
            return {"op": float(np.log(true_ratio) + rng.normal(0.0, 0.1))}
        flagged += sequential(next_round, rounds=5, max_rounds=15)[0].slower
    return flagged / runs


def test_looking_again_does_not_inflate_false_alarms(monkeypatch):
    """An op exactly at the threshold (the worst case of 'not slower'): three looks, each at
    a 1 - 0.05/3 interval, call it slower in at most ~2.5% of runs (one-sided, Bonferroni);
    the same three looks at 95% each would call it in over 4%."""
    assert _false_alarms(400, 1.05) <= 0.035
    assert _false_alarms(200, 1.0) == 0.0
    monkeypatch.setattr(hb, "look_confidence", lambda confidence, n: confidence)
    assert _false_alarms(400, 1.05) > 0.04          # the correction is what keeps it down


def test_the_cpu_clock_does_not_count_time_spent_off_the_cpu():
    import time

    assert time_batch(lambda: time.sleep(0.02), 3, CLOCKS["wall"]) >= 0.06
    assert time_batch(lambda: time.sleep(0.02), 3, CLOCKS["cpu"]) < 0.02


# -- the command ---------------------------------------------------------------------------
def test_bench_prints_forward_and_backward_times_of_builtin_ops():
    proc = _opkit(ROOT, "relu", "mul", "--format", "json", "--repeats", "1")
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)["cases"]
    assert {r["op"] for r in rows} == {"relu", "mul"}
    for r in rows:
        assert r["forward_s"] > 0 and r["backward_s"] > 0
        assert r["scale"] > 1          # scaled up from the OpTest's small inputs


@pytest.mark.parametrize("args, message", [
    (["no_such_op"], "no_such_op"),
    (["relu", "--against", "no-such-ref-or-path"], "no-such-ref-or-path"),
    (["relu", "--rounds", "1", "--against", "HEAD"], "--rounds"),
    (["relu", "--rounds", "4", "--max-rounds", "3", "--against", "HEAD"], "--max-rounds"),
])
def test_bench_bad_input_is_a_usage_error(args, message):
    proc = _opkit(ROOT, *args, "--format", "json")
    assert proc.returncode == 2
    assert message in json.loads(proc.stdout)["error"]
    assert "Traceback" not in proc.stderr


def test_bench_against_a_git_ref_finds_a_planted_slowdown(tmp_path):
    # the kernel spins a fixed CPU time (3x the base's), and the default clock is the
    # worker's CPU time: only the direction is asserted here, how close the ratio comes to 3
    # under load is benchmarks/bench_clock.py's
    root = _project(tmp_path / "p", delay=0.002)
    _git(root, "init", "-q")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "fast")
    (root / "sleepy_op.py").write_text(_op(0.006))   # 3x slower
    proc = _opkit(root, "sleepy", "--against", "HEAD", "--rounds", "3", "--format", "json")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["slower"] == ["sleepy"]
    assert (result["max_rounds"], result["looks"], result["clock"]) == (9, 3, "cpu")
    op = result["ops"][0]
    assert len(op["per_round"]) == op["rounds"] >= 3
    assert 1.0 < op["low"] <= op["ratio"] <= op["high"]


def test_bench_against_another_op_path(tmp_path):
    root = _project(tmp_path / "p", delay=0.001)
    other = tmp_path / "old_ops"
    other.mkdir()
    (other / "sleepy_op.py").write_text(_op(0.004))   # the ref spins 4x the CPU time
    proc = _opkit(root, "sleepy", "--against", str(other), "--rounds", "2", "--format",
                  "json")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    result = json.loads(proc.stdout)
    assert result["slower"] == []
    # the ref's kernel ran (the ratio is this side's time over the ref's): below 1
    assert result["ops"][0]["ratio"] < 1.0, result


def test_bench_clock_wall_times_waiting_and_cpu_does_not(tmp_path):
    # both kernels only sleep, 1 ms and 8 ms: the wall clock sees the ref's much longer
    # wait (a ratio well under 1); the CPU clock sees neither wait, only the same work on
    # both sides. The figures under load: benchmarks/bench_clock.py
    root = _project(tmp_path / "p", delay=0.001, wait="sleep")
    other = tmp_path / "old_ops"
    other.mkdir()
    (other / "sleepy_op.py").write_text(_op(0.008, wait="sleep"))
    args = ["sleepy", "--against", str(other), "--rounds", "2", "--max-rounds", "2",
            "--format", "json"]
    wall = _opkit(root, *args, "--clock", "wall")
    assert wall.returncode == 0, wall.stdout + wall.stderr
    assert json.loads(wall.stdout)["clock"] == "wall"
    wall_ratio = json.loads(wall.stdout)["ops"][0]["ratio"]
    assert wall_ratio < 1.0
    cpu = json.loads(_opkit(root, *args).stdout)
    assert cpu["clock"] == "cpu"
    assert cpu["ops"][0]["ratio"] > wall_ratio, (cpu, wall_ratio)


def _recipe() -> str:
    text = (ROOT / "docs" / "performance.md").read_text()
    match = re.search(r"<!-- bench-ci-recipe -->\s*```bash\n(.*?)```", text, re.S)
    assert match, "docs/performance.md lost its bench CI recipe"
    return match.group(1)


def test_the_documented_ci_recipe_fails_a_slower_pull_request(tmp_path):
    """The recipe, as written, in a scratch project: a base branch on a remote, a pull
    request branch whose kernel is slower."""
    origin = tmp_path / "origin.git"
    root = _project(tmp_path / "work", delay=0.002)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", ".")
    _git(root, "commit", "-qm", "base")
    subprocess.run(["git", "clone", "-q", "--bare", str(root), str(origin)], check=True)
    _git(root, "remote", "add", "origin", str(origin))
    _git(root, "checkout", "-q", "-b", "pr")
    (root / "sleepy_op.py").write_text(_op(0.006))
    _git(root, "commit", "-qam", "slower")
    env = dict(os.environ, BASE_REF="main", OPS="sleepy", ROUNDS="3",
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(["bash", "-e", "-c", _recipe()], cwd=root, env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "SLOWER" in proc.stdout
