"""CPU seconds each harness check spends on the built-in ops (one process, no forking of
cases): `python benchmarks/check_costs.py [CHECK ...]`. CPU time (time.process_time), so the
figures hold on a loaded machine; the forked children of `state`/`determinism` are not
counted."""
from __future__ import annotations

import sys
import time
from collections import defaultdict


def main(argv):
    from harness.selecting.discovery import discover
    from harness.executing.pool import run_ops

    from harness.checks.base import Check

    spent = defaultdict(float)
    real = Check.__call__

    def timed(self, *args, **kwargs):
        started = time.process_time()
        try:
            return real(self, *args, **kwargs)
        finally:
            spent[self.name] += time.process_time() - started

    Check.__call__ = timed
    import reference_ops  # noqa: F401 - the built-in ops
    from pathlib import Path

    by_op = discover([str(Path(reference_ops.__file__).parent / "tests")]).by_op()
    started = time.process_time()
    run_ops(sorted(o for o in by_op if o), by_op, isolate=False)
    total = time.process_time() - started
    names = argv or sorted(spent, key=spent.get, reverse=True)
    for name in names:
        print(f"{name:16s} {spent.get(name, 0.0):7.2f} s")
    print(f"{'total':16s} {total:7.2f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
