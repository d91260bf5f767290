"""`opkit test --help` beside `opkit --help`: wall seconds of each, medians of repeats run
alternately (threads pinned to 1), and their ratio.

    python benchmarks/help_speed.py [--repeats 10]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"opkit --help": ["--help"], "opkit test --help": ["test", "--help"]}


def wall(args) -> float:
    env = dict(os.environ, OMP_NUM_THREADS="1")
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "opkit", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    times = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, cmd in COMMANDS.items():
            times[name].append(wall(cmd))
    base = statistics.median(times["opkit --help"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:20s} median {med:.3f}s  min {min(ts):.3f}s  max {max(ts):.3f}s  "
              f"ratio {med / base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
