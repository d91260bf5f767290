"""Reproducers: a case as a ready-to-paste OpTest (`format_optest`), re-run in a fresh
interpreter (harness.processes.fresh) before it is printed (`confirm`: True when it fails there too,
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

from harness import options
from harness.backend import dispatch as backends
from harness.processes import fresh
from harness.backend.case import case_from_test
from harness.selecting.discovery import instantiate
from harness.optest.methods import run_optest_methods
from harness.options import DEFAULT_SEED  # noqa: I001
from harness.reporting.values import fmt_value

__all__ = ["confirm", "verify", "format_optest", "shown_optest", "NOT_REPRODUCED",
           "SMALL_ARRAY", "cases_dir"]

SMALL_ARRAY = 32    # a reproducer's array of more elements is printed as a summary; the
                    # whole case goes to a file under cases_dir() (shown_optest)

OWN_CHECKS = ("output", "grad")   # what `verify` judges by itself: the reproducer's methods

NOT_REPRODUCED = ("(re-run in a fresh process, this case passes: the failure depends on "
                  "earlier runs in the process)")


def verify(spec: dict, run_check=None) -> bool:
    """In the fresh interpreter (harness.processes.fresh): load the kernels' modules, run the
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
            raise ValueError(f"harness.optest.reproduce.verify judges {' and '.join(OWN_CHECKS)} "
                             f"only, not {spec['check']!r}")
        results = run_check(case_from_test(test), spec["check"], spec["seed"])
    return any(r.status == "fail" for r in results)


def _kernel_modules(op_types) -> list:
    out = []
    for t in op_types:
        try:
            entries = backends.declared().kernel_functions(t)
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
            timeout: float = 120.0, verifier: str = "harness.optest.reproduce:verify"):
    """Whether the reproducer `source` (class `cls_name`) fails `check` in a fresh
    interpreter: True, False, or None (no answer). `verifier` ("module:function", run there
    on the spec) is `verify` by default, which judges `output` and `grad`; another check
    needs one that can run it (harness.executing.in_process:verify_reproducer)."""
    if check not in OWN_CHECKS and verifier == "harness.optest.reproduce:verify":
        raise ValueError(f"confirm({check!r}): harness.optest.reproduce.verify judges "
                         f"{' and '.join(OWN_CHECKS)} only; pass a verifier that runs "
                         f"{check!r} (harness.executing.in_process:verify_reproducer)")
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


def _arrays(value) -> list:
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, tuple) and len(value) == 2:
        return _arrays(value[0])
    if isinstance(value, list):
        return [a for item in value if isinstance(item, tuple) and len(item) == 2
                for a in _arrays(item[1])]
    return []


def _is_small(value) -> bool:
    return all(a.size <= SMALL_ARRAY for a in _arrays(value))


def _summary(a: np.ndarray) -> str:
    """shape, dtype, min/max and the first values of a large array, in one line."""
    flat = a.reshape(-1)
    text = f"shape {tuple(a.shape)} {a.dtype.name}"
    if a.size and a.dtype.kind in "fiub":
        finite = flat[np.isfinite(flat)] if a.dtype.kind == "f" else flat
        if finite.size:
            low, high = finite.min().item(), finite.max().item()
            text += (f", min {low:.4g}, max {high:.4g}" if a.dtype.kind == "f" else
                     f", min {low}, max {high}")
        first = ", ".join(f"{float(x):.4g}" if a.dtype.kind == "f" else str(x.item())
                          for x in flat[:5])
        text += f": [{first}, ...]"
    return text


def _short(value) -> tuple[str, str]:
    """(a Python expression, a comment) for one slot's value: `...` and a summary for a
    large array."""
    if isinstance(value, np.ndarray):
        return ("...", _summary(value)) if value.size > SMALL_ARRAY else (_literal(value), "")
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], np.ndarray):
        expr, note = _short(value[0])
        return f"({expr}, {value[1]!r})", note + (f", LoD lengths {value[1]!r}" if note else "")
    if isinstance(value, list):
        parts = [(n, _short(v)) for n, v in value]
        return ("[" + ", ".join(f"({n!r}, {e})" for n, (e, _) in parts) + "]",
                "; ".join(f"{n}: {c}" for n, (_, c) in parts if c))
    return _literal(value), ""


def cases_dir() -> Path:
    """Where a reproducer too large to print is saved: $OPKIT_CASES_DIR, else the temp
    folder's opkit-cases (not the working directory: a run's `trace` check watches it for
    files an op leaves behind, and other workers run beside it)."""
    given = options.env_text("OPKIT_CASES_DIR")
    for folder in ([given] if given else []) + [os.path.join(tempfile.gettempdir(),
                                                             "opkit-cases")]:
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return Path(folder)
    return Path(tempfile.gettempdir())


def shown_optest(case, base_name: str, text: str) -> str:
    """What a report prints of a reproducer (`text`, format_optest's): all of it when every
    array has at most SMALL_ARRAY elements; else the same class with `...` and a one-line
    summary (shape, dtype, min, max, first values) for each large array, headed by the
    path of a file holding `text` in full (named by its content: the same case, the same
    file)."""
    values = list(case.inputs.values()) + list(case.outputs.values())
    if all(_is_small(v) for v in values):
        return text
    import hashlib

    name = f"{base_name}Minimal_{hashlib.sha1(text.encode()).hexdigest()[:10]}.py"
    try:
        path = cases_dir() / name
        path.write_text(text, encoding="utf-8")
        where = os.path.relpath(path) if not os.path.relpath(path).startswith("..") else path
        head = f"# the whole case (every value) is saved in {where}"
    except OSError as exc:
        head = f"# (the whole case could not be saved: {exc})"

    def slots(values) -> list[str]:
        out = []
        for slot, value in values.items():
            expr, note = _short(value)
            out.append(f"            {slot!r}: {expr},{'  # ' + note if note else ''}")
        return out

    short = format_optest(case, base_name, slots=slots)
    return f"{head}\n{short}"


def format_optest(case, base_name: str = "TestFuzz", slots=None) -> str:
    """The case as a ready-to-paste OpTest class (`slots`: how a dict of slot values is
    written, one line each; every value in full by default)."""
    def full(values) -> list[str]:
        return [f"            {slot!r}: {_literal(value, 14 + len(repr(slot)))},"
                for slot, value in values.items()]

    slots = slots or full

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


def takes_inputs_and_attrs(fn) -> bool:
    try:
        inspect.signature(fn).bind({}, {})
    except TypeError:
        return False
    except ValueError:      # no signature (a builtin): assume it does
        return True
    return True
