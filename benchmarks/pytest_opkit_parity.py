"""The pytest plugin and `opkit test` agree on every broken op: the whole of tests/broken_ops
run both ways (tests/harness/test_shard_and_plugin.py runs a sample of it in the suite).
`python benchmarks/pytest_opkit_parity.py`: prints the disagreements and the time each side
took; exit 1 on a disagreement. About 12 minutes on a loaded 2-core machine."""
from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "harness"), str(ROOT)]


def main() -> int:
    from test_shard_and_plugin import parity, parity_project

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        parity_project(root)
        began = time.monotonic()
        both, _ = parity(root, timeout=None)
        took = time.monotonic() - began
    mismatch = {k: v for k, v in both.items() if v[0] != v[1]}
    for (cls, check), (by_pytest, by_opkit) in sorted(mismatch.items()):
        print(f"{cls} {check}: pytest {by_pytest}, opkit test {by_opkit}")
    print(f"{len(both)} verdicts compared, {len(mismatch)} differ; {took:.0f} s for both runs")
    return 1 if mismatch else 0


if __name__ == "__main__":
    sys.exit(main())
