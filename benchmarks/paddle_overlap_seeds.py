"""The Paddle-overlap report at several seeds in one JSON, and the comparison of two such
JSONs: what "no verdict changes (the Paddle overlap at four seeds)" of issue 49 is checked
with, on the old tree and the new one.

    python benchmarks/paddle_overlap_seeds.py run OUT.json [--seeds 2024,1,7,42] [--jobs 2] [OP ...]
    python benchmarks/paddle_overlap_seeds.py diff OLD.json NEW.json [--messages]

`run`: per seed, one `opkit test OP... --backend paddle --seed SEED --format json --jobs N`
over the op types both opkit's built-in ops and Paddle have (opkit_paddle.backend.overlap;
or the OPs given), run by this interpreter under the tree it imports (set PYTHONPATH to run
another tree); OUT.json is {"seeds": [...], "ops": [...], "runs": {seed: {"exit": code,
"seconds": s, "results": [{"op", "check", "place", "dtype", "case", "status", "message",
"worst_error"}...]}}}, rewritten after each seed (a run stopped early keeps the seeds done).
`diff`: the seeds run must be the same; every result keyed by (seed, op, check, place,
dtype, case, occurrence); prints "identical" and exits 0 when every status matches (and, with
`--messages`, every message), else lists the differences (at most 50 of each kind) and exits
1; 2 for a file that is not such a JSON. Timings (`seconds`) are never compared.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SEEDS = (2024, 1, 7, 42)
MAIN = "import sys; from opkit.cli.main import main; sys.exit(main())"


def _report(stdout: str) -> dict | None:
    start = stdout.find('{\n "ops"')
    try:
        return json.loads(stdout[start:]) if start >= 0 else None
    except json.JSONDecodeError:
        return None


def run(out: Path, seeds, jobs: int, ops: list[str]) -> int:
    if not ops:
        from opkit_paddle.backend.overlap import overlap_ops

        ops = overlap_ops()
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONHASHSEED="0")
    doc = {"seeds": list(seeds), "ops": list(ops), "runs": {}}
    for seed in seeds:
        cmd = [sys.executable, "-c", MAIN, "test", *ops, "--backend", "paddle", "--seed",
               str(seed), "--jobs", str(jobs), "--format", "json"]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        seconds = round(time.monotonic() - t0, 1)
        report = _report(p.stdout)
        results = []
        for op in (report or {}).get("ops", []):
            for c in op["checks"]:
                results.append({"op": op["op"], "check": c["check"], "place": c["place"],
                                "dtype": c["dtype"], "case": c["case"],
                                "status": c["status"], "message": c.get("message", ""),
                                "worst_error": c.get("worst_error")})
        doc["runs"][str(seed)] = {"exit": p.returncode, "seconds": seconds,
                                  "results": results,
                                  "stderr_tail": "" if report else p.stderr[-2000:]}
        print(f"seed {seed}: exit {p.returncode}, {len(results)} results, {seconds} s",
              file=sys.stderr)
        out.write_text(json.dumps(doc, indent=1))
    return 0


def _load(path: Path) -> dict:
    doc = json.loads(path.read_text())
    keyed = {}
    for seed, r in doc["runs"].items():
        seen = collections.Counter()
        for c in r["results"]:
            k = (seed, c["op"], c["check"], c["place"], c["dtype"], c["case"])
            seen[k] += 1
            keyed[k + (seen[k],)] = c
    # the seeds run (a run stopped early lists every requested seed in "seeds")
    return {"seeds": sorted(doc["runs"]), "exits": {s: r["exit"] for s, r in
                                                   doc["runs"].items()},
            "results": keyed}


def diff(a: Path, b: Path, messages: bool = False, show: int = 50) -> int:
    try:
        A, B = _load(a), _load(b)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        print(f"not a paddle_overlap_seeds JSON: {exc}", file=sys.stderr)
        return 2
    lines = []
    if A["seeds"] != B["seeds"]:
        lines.append(f"seeds run differ: {A['seeds']} vs {B['seeds']} (rerun with --seeds "
                     f"{','.join(s for s in A['seeds'] if s in B['seeds']) or '...'} to "
                     f"compare the common ones)")
    for s in sorted(A["exits"].keys() & B["exits"].keys()):
        if A["exits"][s] != B["exits"][s]:
            lines.append(f"seed {s}: exit {A['exits'][s]} -> {B['exits'][s]}")
    ra, rb = A["results"], B["results"]
    common = sorted(ra.keys() & rb.keys())
    status = [k for k in common if ra[k]["status"] != rb[k]["status"]]
    msg = [k for k in common if messages and ra[k]["status"] == rb[k]["status"]
           and ra[k]["message"] != rb[k]["message"]]
    for k in status[:show]:
        lines.append(f"STATUS {k}: {ra[k]['status']} -> {rb[k]['status']} | "
                     f"{rb[k]['message'][:200]}")
    for k in msg[:show]:
        lines.append(f"MESSAGE {k}: {ra[k]['message'][:150]!r} -> {rb[k]['message'][:150]!r}")
    for k in sorted(ra.keys() - rb.keys())[:show]:
        lines.append(f"GONE {k}: {ra[k]['status']}")
    for k in sorted(rb.keys() - ra.keys())[:show]:
        lines.append(f"NEW {k}: {rb[k]['status']}")
    print(f"{a}: {len(ra)} results; {b}: {len(rb)} results; status differ {len(status)}"
          + (f", message differ {len(msg)}" if messages else "")
          + f", only in {a.name} {len(ra.keys() - rb.keys())}, only in {b.name} "
            f"{len(rb.keys() - ra.keys())}")
    if not lines:
        print("identical")
        return 0
    print("\n".join(lines))
    return 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("ops", nargs="*")
    r.add_argument("--seeds", default=",".join(map(str, SEEDS)),
                   help="comma-separated seeds (default 2024,1,7,42)")
    r.add_argument("--jobs", type=int, default=2)
    d = sub.add_parser("diff")
    d.add_argument("a", type=Path)
    d.add_argument("b", type=Path)
    d.add_argument("--messages", action="store_true", help="also compare messages")
    args = parser.parse_args(argv)
    if args.cmd == "run":
        try:
            seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
        except ValueError:
            parser.error(f"--seeds: not a comma-separated list of integers: {args.seeds!r}")
        return run(args.out, seeds, args.jobs, args.ops)
    return diff(args.a, args.b, args.messages)


if __name__ == "__main__":
    sys.exit(main())
