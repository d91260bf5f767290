"""One side of `opkit bench --against`: a fresh process that loads one side's ops and times
the cases (`python -m harness.bench_worker SPEC_JSON`).

The measuring code (the framework, `harness.runner`, this module) is imported first, from
the installed opkit; only then is the side's `path_prefix` put first on `sys.path` and its
ops loaded, so that both sides time their own op code with the same measuring code.
"""
from __future__ import annotations

import json
import pickle
import sys


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    import harness.bench as bench
    import harness.runner  # noqa: F401 - the measuring code comes from this install
    import opkit.framework.operator  # noqa: F401
    import opkit.plugins  # noqa: F401
    import opkit.project as project

    sys.path[:0] = spec["path_prefix"]
    own = project.load_project() if spec["project"] else project.Project()
    project.load_op_modules(spec["ops"], own, builtins=spec["builtins"])
    with open(spec["cases"], "rb") as f:
        cases = pickle.load(f)
    rows = bench.time_cases(cases, repeats=spec["repeats"])
    with open(spec["out"], "w") as f:
        json.dump(rows, f)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
