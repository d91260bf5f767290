"""The sweep's summary: counts per op type, every failure classified by cause, and one
Markdown and one JSON file a Paddle maintainer reads in five minutes.

    python -m opkit_paddle.sweep.report REPORT [REPORT ...] --triage FILE \\
        [--markdown OUT.md] [--json OUT.json]

REPORT: the output of `opkit test --paddle --backend paddle --tests DIR --format json` (one
per seed; a folder: its *.json). FILE: the classification (opkit_paddle.sweep.triage).
Prints a line per op type; exit 0 when every failing result is classified, 1 when one is
not (listed as UNCLASSIFIED, in both files too), 2 for a report or classification file that
cannot be read. docs/paddle.md "The sweep's report".
"""
from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from pathlib import Path

from opkit_paddle.sweep.triage import Triage, TriageError, load

__all__ = ["METHODS", "ReportError", "read_reports", "summarize", "markdown", "main"]

#: the checks that are the OpTest classes' own test methods (test_check_output / _grad)
METHODS = ("output", "grad")


class ReportError(ValueError):
    """A sweep report that cannot be read."""


def _json_doc(path: Path) -> dict:
    text = path.read_text(errors="replace")
    start = text.find('{\n "ops"')
    try:
        doc = json.loads(text[start:] if start >= 0 else text)
    except json.JSONDecodeError:
        doc = None
    if not isinstance(doc, dict) or not isinstance(doc.get("ops"), list):
        raise ReportError(f"{path}: not a report of `opkit test --format json`")
    return doc


def read_reports(paths) -> list[tuple[str, dict]]:
    """[(file, report)] of the files and folders given (a folder: its *.json)."""
    out = []
    for p in map(Path, paths):
        files = sorted(p.glob("*.json")) if p.is_dir() else [p]
        if not p.exists() or not files:
            raise ReportError(f"{p}: no such report (a JSON file, or a folder of them)")
        out += [(str(f), _json_doc(f)) for f in files]
    return out


def skip_reason(message: str) -> str:
    """A skip's reason with what varies between classes taken out (file:line, class and op
    names, numbers), so that equal reasons count together."""
    line = (message or "(no reason given)").strip().splitlines()[0]
    line = re.sub(r"^\S+\.py:\d+: ", "", line)
    line = re.sub(r"\bTest\w*", "<class>", line)
    line = re.sub(r"(?<!\w)'[\w.:/@-]+'", "'<name>'", line)
    line = re.sub(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b", "N", line)
    return line[:160]


def _counter(keys) -> dict:
    return {k: 0 for k in keys}


def summarize(reports: list[tuple[str, dict]], triage: Triage) -> dict:
    """The summary (the JSON file's content) of the reports, every failure classified."""
    per_op: dict = {}
    bugs_met: dict = collections.defaultdict(lambda: {"pairs": set(), "results": 0})
    contracts_met: dict = collections.defaultdict(lambda: {"pairs": set(), "results": 0})
    alarms_met: dict = collections.defaultdict(lambda: {"pairs": set(), "results": 0})
    skips = collections.Counter()
    unclassified = []
    seeds = sorted({doc.get("seed") for _, doc in reports if doc.get("seed") is not None})
    for _, doc in reports:
        for op in doc["ops"]:
            name = op["op"]
            row = per_op.setdefault(name, {
                "methods": _counter(("pass", "fail", "skip")),
                "checks": _counter(("pass", "fail", "unconfirmed", "skip")),
                "judged": False, "failing": {}})
            for c in op["checks"]:
                status, check = c["status"], c["check"]
                if check in METHODS:     # an "unconfirmed" method is counted as such
                    row["methods"][status] = row["methods"].get(status, 0) + 1
                else:
                    row["checks"][status] = row["checks"].get(status, 0) + 1
                    row["judged"] |= status in ("pass", "fail", "unconfirmed")
                if status == "skip":
                    skips[skip_reason(c.get("message", ""))] += 1
                if status != "fail":
                    continue
                causes = triage.classify(name, check, c.get("message", ""))
                labels = row["failing"].setdefault(check, [])
                if not causes:
                    unclassified.append({"op": name, "check": check, "case": c.get("case", ""),
                                         "dtype": c.get("dtype", ""),
                                         "message": (c.get("message") or "").splitlines()[0]
                                         if c.get("message") else ""})
                    if "UNCLASSIFIED" not in labels:
                        labels.append("UNCLASSIFIED")
                for cause in causes:
                    met = bugs_met[cause.bug] if cause.bug else \
                        contracts_met[cause.contract] if cause.contract else \
                        alarms_met[cause.false_alarm]
                    met["pairs"].add(f"{name} {check}")
                    met["results"] += 1
                    if cause.label not in labels:
                        labels.append(cause.label)
    judged = sorted(op for op, row in per_op.items() if row["judged"])

    def listed(met: dict, info: dict) -> list:
        out = []
        for key, seen in sorted(met.items()):
            entry = info.get(key, {})
            entry = dict(entry) if isinstance(entry, dict) else {"text": str(entry)}
            out.append(dict(entry, id=key, ops=sorted({p.split()[0] for p in seen["pairs"]}),
                            pairs=sorted(seen["pairs"]), results=seen["results"]))
        return out

    return {
        "sources": [f for f, _ in reports], "seeds": seeds,
        "op_types": {"reported": len(per_op), "judged": len(judged), "judged_list": judged,
                     "not_judged": sorted(set(per_op) - set(judged))},
        "totals": {"methods": _sum(per_op, "methods"), "checks": _sum(per_op, "checks")},
        "bugs": listed(bugs_met, triage.bugs),
        "contracts": listed(contracts_met, triage.contracts),
        "false_alarms": listed(alarms_met, {}),
        "skips": [{"reason": r, "count": n} for r, n in skips.most_common()],
        "unclassified": unclassified,
        "per_op": per_op,
    }


def _sum(per_op: dict, part: str) -> dict:
    total: collections.Counter = collections.Counter()
    for row in per_op.values():
        total.update(row[part])
    return dict(total)


def _cell(text) -> str:
    return str(text or "").replace("|", "\\|").replace("\n", " ")


def markdown(summary: dict, top_skips: int = 15) -> str:
    """The five-minute read: what was judged, the bugs, the contract differences, skips."""
    ops, tot = summary["op_types"], summary["totals"]
    m, c = tot["methods"], tot["checks"]
    lines = [
        "# Paddle's own tests on Paddle's kernels, with opkit's checks", "",
        f"Seeds {', '.join(map(str, summary['seeds'])) or '?'}; reports: "
        f"{', '.join(summary['sources'])}.", "",
        f"**{ops['judged']} op types judged** (of {ops['reported']} reported: an op type is "
        f"judged when one of its OpTest cases ran a check of opkit's beyond its own test "
        f"methods). OpTest methods: {m.get('pass', 0)} pass, {m.get('fail', 0)} fail, "
        f"{m.get('skip', 0)} skip. opkit's checks: {c.get('pass', 0)} pass, "
        f"{c.get('fail', 0)} fail, {c.get('unconfirmed', 0)} unconfirmed, "
        f"{c.get('skip', 0)} skip.", ""]
    if summary["unclassified"]:
        n = len(summary["unclassified"])
        lines += [f"**{n} failing result{'' if n == 1 else 's'} not classified** (listed "
                  "at the end): this summary is not final.", ""]
    lines += ["## Bugs", "", "| id | grade | what | reached through | versions | expected "
              "(and where from) | reproducer | op types (checks) |", "|---|---|---|---|---|---|---|---|"]
    for b in summary["bugs"]:
        lines.append(f"| {_cell(b['id'])} | {_cell(b.get('grade'))} | {_cell(b.get('title'))} "
                     f"| {_cell(b.get('api'))} | {_cell(b.get('versions'))} | "
                     f"{_cell(b.get('expected'))} | {_cell(b.get('reproducer'))} | "
                     f"{_cell(', '.join(b['pairs']))} |")
    if not summary["bugs"]:
        lines.append("| | none met | | | | | | |")
    lines += ["", "## Contract differences (not counted as bugs)", ""]
    lines += [f"- **{_cell(x['id'])}** ({', '.join(x['pairs'])}): {_cell(x.get('text'))}"
              for x in summary["contracts"]] or ["- none met"]
    if summary["false_alarms"]:
        lines += ["", "## Known false alarms of opkit (to be fixed)", ""]
        lines += [f"- {_cell(x['id'])} ({', '.join(x['pairs'])})"
                  for x in summary["false_alarms"]]
    lines += ["", "## Op types", "", "| op type | methods pass / fail / skip | checks pass / "
              "fail / unconfirmed / skip | failing checks: cause |", "|---|---|---|---|"]
    for name, row in sorted(summary["per_op"].items()):
        mm, cc = row["methods"], row["checks"]
        failing = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(row["failing"].items()))
        lines.append(f"| {name}{'' if row['judged'] else ' (not judged)'} | {mm['pass']} / "
                     f"{mm['fail']} / {mm['skip']} | {cc.get('pass', 0)} / {cc.get('fail', 0)} "
                     f"/ {cc.get('unconfirmed', 0)} / {cc.get('skip', 0)} | {_cell(failing)} |")
    lines += ["", f"## Skips by reason (the {top_skips} most frequent of "
              f"{len(summary['skips'])})", "", "| count | reason |", "|---|---|"]
    lines += [f"| {s['count']} | {_cell(s['reason'])} |" for s in summary["skips"][:top_skips]]
    if summary["unclassified"]:
        lines += ["", "## UNCLASSIFIED failures", ""]
        lines += [f"- {u['op']} {u['check']} ({u['case']}, {u['dtype'] or '-'}): "
                  f"{_cell(u['message'])[:300]}" for u in summary["unclassified"]]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m opkit_paddle.sweep.report",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("reports", nargs="+", help="JSON reports of the sweep, or folders")
    parser.add_argument("--triage", required=True, help="the classification file (JSON)")
    parser.add_argument("--markdown", metavar="OUT.md", help="write the Markdown summary")
    parser.add_argument("--json", metavar="OUT.json", help="write the JSON summary")
    args = parser.parse_args(argv)
    try:
        summary = summarize(read_reports(args.reports), load(args.triage))
    except (ReportError, TriageError) as exc:
        print(f"opkit_paddle.sweep.report: {exc}", file=sys.stderr)
        return 2
    for name, row in sorted(summary["per_op"].items()):
        failing = "; ".join(f"{k}: {', '.join(v)}" for k, v in sorted(row["failing"].items()))
        print(f"{name}: methods {row['methods']}, checks {row['checks']}"
              + (f" -- {failing}" if failing else "") + ("" if row["judged"] else
                                                         " (not judged)"))
    print(f"op types judged: {summary['op_types']['judged']} of "
          f"{summary['op_types']['reported']}; bugs met: {len(summary['bugs'])}; contract "
          f"differences: {len(summary['contracts'])}; unclassified failures: "
          f"{len(summary['unclassified'])}")
    if args.markdown:
        Path(args.markdown).write_text(markdown(summary))
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    for u in summary["unclassified"]:
        print(f"UNCLASSIFIED: {u['op']} {u['check']} ({u['case']}, {u['dtype'] or '-'}): "
              f"{u['message'][:200]}")
    return 1 if summary["unclassified"] else 0


if __name__ == "__main__":
    sys.exit(main())
