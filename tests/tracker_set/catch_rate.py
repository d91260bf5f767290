"""The catch rate of `opkit test` on the tracker set (tracker_ops.py / tracker_optests.py).

    python tests/tracker_set/catch_rate.py [--checks a,b] [--json FILE] [opkit test options]

Prints, per broken op, the checks that fail it, then `caught N of M` and the twins that fail
anything (there must be none). Exit 0 when every twin is clean, 1 otherwise.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def names() -> list[str]:
    text = (HERE / "tracker_optests.py").read_text()
    return sorted(set(re.findall(r'op = "broken_(\w+)"', text)))


def run(extra: list[str]) -> dict:
    ops = [f"{k}_{n}" for n in names() for k in ("broken", "good")]
    env = dict(os.environ, NO_COLOR="1", OPKIT_NO_GPU="1")
    p = subprocess.run([sys.executable, "-c", "import sys; from opkit.cli.main import main; "
                        "sys.exit(main())", "test", *ops,
                        "--ops", str(HERE / "tracker_ops.py"),
                        "--tests", str(HERE / "tracker_optests.py"),
                        "--format", "json", *extra],
                       cwd=ROOT, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"opkit test exited {p.returncode}: {p.stderr[-2000:]}")
    doc = json.loads(p.stdout)
    return {o["op"]: sorted({c["check"] for c in o["checks"] if c["status"] == "fail"})
            for o in doc["ops"]}


def main(argv: list[str]) -> int:
    out = None
    if "--json" in argv:
        i = argv.index("--json")
        out = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    failed = run(argv)
    caught = {n: failed.get(f"broken_{n}", []) for n in names()}
    twins = {op: c for op, c in failed.items() if op.startswith("good_") and c}
    for n, checks in caught.items():
        print(f"broken_{n:<20} {', '.join(checks) or '-- missed'}")
    hit = sum(1 for c in caught.values() if c)
    print(f"caught {hit} of {len(caught)}; twins failing: {twins or 'none'}")
    if out:
        Path(out).write_text(json.dumps({"caught": caught, "twins": twins}, indent=1))
    return 0 if not twins else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
