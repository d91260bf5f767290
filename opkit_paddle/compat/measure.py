"""Measure how many of Paddle's OpTest methods pass in opkit's Paddle-compatibility mode.

    python -m opkit_paddle.compat.measure PATH... [--json OUT] [--pytest-args "ARGS"]
                                                    [--backend paddle] [--per-file]

Runs pytest with `--opkit-paddle` over the folders / files (one process, no xdist; `@LIST`
reads paths from a file, one a line, relative to the file's folder) and sorts every test
method: OpTest methods (classes derived from `op_test.OpTest`) and other test methods
(Paddle's layer/API tests), each into passed / failed / skipped, skips and failures grouped
by their reason (the first line of the message, numbers blanked), and lists the files that
could not be imported (each with the missing name). Prints a summary; with --json writes
every method's outcome. `--backend paddle` runs the ops on PaddlePaddle's own kernels (the
test files import the real `paddle`; opkit_paddle.compat). `--per-file` runs each file in
a pytest process of its own, as Paddle's CTest does (a kernel that aborts the process, or
corrupts the heap for a later file, then costs only its own file, which is listed as
crashed with the signal).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from harness.processes.forking import die_with_parent
from opkit_paddle.compat import is_paddle_harness_file


def _reason(report) -> str:
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple):
        return str(longrepr[2]).replace("Skipped: ", "")
    text = getattr(report, "longreprtext", "") or str(longrepr or "")
    lines = [ln[2:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    return lines[0] if lines else (text.strip().splitlines() or [""])[-1]


def _group(reason: str) -> str:
    reason = re.sub(r"reproduce:.*", "", reason)
    reason = re.sub(r"/\S+\.py", "FILE", reason)
    reason = re.sub(r"\[[^\]]*\]", "[..]", reason)
    reason = re.sub(r"\(shape [^)]*\)", "(shape ..)", reason)
    reason = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", reason)
    return reason[:220]


class _Collector:
    def __init__(self):
        self.rows: dict[str, dict] = {}
        self.import_errors: dict[str, str] = {}

    def pytest_collectreport(self, report):
        if report.failed:
            self.import_errors[report.nodeid] = _reason(report)

    def pytest_runtest_logreport(self, report):
        row = self.rows.setdefault(report.nodeid, {"nodeid": report.nodeid,
                                                   "outcome": "passed", "reason": ""})
        if report.when == "call" or report.failed or report.skipped:
            if report.failed:
                row.update(outcome="failed", reason=_reason(report))
            elif report.skipped:
                row.update(outcome="skipped", reason=_reason(report))

    def pytest_collection_modifyitems(self, items):
        for item in items:
            cls = getattr(item, "cls", None)
            is_optest = cls is not None and any(
                c.__name__ == "OpTest" and c.__module__ == "op_test" for c in cls.__mro__)
            self.rows[item.nodeid] = {"nodeid": item.nodeid, "outcome": "passed",
                                      "reason": "", "optest": is_optest}


def summarize(rows: list[dict]) -> dict:
    out = {}
    for kind, pick in (("optest", True), ("other", False)):
        sel = [r for r in rows if bool(r.get("optest")) is pick]
        counts = Counter(r["outcome"] for r in sel)
        runnable = counts["passed"] + counts["failed"]
        out_of_scope = sum(1 for r in sel if r["outcome"] == "skipped" and
                           r["reason"].startswith("out of scope"))
        out[kind] = {
            "methods": len(sel), "out_of_scope": out_of_scope,
            "in_scope": len(sel) - out_of_scope,
            "passed": counts["passed"], "failed": counts["failed"],
            "skipped": counts["skipped"], "runnable": runnable,
            "pass_rate": round(counts["passed"] / runnable, 4) if runnable else None,
            "skip_reasons": Counter(_group(r["reason"]) for r in sel
                                    if r["outcome"] == "skipped").most_common(),
            "fail_reasons": Counter(_group(r["reason"]) for r in sel
                                    if r["outcome"] == "failed").most_common(),
        }
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opkit_paddle.compat.measure")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--pytest-args", default="", metavar="ARGS")
    parser.add_argument("--backend", choices=["opkit", "paddle"], default=None,
                        help="whose kernels run the ops (default opkit's, or $OPKIT_BACKEND)")
    parser.add_argument("--per-file", action="store_true",
                        help="one pytest process per test file (a crash costs one file)")
    parser.add_argument("--parent", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    # a --per-file child ends with the measure process that started it (docs/harness.md,
    # "Child processes"): a killed sweep leaves no pytest behind
    die_with_parent(args.parent)

    import pytest

    paths = []
    for p in args.paths:
        if p.startswith("@"):
            listing = Path(p[1:])
            paths += [str(listing.parent / ln.strip()) for ln in
                      listing.read_text().splitlines() if ln.strip()]
        else:
            paths.append(p)

    start = time.perf_counter()
    crashed: dict = {}
    if args.per_file:
        rows, import_errors, crashed = _per_file(paths, args)
    else:
        collector = _Collector()
        pytest.main(["-p", "no:xdist", "-p", "no:cacheprovider", "--opkit-paddle",
                     "-p", "no:terminal",
                     *(["--opkit-backend", args.backend] if args.backend else []), *paths,
                     *shlex.split(args.pytest_args)], plugins=[collector])
        rows, import_errors = list(collector.rows.values()), collector.import_errors
    wall = time.perf_counter() - start
    summary = summarize(rows)
    summary["wall_s"] = round(wall, 2)
    summary["files"] = len(paths)
    summary["import_errors"] = import_errors
    summary["crashed_files"] = crashed
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"summary": summary, "methods": rows}, f, indent=1)
    for kind in ("optest", "other"):
        s = summary[kind]
        print(f"\n== {kind} methods: {s['methods']} (in scope {s['in_scope']}; runnable {s['runnable']}: passed "
              f"{s['passed']}, failed {s['failed']}; skipped {s['skipped']}), pass rate "
              f"{s['pass_rate']}")
        for title, key in (("skipped", "skip_reasons"), ("failed", "fail_reasons")):
            for reason, n in s[key]:
                print(f"  {title} {n:4d}  {reason}")
    for nodeid, reason in import_errors.items():
        print(f"\nfile not imported: {nodeid}: {reason}")
    for path, why in crashed.items():
        print(f"\nfile crashed (its methods are not counted): {path}: {why}")
    print(f"\nwall time {wall:.1f} s")
    return 0


def _per_file(paths: list, args) -> tuple:
    """Each file measured in a process of its own: (rows, import errors, {file: why it
    crashed})."""



    files = []
    for path in paths:          # a folder: its test files, one process each
        files += ([str(f) for f in sorted(Path(path).rglob("test_*.py"))
                   if not is_paddle_harness_file(f)] if Path(path).is_dir() else [path])
    rows, import_errors, crashed = [], {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for i, path in enumerate(files):
            out = os.path.join(tmp, f"{i}.json")
            cmd = [sys.executable, "-m", "opkit_paddle.compat.measure", os.path.abspath(path),
                   "--json", out, f"--parent={os.getpid()}",
                   f"--pytest-args={args.pytest_args}",
                   *(["--backend", args.backend] if args.backend else [])]
            # in the file's folder, as CTest runs it: its own sys.path.append("../x") holds
            proc = subprocess.run(cmd, capture_output=True, text=True,
                                  cwd=os.path.dirname(os.path.abspath(path)))
            if not os.path.exists(out):
                tail = [ln for ln in proc.stderr.splitlines() if ln.strip()][-1:]
                crashed[path] = (f"exit status {proc.returncode}" +
                                 (f": {tail[0][:200]}" if tail else ""))
                continue
            with open(out) as f:
                got = json.load(f)
            rows += got["methods"]
            import_errors.update(got["summary"]["import_errors"])
    return rows, import_errors, crashed


if __name__ == "__main__":
    sys.exit(main())
