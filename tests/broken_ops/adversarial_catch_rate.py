"""The catch rate of `opkit test` on the adversarial red team (adversarial_op.py /
adversarial_optests.py; issue 48).

    python tests/broken_ops/adversarial_catch_rate.py [--before] [--json FILE] [opkit args]

Prints, per broken op, the checks that fail it, then `caught N of M` and the twins that fail
anything (there must be none). `--before`: every default check (and the default fuzz) but the three of issue
48 (`indistinguishable`, `honest_error`, `clean_process`). Exit 0 when every twin is clean.
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
NEW = ("indistinguishable", "honest_error", "clean_process")


def names() -> list[str]:
    text = (HERE / "adversarial_op.py").read_text()
    return sorted(set(re.findall(r'_register\("(adv_\w+)"', text)) |
                  {f"adv_autotune{n}" for n in (3, 10, 50)})


def run(extra: list[str], before: bool) -> dict:
    if before:
        sys.path.insert(0, str(ROOT))
        from harness.checks.catalog import DEFAULT_CHECKS
        extra = ["--checks", ",".join([c for c in DEFAULT_CHECKS
                                       if c not in NEW and c != "against"] + ["fuzz"])] + extra
    env = dict(os.environ, NO_COLOR="1", OPKIT_NO_GPU="1")
    p = subprocess.run([sys.executable, "-c", "import sys; from opkit.cli.main import main; "
                        "sys.exit(main())", "test",
                        "--ops", str(HERE / "adversarial_op.py"),
                        "--tests", str(HERE / "adversarial_optests.py"),
                        "--format", "json", *extra],
                       cwd=ROOT, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise SystemExit(f"opkit test exited {p.returncode}: {p.stderr[-2000:]}")
    doc = json.loads(p.stdout)
    return {o["op"]: sorted({c["check"] for c in o["checks"] if c["status"] == "fail"})
            for o in doc["ops"]}


def main(argv: list[str]) -> int:
    before = "--before" in argv
    argv = [a for a in argv if a != "--before"]
    out = None
    if "--json" in argv:
        i = argv.index("--json")
        out = argv[i + 1]
        del argv[i:i + 2]
    failed = run(argv, before)
    caught, dirty = 0, []
    for n in names():
        got = failed.get(f"broken_{n}", [])
        caught += bool(got)
        print(f"broken_{n:24s} {', '.join(got) or '-'}")
        if failed.get(f"good_{n}"):
            dirty.append(f"good_{n}: {', '.join(failed[f'good_{n}'])}")
    print(f"caught {caught} of {len(names())}; twins failing: {len(dirty)}")
    for d in dirty:
        print("  " + d)
    if out:
        Path(out).write_text(json.dumps(failed, indent=1))
    return 1 if dirty else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
