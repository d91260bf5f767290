"""How close `opkit bench --against` comes to the planted ratios on this machine (what
tests/test_bench_timing.py only asserts the direction of): a kernel spinning 3x the CPU time
(ratio ~3), the same code on both sides (~1), and kernels that spin 2 ms then sleep 1 ms
against 4 ms under both clocks (wall ~0.5, CPU ~1). `python benchmarks/bench_clock.py`;
run it on a quiet machine and under load, and compare."""
from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT)]


def main() -> int:
    from test_bench_timing import _op, _opkit, _project

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows = []
        for name, mine, ref, clock in [
                ("3x the CPU time", _op(0.006), _op(0.002), "cpu"),
                ("the same code", _op(0.002), _op(0.002), "cpu"),
                ("1 ms vs 4 ms asleep, wall", _op(0.001, "sleep", 0.002),
                 _op(0.004, "sleep", 0.002), "wall"),
                ("1 ms vs 4 ms asleep, cpu", _op(0.001, "sleep", 0.002),
                 _op(0.004, "sleep", 0.002), "cpu")]:
            root = _project(tmp / f"p{len(rows)}", delay=0.001)
            (root / "sleepy_op.py").write_text(mine)
            other = tmp / f"ref{len(rows)}"
            other.mkdir()
            (other / "sleepy_op.py").write_text(ref)
            proc = _opkit(root, "sleepy", "--against", str(other), "--rounds", "5",
                          "--clock", clock, "--format", "json")
            op = json.loads(proc.stdout)["ops"][0]
            rows.append(name)
            print(f"{name:28s} ratio {op['ratio']:.3f} [{op['low']:.3f}, {op['high']:.3f}] "
                  f"({op['rounds']} rounds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
