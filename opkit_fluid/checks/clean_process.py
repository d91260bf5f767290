"""`clean_process`: no oracle the kernel can reach, no harness it can patch (issue 48).

Two parts, once per op (its first case):

1. **Patched modules** (always): after the op's kernels ran in this process (the harness's
   other checks ran them), no function of numpy, opkit, the harness, unittest, checkers or
   builtins -- module attributes, and the methods of the harness's and unittest's classes --
   may be one defined in a file that registered the op's kernels (a kernel, or the op's
   module, that replaced `numpy.allclose`, the harness's comparator or
   `OpTest.check_output`).
2. **A clean process**: a fresh interpreter started by path (`opkit_fluid/checks/clean_child.py`)
   that imports only numpy, opkit and the files that registered the op's kernels -- not the
   harness, not the test module, so no expected output, no reference() and no OpTest exists
   there -- runs the case forward and backward with the harness's cotangent; its outputs
   and gradients must equal this process's (the output tolerances). A kernel that behaves
   well only where the harness or the test is loaded, in a process other than the one that
   imported it (the forked workers), or that reads the test's reference, fails here. It runs
   for the project's own ops (kernel files outside opkit's and reference_ops' folders); for
   the built-in ops only with OPKIT_LAWS_DEEP=1 (a fresh interpreter costs ~0.7 s of CPU,
   more than every other check of an op).
"""
from __future__ import annotations

import builtins
import os
import pickle
import subprocess
import sys
import tempfile
import types

import numpy as np

from harness.backend.dispatch import cannot, kernel_files, selected
from harness.backend.case import case_attrs, case_inputs
from harness.checks.base import Check, Mismatch
from harness.inputs.production import first_disagreement
from harness.checks.modes import one_cpu_combo
from harness.backend.seam import (grad_outputs, grad_wrt, has_grad, make_cotangents, op_refused,
                        output_slots, prepare, run_forward_backward)
from harness.options import current

PROTECTED = ("numpy", "opkit", "harness", "unittest", "checkers")
CLASS_SCAN = ("harness", "unittest")       # their classes' methods are scanned too
CHILD = os.path.join(os.path.dirname(os.path.abspath(__file__)), "clean_child.py")
TIMEOUT = 120.0


def _code_file(value):
    code = getattr(value, "__code__", None)
    if code is None and isinstance(value, (staticmethod, classmethod)):
        code = getattr(value.__func__, "__code__", None)
    return None if code is None else code.co_filename


def _protected_roots() -> list[str]:
    roots = []
    for name in PROTECTED:
        mod = sys.modules.get(name)
        f = getattr(mod, "__file__", None)
        if f:
            roots.append(os.path.dirname(os.path.abspath(f)) + os.sep)
    return roots


def patched(files) -> list[str]:
    """'module.attr' of every protected function defined in one of `files` (files inside
    the protected packages themselves left out: opkit's own kernel wrappers), the shallowest
    names first (`harness.judging.compare.compare` before the checks that imported it)."""
    roots = _protected_roots()
    files = {f for f in files if not any(f.startswith(r) for r in roots)}
    if not files:
        return []
    # a code object's file as the module was loaded with it: absolute, or relative to the
    # working folder
    files |= {os.path.relpath(f) for f in files}
    found = []
    mods = [("builtins", builtins)] + [
        (n, m) for n, m in list(sys.modules.items())
        if isinstance(m, types.ModuleType) and n.split(".")[0] in PROTECTED]
    for name, mod in mods:
        try:
            items = list(vars(mod).items())
        except TypeError:
            continue
        scan_classes = name.split(".")[0] in CLASS_SCAN
        for attr, value in items:
            if isinstance(value, (types.FunctionType, staticmethod, classmethod)):
                if _code_file(value) in files:
                    found.append(f"{name}.{attr}")
            elif scan_classes and isinstance(value, type) and value.__module__ == name:
                for meth, v in list(vars(value).items()):
                    if isinstance(v, (types.FunctionType, staticmethod, classmethod)) and \
                            _code_file(v) in files:
                        found.append(f"{name}.{attr}.{meth}")
    return sorted(set(found), key=lambda n: (n.count("."), n))


def _installed(files) -> bool:
    """Whether every file lies in opkit's folder or an installed op package's (entry point
    `opkit.ops`: the built-in ops)."""
    import opkit
    from harness.selecting.discovery import builtin_test_paths

    roots = [os.path.dirname(os.path.abspath(opkit.__file__))]
    roots += [str(p.parent) for p in builtin_test_paths()]   # the installed op packages
    return all(any(f.startswith(r + os.sep) for r in roots) for f in files)


def clean_run(case, combo, files, wrt, cot, test_modules=()) -> dict:
    """{"arrays": {name: array}, "loaded": [...]} of the case run in a clean interpreter."""
    specs = case_inputs(case, combo.dtype)
    req = {"op_type": case.op_type, "files": files,
           "inputs": {slot: [(s.name, s.data, s.lod) for s in ss] for slot, ss in specs.items()},
           "outputs": output_slots(case), "attrs": case_attrs(case, combo.dtype),
           "wrt": list(wrt), "cot": cot, "no_grad_set": list(case.no_grad_set or ()),
           "sys_path": [os.getcwd()], "test_modules": list(test_modules)}
    with tempfile.TemporaryDirectory(prefix="opkit-clean-") as tmp:
        ask, answer = os.path.join(tmp, "request.pkl"), os.path.join(tmp, "result.pkl")
        with open(ask, "wb") as f:
            pickle.dump(req, f)
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        done = subprocess.run([sys.executable, CHILD, ask, answer], capture_output=True,
                              text=True, timeout=TIMEOUT, env=env, cwd=os.getcwd(), check=False)
        if done.returncode != 0 or not os.path.exists(answer):
            tail = done.stderr.strip().splitlines()
            raise RuntimeError(f"the clean process exited with status {done.returncode}: "
                               f"{tail[-1] if tail else 'no output'}")
        with open(answer, "rb") as f:
            return pickle.load(f)


class CleanProcessCheck(Check):
    name = "clean_process"
    description = ("no harness module patched by the op's code; the op in a fresh interpreter "
                   "without the harness or the test gives this process's results")
    order = 198
    scope = "op"

    def verdict(self, derived, context):
        case = derived.case
        files = kernel_files(case.op_type)
        hits = patched(files)
        skips: list = []
        runnable, _ = self.plan(derived, context, skips)
        combos = one_cpu_combo(runnable)
        combo = combos[0] if combos else None
        if hits:
            return [self.failed(
                derived, combo, f"the op's code replaced {len(hits)} function(s) of numpy / "
                f"opkit / the harness: {', '.join(hits[:6])} (now defined in "
                f"{', '.join(os.path.basename(f) for f in files)}): a kernel must not patch "
                f"the modules that judge it", kind=Mismatch)]
        if combo is None:
            return skips or [self.skipped(derived.base, "no CPU kernel")]
        if not files:
            return [self.passed(derived, combo, "no module patched (no kernel file found)")]
        if cannot("clean_process"):
            return [self.passed(derived, combo, f"no module patched; the clean process runs "
                                f"opkit's kernels only (backend {selected()})")]
        if _installed(files) and not current().laws_deep:
            return [self.passed(derived, combo, "no module patched; the clean process runs "
                                "for built-in ops with OPKIT_LAWS_DEEP=1")]
        if not all(isinstance(s.data, np.ndarray) for ss in case_inputs(case, "").values()
                   for s in ss):
            return [self.passed(derived, combo, "no module patched; an input is not an array: "
                                "no clean process")]
        try:
            prepared = prepare(case, combo)
            wrt = grad_wrt(case, prepared) if has_grad(case.op_type) else []
            outs = prepared.forward()
            cot = make_cotangents(outs, grad_outputs(case, outs),
                                  seed=getattr(context, "seed", 0) or 0)
            cot = {n: c.astype(outs[n].dtype) for n, c in cot.items()}
            if not cot:
                wrt = []
            mine = run_forward_backward(prepare(case, combo), case, wrt=wrt, cot=cot)
        except Exception as exc:  # noqa: BLE001 - the plain run raised: other checks say so
            why = "the op refuses the case" if op_refused(exc) else "the plain run raised"
            return [self.skipped(derived.base, f"{why}: {type(exc).__name__}", combo)]
        source = (case.source or "").split("::")[0]
        tests = [n for n, m in list(sys.modules.items())
                 if source and os.path.abspath(getattr(m, "__file__", "") or "") ==
                 os.path.abspath(source)]
        try:
            got = clean_run(case, combo, files, wrt, cot, tests)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            if "Error" in str(exc) and not op_refused(exc):
                return [self.failed(derived, combo, f"the op raised in a fresh interpreter "
                                    f"without the harness, where it ran here: {exc}",
                                    kind=Mismatch)]
            return [self.skipped(derived.base, f"no clean process: {exc}", combo)]
        diff = first_disagreement(mine, got["arrays"], combo.dtype)
        if diff:
            return [self.failed(
                derived, combo, f"a fresh interpreter that imports only the op (no harness, no "
                f"test module: no expected output or reference() within reach) gives another "
                f"result than this process: {diff} (this process vs the clean one)",
                kind=Mismatch)]
        return [self.passed(derived, combo, "the clean process agrees; no module patched")]


CHECK = CleanProcessCheck()
