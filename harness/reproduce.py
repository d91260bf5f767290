"""Reproducers: a case as a ready-to-paste OpTest (`format_optest`), re-run in a fresh
interpreter (harness.fresh) before it is printed (`confirm`: True when it fails there too,
False when it passes, None without an answer). Imports no check registry, so the `explore`
check can use it.
"""
from __future__ import annotations

import importlib.util
import inspect
import os
import re as _re
import sys
import tempfile
from pathlib import Path

import numpy as np

from harness import fresh
from harness.case import case_from_test
from harness.discovery import instantiate
from harness.optest_methods import run_optest_methods
from harness.options import DEFAULT_SEED  # noqa: I001
from harness.values import fmt_value
from opkit.registry import op_info

__all__ = ["confirm", "verify", "format_optest", "NOT_REPRODUCED"]

OWN_CHECKS = ("output", "grad")   # what `verify` judges by itself: the reproducer's methods

NOT_REPRODUCED = ("(re-run in a fresh process, this case passes: the failure depends on "
                  "earlier runs in the process)")


def verify(spec: dict, run_check=None) -> bool:
    """In the fresh interpreter (harness.fresh): load the kernels' modules, run the
    reproducer's OpTest methods and, for another check, that check on its case
    (`run_check(case, check, seed) -> [CheckResult]`, given by the verifier that names it);
    whether something failed."""
    import opkit  # noqa: F401

    for name, path in spec["modules"]:
        if name in sys.modules:
            continue
        try:
            __import__(name)
            continue
        except Exception:  # noqa: BLE001 - not importable by name: from its file
            pass
        s = importlib.util.spec_from_file_location(name, path)
        m = importlib.util.module_from_spec(s)
        sys.modules[name] = m
        s.loader.exec_module(m)
    ns: dict = {}
    with open(spec["file"]) as f:
        exec(compile(f.read(), spec["file"], "exec"), ns)
    test = instantiate(ns[spec["cls"]], spec["seed"])
    results = run_optest_methods(test, spec["cls"], spec["seed"])
    if spec["check"] not in OWN_CHECKS:
        if run_check is None:
            raise ValueError(f"harness.reproduce.verify judges {' and '.join(OWN_CHECKS)} "
                             f"only, not {spec['check']!r}")
        results = run_check(case_from_test(test), spec["check"], spec["seed"])
    return any(r.status == "fail" for r in results)


def _kernel_modules(op_types) -> list:
    out = []
    for t in op_types:
        try:
            entries = op_info(t).kernels.values()
        except Exception:  # noqa: BLE001 - an op without kernels
            continue
        for e in entries:
            name = getattr(e.fn, "__module__", None)
            mod = sys.modules.get(name or "")
            path = getattr(mod, "__file__", None)
            if name and path and (name, path) not in out:
                out.append((name, path))
    return out


def confirm(op_types, source: str, cls_name: str, check: str, seed: int = DEFAULT_SEED,
            timeout: float = 120.0, verifier: str = "harness.reproduce:verify"):
    """Whether the reproducer `source` (class `cls_name`) fails `check` in a fresh
    interpreter: True, False, or None (no answer). `verifier` ("module:function", run there
    on the spec) is `verify` by default, which judges `output` and `grad`; another check
    needs one that can run it (harness.checking:verify_reproducer)."""
    if check not in OWN_CHECKS and verifier == "harness.reproduce:verify":
        raise ValueError(f"confirm({check!r}): harness.reproduce.verify judges "
                         f"{' and '.join(OWN_CHECKS)} only; pass a verifier that runs "
                         f"{check!r} (harness.checking:verify_reproducer)")
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "repro_case.py")
        Path(path).write_text(source, encoding="utf-8")
        spec = {"modules": _kernel_modules(op_types), "file": path, "cls": cls_name,
                "check": check, "seed": seed}
        try:
            return bool(fresh.run(verifier, spec, timeout=timeout))
        except fresh.FreshError as exc:
            return True if exc.raised else None


# -- the reproducer's text --------------------------------------------------------------------
def _literal(value, indent: int = 0) -> str:
    if isinstance(value, np.ndarray):
        prefix = " " * indent + "np.array("
        body = np.array2string(value, separator=", ", threshold=10 ** 6,
                               floatmode="unique", max_line_width=96, prefix=prefix)
        body = _re.sub(r"(?<![\w.])(nan|inf)\b", r"np.\1", body)
        return f"np.array({body}, dtype=\"{value.dtype}\")"
    if isinstance(value, float) and not np.isfinite(value):
        return "np.nan" if np.isnan(value) else ("np.inf" if value > 0 else "-np.inf")
    if isinstance(value, tuple) and len(value) == 2:
        return f"({_literal(value[0], indent + 1)}, {value[1]!r})"
    if isinstance(value, list):
        return "[" + ", ".join(f"({n!r}, {_literal(v, indent + 3 + len(repr(n)))})"
                               for n, v in value) + "]"
    return fmt_value(value)


def format_optest(case, base_name: str = "TestFuzz") -> str:
    """The case as a ready-to-paste OpTest class."""
    def slots(values) -> list[str]:
        return [f"            {slot!r}: {_literal(value, 14 + len(repr(slot)))},"
                for slot, value in values.items()]

    lines = ["import numpy as np", "from harness import OpTest", "", "",
             f"class {base_name}Minimal(OpTest):",
             "    def setUp(self):",
             f"        self.op_type = {case.op_type!r}",
             "        self.inputs = {", *slots(case.inputs), "        }",
             f"        self.attrs = {fmt_value(case.attrs)}",
             "        self.outputs = {", *slots(case.outputs), "        }",
             "", "    def test_check_output(self):", "        self.check_output()"]
    if case.grad_inputs:
        names = list(case.grad_outputs) or [
            slot for slot, v in case.outputs.items()
            if np.asarray(v[0] if isinstance(v, tuple) else v).dtype.kind == "f"][:1]
        outs = names[0] if len(names) == 1 else names
        lines += ["", "    def test_check_grad(self):",
                  f"        self.check_grad({list(case.grad_inputs)!r}, {outs!r})"]
    return "\n".join(lines) + "\n"


def _takes_inputs_and_attrs(fn) -> bool:
    try:
        inspect.signature(fn).bind({}, {})
    except TypeError:
        return False
    except ValueError:      # no signature (a builtin): assume it does
        return True
    return True
