"""One side of `opkit bench --against`: a fresh process that loads one side's ops, prepares
the cases and times batches on request (started by `opkit.cli.bench_timing` with the installed harness, never the side's own).

The measuring code (the framework, `harness.backend.seam`, `opkit.cli.bench_timing`) is imported first,
from the installed opkit; only then is the side's `path_prefix` put first on `sys.path` and
its ops loaded, so that both sides time their own op code with the same measuring code.

Protocol (one line each way): the worker prints `ready PHASES_JSON` once its cases are
prepared (the phases it can time: `[[case_index, "forward"|"backward"], ...]`); then
`calibrate I PHASE` -> the number of calls a batch of at least the minimum time needs;
`time I PHASE N` -> the seconds N calls took; `quit` ends it. Seconds are of the spec's
`clock` ("wall" or "cpu": `opkit.cli.bench_timing.CLOCKS`; "wall" when absent).
"""
from __future__ import annotations

import json
import pickle
import sys


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    from harness.processes.forking import die_with_parent

    die_with_parent(spec.get("parent"))     # no worker outlives a killed `opkit bench`
    import opkit.cli.bench_timing as bench
    import harness.backend.seam  # noqa: F401 - the measuring code comes from this install
    import opkit.framework.operator  # noqa: F401
    import opkit.plugins  # noqa: F401
    import opkit.project as project

    sys.path[:0] = spec["path_prefix"]
    own = project.load_project() if spec["project"] else project.Project()
    project.load_op_modules(spec["ops"], own, builtins=spec["builtins"])
    with open(spec["cases"], "rb") as f:
        cases = pickle.load(f)
    calls = bench.prepare_calls(cases)
    clock = bench.CLOCKS[spec.get("clock", "wall")]
    out = sys.stdout
    out.write("ready " + json.dumps(sorted([i, p] for i, p in calls)) + "\n")
    out.flush()
    for line in sys.stdin:
        words = line.split()
        if not words or words[0] == "quit":
            break
        fn = calls[(int(words[1]), words[2])]
        if words[0] == "calibrate":
            out.write(f"{bench.calibrate(fn, float(spec['min_batch_s']), clock)}\n")
        else:
            out.write(f"{bench.time_batch(fn, int(words[3]), clock)!r}\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
