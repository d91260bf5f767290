"""The Finding record shared by the engine, the cache and the report formats."""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int  # 1-based
    col: int  # 1-based
    rule: str
    name: str
    message: str
    fixable: bool = False

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "Finding":
        return cls(**{k: data[k] for k in ("path", "line", "col", "rule", "name", "message")},
                   fixable=bool(data.get("fixable", False)))
