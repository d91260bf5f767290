"""Speed of the front doors, side by side, medians of repeats (threads pinned to 1):

- `opkit test --all` with --jobs 1 and --jobs 2 (the fork pool);
- `python -m pytest -p no:xdist reference_ops/tests` with and without the pytest plugin's
  per-check items (--opkit-no-check-items).

    python benchmarks/front_speed.py [--repeats 3]
Prints one line per variant: median, min and max wall seconds; the ratios against the first
variant of each group."""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GROUPS = {
    "opkit test --all": [
        ("--jobs 1", [sys.executable, "-m", "opkit", "test", "--all", "--jobs", "1"]),
        ("--jobs 2 (fork pool)", [sys.executable, "-m", "opkit", "test", "--all", "--jobs", "2"]),
    ],
    "pytest reference_ops/tests": [
        ("--opkit-no-check-items", [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                                    "reference_ops/tests", "--opkit-no-check-items"]),
        ("with check items", [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                              "reference_ops/tests"]),
    ],
}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", NO_COLOR="1")
    for group, variants in GROUPS.items():
        times = {name: [] for name, _ in variants}
        for _ in range(args.repeats):           # interleaved: the variants share the load
            for name, cmd in variants:
                start = time.perf_counter()
                subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True)
                times[name].append(time.perf_counter() - start)
        base = statistics.median(times[variants[0][0]])
        print(group)
        for name, ts in times.items():
            med = statistics.median(ts)
            print(f"  {name:<24} median {med:6.2f} s  (min {min(ts):.2f}, max {max(ts):.2f})"
                  f"  x{med / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
