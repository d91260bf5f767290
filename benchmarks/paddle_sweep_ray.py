"""The Paddle sweep's units per minute on the local fork pool against a local Ray
(`opkit test --paddle --backend paddle --tests DIR --cluster ray`), side by side, and
whether the two give the same verdicts on the same units.

    python benchmarks/paddle_sweep_ray.py run DIR OUT_DIR [--repeat 2] [--seed 2024]
    python benchmarks/paddle_sweep_ray.py compare A.json B.json

`run` alternates the two modes (fork, ray, ray, fork, ...), threads pinned to 1, writes
OUT_DIR/<mode>-<k>.json (the JSON reports) and OUT_DIR/summary.json (wall seconds, units,
units per minute, the medians, Ray's overhead, the load average before and after each run),
and compares every report's verdicts with the first fork run's. `compare` prints the
(op, check, case, place, dtype) results whose status differs between two JSON reports and
exits 1 when there is one.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

UNITS = re.compile(r"(\d+)/(\d+) tasks")


def _doc(text: str):
    start = text.find('{\n "ops"')
    return json.loads(text[start:]) if start >= 0 else None


def verdicts(doc) -> collections.Counter:
    """(op, check, case, place, dtype, status) -> how many results."""
    return collections.Counter((op["op"], c["check"], c.get("case", ""), c.get("place", ""),
                                c.get("dtype", ""), c["status"])
                               for op in doc["ops"] for c in op["checks"])


def differences(a, b) -> list[str]:
    va, vb = verdicts(a), verdicts(b)
    return [f"{k}: {va[k]} vs {vb[k]}" for k in sorted(set(va) | set(vb), key=str)
            if va[k] != vb[k]]


def _one(mode: str, tests: Path, seed: int, out: Path) -> dict:
    env = dict(os.environ, OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               OPENBLAS_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "opkit", "test", "--paddle", "--backend", "paddle",
           "--tests", str(tests), "--seed", str(seed), "--format", "json"]
    if mode == "ray":
        cmd += ["--cluster", "ray"]
    load = os.getloadavg()[0]
    began, cpu0 = time.monotonic(), resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall, cpu1 = time.monotonic() - began, resource.getrusage(resource.RUSAGE_CHILDREN)
    out.write_text(p.stdout)
    totals = UNITS.findall(p.stderr)
    units = int(totals[-1][1]) if totals else 0
    # CPU seconds of the command and the processes it waited for (the fork pool's workers,
    # the fresh interpreters); not a Ray cluster's workers, which are not its children
    cpu = cpu1.ru_utime + cpu1.ru_stime - cpu0.ru_utime - cpu0.ru_stime
    return {"mode": mode, "file": out.name, "exit": p.returncode, "wall_s": round(wall, 1),
            "cpu_s_children": round(cpu, 1),
            "units": units, "units_per_min": round(units / wall * 60, 2) if wall else 0,
            "load_before": round(load, 2), "load_after": round(os.getloadavg()[0], 2)}


def run(tests: Path, out: Path, repeat: int, seed: int) -> int:
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    order = []
    for k in range(repeat):
        order += [("fork", k), ("ray", k)] if k % 2 == 0 else [("ray", k), ("fork", k)]
    for mode, k in order:
        row = _one(mode, tests, seed, out / f"{mode}-{k}.json")
        rows.append(row)
        print(json.dumps(row), file=sys.stderr)
    base = _doc((out / "fork-0.json").read_text())
    for row in rows:
        doc = _doc((out / row["file"]).read_text())
        row["verdict_differences"] = differences(base, doc) if doc and base else ["no report"]
    med = {m: statistics.median(r["units_per_min"] for r in rows if r["mode"] == m)
           for m in ("fork", "ray")}
    summary = {"tests": str(tests), "seed": seed, "runs": rows, "median_units_per_min": med,
               "ray_overhead": round(med["fork"] / med["ray"] - 1, 3) if med["ray"] else None,
               "cpus": os.cpu_count()}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in ("median_units_per_min", "ray_overhead")}))
    return 1 if any(r["verdict_differences"] for r in rows) else 0


def compare(a: Path, b: Path) -> int:
    diff = differences(_doc(a.read_text()), _doc(b.read_text()))
    for line in diff:
        print(line)
    print(f"{len(diff)} differing (op, check, case, place, dtype, status) counts")
    return 1 if diff else 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("tests", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("--repeat", type=int, default=2)
    r.add_argument("--seed", type=int, default=2024)
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        return run(args.tests, args.out, args.repeat, args.seed)
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
