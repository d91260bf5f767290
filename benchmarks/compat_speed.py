"""Time `opkit compat` on the two real Paddle dumps in tests/compat/data.

    python benchmarks/compat_speed.py [--repeat 20]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

from checkers.compat import compare, load_op_descs, render_json, text_report

DATA = Path(__file__).resolve().parents[1] / "tests" / "compat" / "data"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    old_path, new_path = DATA / "paddle-2.6.2.json.gz", DATA / "paddle-3.3.1.json.gz"
    load, cmp, render = [], [], []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        old, new = load_op_descs(old_path), load_op_descs(new_path)
        t1 = time.perf_counter()
        report = compare(old, new)
        t2 = time.perf_counter()
        text_report(report)
        render_json(report)
        t3 = time.perf_counter()
        load.append(t1 - t0)
        cmp.append(t2 - t1)
        render.append(t3 - t2)
    print(f"{len(old)} ops -> {len(new)} ops: {len(report.breaking)} breaking, "
          f"{len(report.notes)} notes")
    for name, times in (("load+validate both", load), ("compare", cmp), ("render text+json", render)):
        print(f"{name:<20} best {min(times) * 1000:7.1f} ms   median "
              f"{sorted(times)[len(times) // 2] * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
