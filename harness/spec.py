"""EVERY extension point of the harness, declared in one place (like pytest's hookspec).

Nothing here runs a check; this module only says what can be plugged in, and the code that
reads an extension point reads it through the accessors below, so an undeclared name is an
error instead of a silent `getattr` default.

1. Entry-point groups (installed packages plug in without being named).
2. `Check` hooks: what a check declares and may override (harness.checks.base.Check).
3. Derived-case families: the variant names a check may ask for (harness.inputs.variants),
   and the cases the checks that derive their own read from harness.inputs.
4. OpTest knobs: class attributes an OpTest may set to tell the harness more about its op.
5. Module knobs: names a test module may define.
6. Backends: implementations of the op seam (BACKEND_GROUP's entry points, instances of
   harness.backend.contract.Backend; harness.backend.dispatch dispatches to the run's backend).
"""
from __future__ import annotations

__all__ = ["ENTRY_POINT_GROUPS", "BACKEND_GROUP", "COMPAT_GROUP", "COMPAT_PROTOCOL", "PLUGIN_ATTRIBUTES",
           "CHECK_ATTRIBUTES", "CHECK_HOOKS", "VARIANT_FAMILIES", "INPUT_MODULES",
           "OPTEST_KNOBS", "MODULE_KNOBS", "knob", "module_knob", "op_level_hook"]

#: group -> what an entry point of the group names
ENTRY_POINT_GROUPS = {
    "opkit.ops": "a module (or package) whose import registers ops (opkit.plugins)",
    "opkit.checks": "a harness.checks.base.Check instance or subclass, or a function "
                    "(case, context) -> [CheckResult] (harness.checks.catalog)",
    "opkit.backends": "a harness.backend.contract.Backend instance: the backend of the "
                      "entry point's name (`opkit test --backend NAME`; harness.backend.dispatch)",
    "opkit.compat": "a compatibility mode (COMPAT_PROTOCOL) of the entry point's name NAME: "
                    "`--opkit-NAME` (pytest), OPKIT_NAME=1 (harness.options.compat_env)",
}
BACKEND_GROUP = "opkit.backends"
COMPAT_GROUP = "opkit.compat"

#: the backend contract is a typed class: harness.backend.contract (Backend, PreparedOp);
#: loading a backend's entry point must not import its framework

#: a compatibility mode (a framework's own test files run unchanged), an entry point of
#: COMPAT_GROUP (opkit_paddle's "paddle": `--opkit-paddle`, `opkit test --paddle`):
#: name -> (signature, meaning)
COMPAT_PROTOCOL = {
    "activate": ("(backend)", "turn it on; with its own backend the test files get the real "
                              "framework"),
    "is_active": ("() -> bool", "it is on in this process"),
    "is_harness_file": ("(path) -> bool", "a file of the framework's own test harness"),
    "pytest_hooks": ("() -> module", "the pytest hooks it registers"),
    "title": ("str", "its name in messages (\"Paddle-compatibility mode\")"),
}

#: what a backend plugin (an entry point of BACKEND_GROUP) may carry besides the contract:
#: attribute -> meaning
PLUGIN_ATTRIBUTES = {
    "optest_surface": "(base) -> a subclass of base: harness.OpTest with the framework's "
                      "spelling of the OpTest API (Paddle's: check_output_with_place, ...)",
}

#: Check class attributes: name -> meaning (harness.checks.base.Check holds the defaults)
CHECK_ATTRIBUTES = {
    "name": "the report's and --checks' name (== the module name of a built-in check)",
    "description": "one line for the checks table",
    "order": "column order in the report",
    "variants": "the derived-case families it judges (VARIANT_FAMILIES; 'case' = as written)",
    "default": "run by `opkit test` without --checks",
    "scope": "'case': every case; 'op': once per op, on its first case",
    "needs_float": "skip with a reason when the case has no float input",
    "notes_on_pass": "`opkit test -v` prints the message of a pass as a note (what was found)",
    "needs": "the backend capabilities it needs (harness.backend.contract.CAPABILITIES): "
             "on a backend that lacks one it skips with the backend's reason",
}

#: Check methods a check may define or override: name -> (signature, meaning)
CHECK_HOOKS = {
    "applies": ("(case, context) -> str | None", "a skip reason, or None when it applies"),
    "verdict": ("(derived, context) -> [CheckResult]", "judge one derived case (required)"),
    "op_results": ("(op, tests, context) -> [CheckResult]",
                   "optional: judge every OpTest case of an op at once, in one task per op "
                   "(e.g. `state`); a check without it is judged case by case"),
}

#: derived-case families: name -> what it derives (harness.inputs.variants.VARIANTS maps
#: each to its module)
VARIANT_FAMILIES = {
    "case": "the case as written",
    "default_attrs": "attrs left at the proto's defaults",
    "layout": "non-contiguous inputs (transposed, strided, Fortran order)",
    "empty": "zero-size inputs",
    "extremal": "large magnitudes, zero rows, tiny values",
    "kinks": "inputs on the op's non-differentiable points",
    "repeated_input": "one variable in two slots, or twice in a duplicable slot",
    "attr_values": "other values of each attr inside its declared domain",
    "edge_shapes": "shapes at the edges (one element, one row, ...)",
}

#: derived cases a check or runner makes itself, all in harness.inputs: module -> what
#: (bare names: a dotted module name here would be an import of it, tests/test_boundaries.py)
INPUT_MODULES = {
    "explore": "explore/against: edge values, attrs and shapes over the declared domains, "
               "and their hypothesis strategy (a failure shrinks)",
    "strategies": "hypothesis strategies: arrays, attrs, LoD tensors; falsify",
    "production": "indistinguishable: input sets never seen, production cotangents and the "
                  "process conditions a kernel can read (issue 48)",
}

#: OpTest class attributes the harness reads: name -> (default, meaning)
OPTEST_KNOBS = {
    "reference": (None, "reference(inputs, attrs) -> outputs: an independent implementation, "
                        "so explore and fuzz can derive cases and judge them"),
    "to_case": (None, "to_case() -> Case: build the Case yourself instead of from "
                      "op_type/inputs/attrs/outputs"),
    "opkit_skip": (None, "{check: reason}: checks that do not apply to this OpTest"),
    "distribution": (None, "a harness.judging.distributions law the outputs of a random op follow"),
    "opkit_sparse_inputs": ((), "input names the `sparse` check feeds as SelectedRows"),
    "grad_check_mode": (None, "numeric gradient mode: 'auto', 'exact', 'fast' or 'dense'"),
    "opkit_complexity": ("linear", "how time and peak memory grow with the input size "
                                   "(harness.checks.laws.scaling.COMPLEXITIES: 'linear', 'n log n', "
                                   "'quadratic', 'cubic'); `trace`'s scaling part "
                                   "(OPKIT_LAWS_DEEP=1) bounds t(4N)/t(N) by it"),
}

#: names a test module may define: name -> (default, meaning)
MODULE_KNOBS = {
    "OPKIT_EXEMPT": ({}, "{op: reason}: ops of the module that have no OpTest on purpose"),
}


def _declared(table: dict, table_name: str, what: str, owner, name: str):
    if name not in table:
        raise KeyError(f"undeclared {what} knob {name!r} (harness.spec.{table_name})")
    value = getattr(owner, name, None)
    return table[name][0] if value is None else value


def knob(test, name: str):
    """The OpTest knob `name` of `test` (its declared default when unset)."""
    return _declared(OPTEST_KNOBS, "OPTEST_KNOBS", "OpTest", test, name)


def module_knob(module, name: str):
    """The module knob `name` of a test module (its declared default when unset)."""
    return _declared(MODULE_KNOBS, "MODULE_KNOBS", "module", module, name)


def op_level_hook(check):
    """The check's `op_results` hook (CHECK_HOOKS), or None."""
    hook = getattr(check, "op_results", None)
    return hook if callable(hook) else None
