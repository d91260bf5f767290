"""Measure how many of Paddle's OpTest methods pass in opkit's Paddle-compatibility mode.

    python -m harness.paddle_compat.measure PATH... [--json OUT] [--pytest-args "ARGS"]
                                                    [--backend paddle]

Runs pytest with `--opkit-paddle` over the folders / files (one process, no xdist; `@LIST`
reads paths from a file, one a line, relative to the file's folder) and sorts every test
method: OpTest methods (classes derived from `op_test.OpTest`) and other test methods
(Paddle's layer/API tests), each into passed / failed / skipped, skips and failures grouped
by their reason (the first line of the message, numbers blanked), and lists the files that
could not be imported (each with the missing name). Prints a summary; with --json writes
every method's outcome. `--backend paddle` runs the ops on PaddlePaddle's own kernels (the
test files import the real `paddle`; harness.paddle_compat).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter


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
    parser = argparse.ArgumentParser(prog="python -m harness.paddle_compat.measure")
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--pytest-args", default="", metavar="ARGS")
    parser.add_argument("--backend", choices=["opkit", "paddle"], default=None,
                        help="whose kernels run the ops (default opkit's, or $OPKIT_BACKEND)")
    args = parser.parse_args(argv)
    import shlex
    from pathlib import Path

    import pytest

    paths = []
    for p in args.paths:
        if p.startswith("@"):
            listing = Path(p[1:])
            paths += [str(listing.parent / ln.strip()) for ln in
                      listing.read_text().splitlines() if ln.strip()]
        else:
            paths.append(p)

    collector = _Collector()
    start = time.perf_counter()
    pytest.main(["-p", "no:xdist", "-p", "no:cacheprovider", "--opkit-paddle",
                 "-p", "no:terminal",
                 *(["--opkit-backend", args.backend] if args.backend else []), *paths,
                 *shlex.split(args.pytest_args)], plugins=[collector])
    wall = time.perf_counter() - start
    rows = list(collector.rows.values())
    summary = summarize(rows)
    summary["wall_s"] = round(wall, 2)
    summary["files"] = len(paths)
    summary["import_errors"] = collector.import_errors
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
    for nodeid, reason in collector.import_errors.items():
        print(f"\nfile not imported: {nodeid}: {reason}")
    print(f"\nwall time {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
