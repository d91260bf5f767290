"""Re-run a printed reproducer in a fresh Python process before it is printed.

`confirm(op_type, source, check, seed)` writes the reproducer (an OpTest module's text) to a
temporary file and runs it in a new interpreter: the modules that registered the op's (and
its grad ops') kernels are loaded from their files, the OpTest's methods run, and the check
that failed runs on its case (`verify`, through harness.fresh). Returns True when it fails
there too (or raises there), False when it passes (the failure then depends on earlier runs
in the process), None when it could not be run (no answer: timed out, died).
"""
from __future__ import annotations

from harness.options import DEFAULT_SEED  # noqa: I001

import os
import sys
import tempfile

from harness import fresh

__all__ = ["confirm", "NOT_REPRODUCED"]

NOT_REPRODUCED = ("(re-run in a fresh process, this case passes: the failure depends on "
                  "earlier runs in the process)")


def verify(spec: dict) -> bool:
    """In the fresh interpreter (harness.fresh): load the kernels' modules, run the
    reproducer's OpTest methods and, for another check, that check on its case; whether
    something failed."""
    import importlib.util

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
    cls = ns[spec["cls"]]
    from harness.case import case_from_test
    from harness.checking import run_case
    from harness.checks.optest import run_optest_methods
    from harness.discovery import instantiate

    test = instantiate(cls, spec["seed"])
    results = run_optest_methods(test, spec["cls"], spec["seed"])
    if spec["check"] not in ("output", "grad"):
        results = run_case(case_from_test(test), checks=[spec["check"]], seed=spec["seed"])
    return any(r.status == "fail" for r in results)


def _kernel_modules(op_types) -> list:
    from opkit.registry import op_info

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
            timeout: float = 120.0):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "repro_case.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(source)
        spec = {"modules": _kernel_modules(op_types), "file": path, "cls": cls_name,
                "check": check, "seed": seed}
        try:
            return bool(fresh.run("harness.reproduce:verify", spec, timeout=timeout))
        except fresh.FreshError as exc:
            return True if exc.raised else None
