"""Split units of work (ops, test files) into N disjoint parts for a CI matrix: sorted units
dealt round-robin, or, with recorded durations (`{"durations": {unit: seconds}}`), longest
first to the part with the least time so far (unknown units count as the median).
Deterministic on every machine.
"""
from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

__all__ = ["parse_shard", "split", "part", "read_durations", "write_durations", "ShardError"]


class ShardError(ValueError):
    pass


def parse_shard(text: str | None, flag: str = "--shard") -> tuple[int, int] | None:
    if not text:
        return None
    try:
        k, n = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise ShardError(f"{flag} {text!r}: expected K/N, e.g. 2/4") from None
    if n < 1 or not 1 <= k <= n:
        raise ShardError(f"{flag} {text!r}: need 1 <= K <= N")
    return k, n


def split(units: list[str], n: int, durations: dict[str, float] | None = None) -> list[list[str]]:
    """The N parts (each sorted) of the distinct units."""
    units = sorted(set(units))
    known = {u: float(d) for u, d in (durations or {}).items() if u in set(units)}
    if not known:
        return [units[i::n] for i in range(n)]
    parts: list[list[str]] = [[] for _ in range(n)]
    default = statistics.median(known.values())
    cost = {u: known.get(u, default) for u in units}
    totals = [0.0] * n
    for u in sorted(units, key=lambda u: (-cost[u], u)):
        i = min(range(n), key=lambda j: (totals[j], j))
        parts[i].append(u)
        totals[i] += cost[u]
    return [sorted(p) for p in parts]


def part(units: list[str], spec: tuple[int, int] | None,
         durations: dict[str, float] | None = None) -> list[str]:
    """The units of part K of N (in the order given); all of them when spec is None."""
    if spec is None:
        return list(units)
    k, n = spec
    chosen = set(split(units, n, durations)[k - 1])
    return [u for u in units if u in chosen]


def read_durations(path: Path | None) -> dict[str, float]:
    """{unit: seconds} from the file (empty when it does not exist)."""
    if path is None or not Path(path).is_file():
        return {}
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        table = data.get("durations", data) if isinstance(data, dict) else {}
        return {str(k): float(v) for k, v in table.items()
                if isinstance(v, (int, float)) and v >= 0}
    except (OSError, ValueError, AttributeError) as exc:
        raise ShardError(f"{path}: cannot read durations: {exc}") from None


def durations_problem(path: Path) -> str | None:
    """Why the durations file cannot be written (None when it can): checked before a run,
    so that a bad path is a usage error and not a traceback after every check ran."""
    path = Path(path)
    if path.is_dir():
        return f"{path} is a folder, not a file"
    folder = path.parent
    if not folder.is_dir():
        return f"folder {folder} does not exist"
    if path.exists() and not os.access(path, os.W_OK) or not os.access(folder, os.W_OK):
        return f"{path} is not writable"
    return None


def write_durations(path: Path, durations: dict[str, float], merge: bool = True) -> None:
    """Write (merged into what the file holds) {unit: seconds}, sorted, 3 decimals."""
    table = read_durations(path) if merge else {}
    table.update({k: round(float(v), 3) for k, v in durations.items()})
    Path(path).write_text(json.dumps({"durations": dict(sorted(table.items()))}, indent=1)
                          + "\n", encoding="utf-8")
