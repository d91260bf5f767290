"""`opkit test` on a torch custom op against PyTorch's own tools on the same sample, side
by side: `torch.library.opcheck` (its four tests, once without and once with
`requires_grad`) + `torch.autograd.gradcheck` (float64), and one `opkit test NS::OP
--backend torch` (every applicable check, `opcheck` included, with its own process
isolation), on the OpTest's sample.

    python benchmarks/torch_opkit_vs_opcheck.py [--repeat N] [--jobs N]

Prints the median seconds of each (wall clock, interleaved rounds: the same load on both),
how many checks / cases each ran, their ratio, and the load average. The op is
`mylib::scaled_softplus` (opkit_torch/optests/mylib_ops.py; the OpTest in
opkit_torch/optests/test_mylib.py). Needs torch (opkit-dl[torch]).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OP = "mylib::scaled_softplus"
OPS = ROOT / "opkit_torch" / "optests" / "mylib_ops.py"
TESTS = ROOT / "opkit_torch" / "optests" / "test_mylib.py"

_TORCH_SIDE = f"""
import importlib.util, time, numpy as np, torch
torch.set_num_threads(1)
t0 = time.perf_counter()
spec = importlib.util.spec_from_file_location("mylib_ops", {str(OPS)!r})
spec.loader.exec_module(importlib.util.module_from_spec(spec))
x = np.random.default_rng(3).uniform(-3, 3, (6, 5))
op = torch.ops.mylib.scaled_softplus.default
n = 0
for rg in (False, True):
    t = torch.from_numpy(x).clone().requires_grad_(rg)
    res = torch.library.opcheck(op, (t,), {{"beta": 2.0}})
    n += len(res)
    assert all(v == "SUCCESS" for v in res.values()), res
t = torch.from_numpy(x).clone().requires_grad_(True)
assert torch.autograd.gradcheck(lambda a: op(a, beta=2.0), (t,))
print(n + 1, time.perf_counter() - t0)
"""


def _torch_side() -> tuple[float, int]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", _TORCH_SIDE], capture_output=True, text=True,
                         check=True, env=_env())
    return time.perf_counter() - t, int(out.stdout.split()[0])


def _opkit_side(jobs: int) -> tuple[float, int]:
    t = time.perf_counter()
    out = subprocess.run([sys.executable, "-m", "opkit", "test", OP, "--backend", "torch",
                          "--ops", str(OPS), "--tests", str(TESTS), "--format", "json",
                          "--jobs", str(jobs), "--seed", "2024"],
                         capture_output=True, text=True, env=_env(), cwd=ROOT)
    seconds = time.perf_counter() - t
    if out.returncode not in (0, 1):
        raise SystemExit(f"opkit test failed ({out.returncode}): {out.stderr[-2000:]}")
    checks = {c["check"] for o in json.loads(out.stdout)["ops"] for c in o["checks"]
              if c["status"] != "skip"}
    return seconds, len(checks)


def _env() -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    return env


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=1, help="opkit test --jobs")
    a = ap.parse_args(argv)
    load0 = os.getloadavg()[0]
    rounds = [(_torch_side(), _opkit_side(a.jobs)) for _ in range(a.repeat)]
    t = statistics.median(r[0][0] for r in rounds)
    o = statistics.median(r[1][0] for r in rounds)
    ratio = statistics.median(r[1][0] / r[0][0] for r in rounds)
    print(f"{OP}, one sample (6x5 float64), medians of {a.repeat} interleaved rounds:")
    print(f"  opcheck (2 x {rounds[0][0][1] // 2} tests) + gradcheck: {t:7.2f} s "
          "(a fresh interpreter: torch import, op registration included)")
    print(f"  opkit test --backend torch ({rounds[0][1][1]} checks ran, the rest skip): "
          f"{o:7.2f} s   ratio {ratio:.1f}x")
    print(f"  load average {load0:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"opkit --jobs {a.jobs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
