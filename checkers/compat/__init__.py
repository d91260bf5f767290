"""Op-description compatibility checker (`opkit compat`): pure JSON in, findings out.

Imports neither numpy nor the opkit framework, so it runs on dumps that Paddle or opkit
wrote, without loading any op.
"""
from .allow import AllowEntry, apply_allow, load_allow, parse_allow
from .compare import CompatReport, compare, same_value
from .kinds import (ALL_KINDS, ALLOWABLE_KINDS, ATTR_TYPE_NAMES, BREAKING_KINDS, NOTE_KINDS,
                    PROGRAM_KINDS, VERSION_KINDS)
from .load import DescError, load_op_descs, loads_op_descs, validate
from .report import render_json, render_text, text_report
from .versions import apply_versions

__all__ = [
    "ALL_KINDS", "ATTR_TYPE_NAMES", "AllowEntry", "BREAKING_KINDS", "CompatReport",
    "DescError", "NOTE_KINDS", "apply_allow", "compare", "load_allow", "load_op_descs",
    "loads_op_descs", "parse_allow", "render_json", "render_text", "same_value",
    "text_report", "validate", "compare_files", "apply_versions", "ALLOWABLE_KINDS",
    "PROGRAM_KINDS", "VERSION_KINDS",
]
# `opkit compat --programs` lives in checkers.compat.programs: it imports the framework, so
# nothing here imports it.


def compare_files(old_path, new_path, allow_path=None, today=None,
                  require_checkpoints: bool = False) -> CompatReport:
    """Load both dumps (and the allow list), compare, apply op versions and the allow list."""
    old = load_op_descs(old_path)
    new = load_op_descs(new_path)
    entries = load_allow(allow_path) if allow_path is not None else []
    report = compare(old, new)
    apply_versions(report, old, new, require_checkpoints)
    if entries:
        apply_allow(report, entries, today)
    return report
