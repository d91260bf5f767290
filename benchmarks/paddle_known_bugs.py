"""Catching power on Paddle's kernels: the known-bug set of tests/paddle_backend/known_bugs/
(bugs from Paddle's tracker, each as a small Paddle-style OpTest file whose author case
passes) run through `opkit test --paddle --backend paddle`, counted per tree.

    python benchmarks/paddle_known_bugs.py [--tree DIR] [--seed N] [--json OUT]

`--tree` is the opkit checkout to judge with (default: this one), e.g. the tree before
issue 45 point 5, to measure before / after side by side. A bug counts as caught when the
check of its class fails on its file (another check failing is listed, not counted).
Needs paddlepaddle; prints a Markdown table (docs/paddle.md, "Catching power")."""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUGS = ROOT / "tests" / "paddle_backend" / "known_bugs"
MAIN = "import sys; from opkit.cli.main import main; sys.exit(main())"

# file stem -> (tracker reference, class, the check that must fail, shows on Paddle 3.3.1 CPU)
TABLE = {
    "bug_reduce_prod_grad_zero": ("Paddle PR #64127", "zero where a gradient divides",
                                  "kinks", True),
    "bug_p_norm_overflow": ("Paddle PR #74197", "exponent range in a reduction",
                            "extremal", True),
    "bug_dist_overflow": ("Paddle PR #74448", "exponent range in a reduction",
                          "extremal", True),
    "bug_renorm_overflow": ("Paddle issue #71164 (renorm)", "exponent range (finite wrong)",
                            "extremal", True),
    "bug_layer_norm_overflow": ("Paddle PRs #33534, #74060", "exponent range (finite wrong)",
                                "extremal", True),
    "bug_heaviside_nan": ("Paddle issue #79459", "NaN (needs an oracle)", "explore", True),
    "bug_mean_empty_last_axis": ("Paddle issue #71826", "non-batch dim cut to 0", "empty",
                                 False),
    "bug_all_zero_batch": ("Paddle issue #79362", "zero-size batch", "empty", False),
    "bug_pow_zero_zero_grad": ("Paddle issue #45054", "contract difference", "kinks", False),
    "bug_dist_equal_grad": ("Paddle PR #32448", "0 / 0 in a gradient", "repeated_input",
                            False),
}


def run(tree: Path, path: Path, seed: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree), OMP_NUM_THREADS="1")
    p = subprocess.run([sys.executable, "-c", MAIN, "test", "--paddle", "--backend", "paddle",
                        "--tests", str(path), "--seed", str(seed), "--format", "json"],
                       cwd=tree, env=env, capture_output=True, text=True, timeout=1800)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"error": (p.stderr or p.stdout)[-300:]}
    failed = sorted({c["check"] for op in doc.get("ops", []) for c in op["checks"]
                     if c["status"] == "fail"})
    return {"failed": failed}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", default=str(ROOT))
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    tree = Path(args.tree).resolve()
    rows, caught = {}, 0
    print("| bug | tracker | class | on 3.3.1 CPU | check | caught | checks failing |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for stem, (ref, cls, check, shows) in TABLE.items():
        got = run(tree, BUGS / f"{stem}.py", args.seed)
        hit = check in got.get("failed", [])
        caught += hit
        rows[stem] = dict(got, caught=hit)
        print(f"| {stem} | {ref} | {cls} | {'yes' if shows else 'no'} | {check} | "
              f"{'yes' if hit else 'no'} | {', '.join(got.get('failed', [])) or got.get('error', '-')} |")
    print(f"\n{caught} of {len(TABLE)} caught ({tree}, seed {args.seed})")
    if args.json:
        Path(args.json).write_text(json.dumps({"tree": str(tree), "seed": args.seed,
                                               "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
