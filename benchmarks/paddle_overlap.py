"""The triage run of docs/paddle.md: every op type both opkit's built-in ops and Paddle have,
`opkit test OP --backend paddle` (float32 and float64, every check), one op at a time, and
the counts.

    python benchmarks/paddle_overlap.py run OUT_DIR [--seed N] [--timeout S] [OP ...]
    python benchmarks/paddle_overlap.py count OUT_DIR [OUT_DIR ...] [--triage FILE]

`run` writes OUT_DIR/<op>.json (the JSON report) per op; `count` reads them and prints, per
op, its status and failing checks with the triage's word on each (benchmarks/
paddle_overlap_triage.json: "op check" -> the row of docs/paddle.md's bug table or the
contract difference it is), then the totals; a failing pair the triage does not know is
listed as UNCLASSIFIED and `count` exits 1.
"""
from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
from pathlib import Path


def run(out: Path, seed: int, timeout: float, ops: list[str]) -> int:
    from opkit_paddle.backend.overlap import overlap_ops

    out.mkdir(parents=True, exist_ok=True)
    for op in ops or overlap_ops():
        cmd = [sys.executable, "-m", "opkit", "test", op, "--backend", "paddle", "--seed",
               str(seed), "--format", "json"]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
            (out / f"{op}.json").write_text(p.stdout)
        except subprocess.TimeoutExpired:
            (out / f"{op}.json").write_text("")
        print(op, file=sys.stderr)
    return 0


def _doc(path: Path):
    text = path.read_text()
    start = text.find('{\n "ops"')
    try:
        return json.loads(text[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        return None


TRIAGE = Path(__file__).with_name("paddle_overlap_triage.json")


def count(dirs: list[Path], triage_path: Path = TRIAGE) -> int:
    triage = json.loads(triage_path.read_text()) if triage_path.exists() else {}
    unclassified = []
    both_dtypes = 0
    reports = {}
    for d in dirs:
        for path in sorted(d.glob("*.json")):
            doc = _doc(path)
            if doc is None:
                reports.setdefault(path.stem, None)
                continue
            for op in doc["ops"]:
                reports[op["op"]] = op
    status = collections.Counter()
    checks = collections.Counter()
    for name, op in sorted(reports.items()):
        if op is None:
            print(f"{name}: no report (timed out)")
            status["timeout"] += 1
            continue
        status[op["status"]] += 1
        for c in op["checks"]:
            checks[c["status"]] += 1
        failing = sorted({c["check"] for c in op["checks"] if c["status"] == "fail"})
        both = {c["dtype"] for c in op["checks"] if c["check"] == "output" and
                c["status"] == "pass"}
        ran = {c["dtype"] for c in op["checks"] if c["status"] != "skip"}
        both_dtypes += {"float32", "float64"} <= ran
        words = []
        for check in failing:
            why = triage.get(f"{name} {check}")
            if why is None:
                unclassified.append(f"{name} {check}")
            words.append(f"{check}: {why or 'UNCLASSIFIED'}")
        print(f"{name}: {op['status']}" + (f" ({'; '.join(words)})" if failing else "")
              + (" [output passed in float32 and float64]" if {"float32", "float64"} <= both
                 else ""))
    print(f"ops: {sum(status.values())} ({dict(status)}); checks run in float32 and float64: "
          f"{both_dtypes} ops; check results: {dict(checks)}")
    if unclassified:
        print("UNCLASSIFIED: " + ", ".join(unclassified))
        return 1
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("ops", nargs="*")
    r.add_argument("--seed", type=int, default=2024)
    r.add_argument("--timeout", type=float, default=600)
    c = sub.add_parser("count")
    c.add_argument("dirs", nargs="+", type=Path)
    c.add_argument("--triage", type=Path, default=TRIAGE)
    args = parser.parse_args(argv)
    if args.cmd == "run":
        return run(args.out, args.seed, args.timeout, args.ops)
    return count(args.dirs, args.triage)


if __name__ == "__main__":
    sys.exit(main())
