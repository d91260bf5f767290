"""`opkit test --help` beside `opkit --help`: wall seconds of each, medians of repeats run
alternately (threads pinned to 1), and their ratio; and the CPU seconds (user + sys) of each
run, which a loaded machine inflates less than the wall time.

    python benchmarks/help_speed.py [--repeats 10]
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMANDS = {"opkit --help": ["--help"], "opkit test --help": ["test", "--help"]}


def wall(args) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one `python -m opkit ARGS`."""
    env = dict(os.environ, OMP_NUM_THREADS="1")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "opkit", *args], cwd=ROOT, env=env, check=True,
                   stdout=subprocess.DEVNULL)
    took = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    args = parser.parse_args(argv)
    times = {name: [] for name in COMMANDS}
    cpu = {name: [] for name in COMMANDS}
    for _ in range(args.repeats):
        for name, cmd in COMMANDS.items():
            w, c = wall(cmd)
            times[name].append(w)
            cpu[name].append(c)
    base = statistics.median(times["opkit --help"])
    cpu_base = statistics.median(cpu["opkit --help"])
    print(f"load average {os.getloadavg()[0]:.2f}")
    for name, ts in times.items():
        med, cmed = statistics.median(ts), statistics.median(cpu[name])
        print(f"{name:20s} median {med:.3f}s  min {min(ts):.3f}s  max {max(ts):.3f}s  "
              f"ratio {med / base:.2f}  CPU median {cmed:.3f}s ratio {cmed / cpu_base:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
