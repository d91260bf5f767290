"""Rule codes, names and one-line descriptions.

This table is import-light on purpose (no libcst): configuration checking and the
warm-cache path use it without loading the rule implementations.
"""
from __future__ import annotations

RULES: dict[str, tuple[str, str]] = {
    "OPK000": ("syntax-error", "a file that cannot be parsed or analysed (the other files are still checked)"),
    "OPK001": ("input-mutation", "a kernel writes to an input, or to a view or alias of one"),
    "OPK002": ("empty-enforce-message",
               "an `enforce*` call or `errors.*` error without a message, or with an empty/blank one"),
    "OPK003": ("missing-float-double-kernel",
               "an op registers kernels on a place without both `float32` and `float64`"),
    "OPK004": ("output-shares-input",
               "a kernel hands an input (or a view of it) out as an output, with no `inplace` declared "
               "for that pair"),
    "OPK005": ("unchecked-kernel-dtype",
               "`get_expected_kernel_type` reads an input's dtype directly instead of "
               "`indicate_var_data_type`"),
    "OPK006": ("op-file-layout",
               "`<x>_op.py` registers a forward op other than `x`, or more than one forward op"),
    "OPK007": ("slot-naming", "input/output names not UpperCamelCase, or attr names not snake_case"),
    "OPK008": ("missing-op-comment", "an `OpMaker` without an `add_comment`, or with an empty one"),
}

# Substrings one of which must occur in a file for a rule to have anything to say. A cheap
# pre-check made before libcst is even imported, never the decision itself (that is made on
# the syntax tree). Rules read their triggers from here.
ERROR_NAMES = ("InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists", "ResourceExhausted",
               "PreconditionNotMet", "PermissionDenied", "ExecutionTimeout", "Unimplemented",
               "Unavailable", "Fatal", "External", "EnforceNotMet")
TRIGGERS: dict[str, tuple[str, ...]] = {
    "OPK001": ("register_kernel",),
    "OPK002": ("enforce", *ERROR_NAMES),
    "OPK003": ("register_kernel",),
    "OPK004": ("register_kernel",),
    "OPK005": ("get_expected_kernel_type",),
    "OPK006": ("register_operator",),
    "OPK007": ("add_input", "add_output", "add_attr"),
    "OPK008": ("OpMaker",),
}
FILE_SUFFIX = {"OPK006": "_op.py"}


def may_apply(code: str, filename: str, text: str) -> bool:
    suffix = FILE_SUFFIX.get(code)
    if suffix and not filename.endswith(suffix):
        return False
    return any(t in text for t in TRIGGERS.get(code, ()))


HELP_URI = "https://github.com/opkit/opkit/blob/main/docs/rules.md#{anchor}"


def rule_name(code: str) -> str:
    return RULES[code][0]


def help_uri(code: str) -> str:
    return HELP_URI.format(anchor=f"{code.lower()}-{RULES[code][0]}")


def expand(selector: str) -> list[str]:
    """Codes matched by a selector: a code, a code prefix (`OPK00`), a rule name, or `ALL`."""
    sel = selector.strip()
    if sel.upper() == "ALL":
        return list(RULES)
    by_name = [code for code, (name, _) in RULES.items() if name == sel]
    if by_name:
        return by_name
    return [code for code in RULES if code.startswith(sel.upper()) and sel[:3].upper() == "OPK"]
