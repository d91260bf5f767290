"""Names shared by the compat checker: Paddle's AttrType numbers and the finding kinds."""
from __future__ import annotations

# Paddle's framework.proto AttrType enum (API.md section 8).
ATTR_TYPE_NAMES: dict[int, str] = {
    0: "int", 1: "float", 2: "string", 3: "ints", 4: "floats", 5: "strings",
    6: "bool", 7: "bools", 8: "block", 9: "long", 10: "blocks", 11: "longs",
    12: "float64s", 13: "var", 14: "vars", 15: "float64", 16: "scalar", 17: "scalars",
}

FLOAT32_TYPES = frozenset({1, 4})          # FLOAT, FLOATS: stored as float32 by Paddle
FLOAT64_TYPES = frozenset({12, 15})        # FLOAT64S, FLOAT64
SCALAR_TYPES = frozenset({16, 17})         # SCALAR, SCALARS: any number


def type_name(type_id: int) -> str:
    return ATTR_TYPE_NAMES.get(type_id, f"AttrType({type_id})")


VAR_FLAGS = ("duplicable", "dispensable", "intermediate", "extra", "quant")
ATTR_FLAGS = ("generated", "extra", "quant")

SECTIONS = (("Inputs", "input"), ("Outputs", "output"), ("Attrs", "attr"))

# Kinds that break (API.md section 9).  Every one of them may also show up as a note
# where the rules in docs/compat.md say the change is harmless (an `extra` attr, ...).
BREAKING_KINDS = (
    "op-deleted", "input-deleted", "output-deleted", "attr-deleted",
    "input-added-required", "output-added-required", "attr-added-no-default",
    "attr-type-changed", "attr-default-changed",
    "input-flag-changed", "output-flag-changed", "attr-flag-changed",
)
NOTE_KINDS = ("op-added", "input-added", "output-added", "attr-added")
# With op versions (docs/compat.md): `documented` is a note; `undocumented-change` is a note,
# breaking with --require-checkpoints.
VERSION_KINDS = ("documented", "undocumented-change")
# With --programs DIR: `behavior-changed` (breaking unless a newer bugfix checkpoint covers the
# op), `program-incompatible` (a saved program no longer loads or fits NEW's descs: breaking),
# `program-checked` (a note per saved program that passed).
PROGRAM_KINDS = ("behavior-changed", "program-incompatible", "program-checked")
# Declared parallel signatures (checkers.compat.sbp): `sbp-removed` breaks, `sbp-added` is
# a note.
SBP_KINDS = ("sbp-removed", "sbp-added")
# Breaking kinds an allow-list entry may approve.
ALLOWABLE_KINDS = BREAKING_KINDS + ("undocumented-change", "behavior-changed",
                                    "program-incompatible", "sbp-removed")
ALLOW_KINDS = ("allow-expired", "allow-unused")
ALL_KINDS = BREAKING_KINDS + NOTE_KINDS + VERSION_KINDS + PROGRAM_KINDS + SBP_KINDS

# Declared domains (docs/domains.md): an attr's or input's domain made smaller breaks saved
# programs that use the values left out (`domain-narrowed`, breaking, allowable); a larger
# one is a note (`domain-widened`). Compared only where both descriptions declare one.
DOMAIN_KINDS = ("domain-narrowed", "domain-widened")
ALLOWABLE_KINDS = ALLOWABLE_KINDS + ("domain-narrowed",)
ALL_KINDS = ALL_KINDS + DOMAIN_KINDS
