"""`--format sarif`: SARIF 2.1.0, with the rule metadata."""
from __future__ import annotations

import json

from checkers.lint.catalog import RULES, help_uri

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def document(findings: list) -> dict:
    try:
        from opkit.version import __version__ as version
    except Exception:  # noqa: BLE001
        version = "unknown"
    codes = list(RULES)
    rules = [{"id": code, "name": name, "shortDescription": {"text": short},
              "fullDescription": {"text": _full(code, short)}, "helpUri": help_uri(code),
              "defaultConfiguration": {"level": "error"}} for code, (name, short) in RULES.items()]
    results = [{"ruleId": f.rule, "ruleIndex": codes.index(f.rule), "level": "error",
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": f.path, "uriBaseId": "%SRCROOT%"},
                    "region": {"startLine": f.line, "startColumn": f.col}}}]}
               for f in findings]
    return {"$schema": SCHEMA, "version": "2.1.0",
            "runs": [{"tool": {"driver": {"name": "opkit-lint", "version": version,
                                          "informationUri": help_uri("OPK000").split("#")[0],
                                          "rules": rules}},
                      "results": results}]}


def _full(code: str, short: str) -> str:
    try:
        from checkers.lint.rules import CATALOG_RULES
    except Exception:  # noqa: BLE001
        return short
    rule = next((r for r in CATALOG_RULES if r.code == code), None)
    return rule.rationale if rule is not None and rule.rationale else short


def render(findings: list, files: int, stream) -> None:
    stream.write(json.dumps(document(findings), indent=2) + "\n")
