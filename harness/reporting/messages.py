"""Failure messages a person can act on: `group_failures` folds failures of one kind and
message shape (place, dtype and case names taken out) into one block saying where it
happened, and says an error the op raised once, naming the checks it stopped
(docs/harness.md "Adding a check"); `raised` / `describe_error`: one line for an error,
with the kernel line it came from.
"""
from __future__ import annotations

import os
import re
import sys
import sysconfig
import traceback

import numpy as np

import opkit.framework
from harness.reporting.rootcause import fold, wrong_slots
from opkit.framework.errors import one_line

__all__ = ["group_failures", "root_cause", "kernel_line", "kernel_source", "framework_code"]

UNCAUGHT = "uncaught"      # harness.checks.base.Uncaught.kind


def root_cause(result) -> str:
    """The failure's signature: its first line's last ': '-separated part, with the case,
    place and dtype names, numbers and bracketed values taken out (the same bug seen on
    several cases, places, dtypes or sub-cases gives the same signature)."""
    text = result.message.splitlines()[0] if result.message else ""
    for word in (result.case, result.place, result.dtype, "float32", "float64"):
        if word:
            text = text.replace(word, "*")
    text = text.split(": ")[-1] if ": " in text and result.kind != UNCAUGHT else text
    text = re.sub(r"\[[^\[\]]*\]", "[]", text)
    text = re.sub(r"\[[^\[\]]*\]", "[]", text)
    return re.sub(r"-?\d+(\.\d+)?(e[-+]?\d+)?", "#", text)


def _where(results) -> str:
    combos = [c for c in dict.fromkeys("/".join(x for x in (r.place, r.dtype) if x)
                                       for r in results) if c]
    cases = list(dict.fromkeys(r.case for r in results if r.case))
    more = [f"+{len(cases) - 4} more"] if len(cases) > 4 else []
    listed = f"[{', '.join(cases[:4] + more)}]" if cases else ""
    return " ".join(part for part in (", ".join(combos), listed) if part)


def kernel_source(fn) -> str:
    """`name (file:line)` of a kernel function (its `def` line; decorators unwrapped), or
    its name alone where Python cannot tell (a builtin, a C extension)."""
    import inspect

    fn = inspect.unwrap(fn)
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    try:
        path = inspect.getsourcefile(fn) or inspect.getfile(fn)
        line = inspect.getsourcelines(fn)[1]
    except (OSError, TypeError):
        return name
    return f"{name} ({rel(path)}:{line})"


def kernel_line(op_type: str, results, kernels=None) -> str:
    """`kernel: fn (file.py:LINE) [op CPU float32, float64]` for the kernels registered for
    the op (a wrong gradient: its grad ops `<op>_grad`, `<op>_grad_grad`) on the places and
    dtypes where `results` failed; "" when the run's backend names none (compiled kernels).
    `kernels`: op type -> its kernel entries (the caller passes the backend's
    `kernel_functions`, harness.backend.dispatch); None names none."""
    if kernels is None:
        return ""
    kernel_functions = kernels
    results = [r for r in results if r.place or r.dtype]    # a failure of a run, not of
    if not results:                                         # the test suite (no OpTest)
        return ""
    slots = set().union(*(wrong_slots(r.message) for r in results))
    grad_only = bool(slots) and all(kind == "grad" for kind, _ in slots)
    types = [t for t in (f"{op_type}_grad", f"{op_type}_grad_grad") if kernel_functions(t)] \
        if grad_only else [op_type]
    combos = {(r.place, r.dtype) for r in results}
    found: dict[str, list[str]] = {}       # the function -> "op place dtype", in order
    for t in types:
        for entry in kernel_functions(t):
            if any(p in ("", entry.place) and d in ("", entry.dtype) for p, d in combos):
                found.setdefault(kernel_source(entry.fn), []).append(
                    f"{entry.place} {entry.dtype}" if len(types) == 1 else
                    f"{t} {entry.place} {entry.dtype}")
    if not found:
        return ""
    label = "grad kernel" if grad_only else "kernel"
    return "; ".join(f"{label}: {fn} [{(types[0] + ' ') if len(types) == 1 else ''}"
                     f"{', '.join(sorted(where))}]" for fn, where in found.items())


def _with_kernel(text: str, op_type: str | None, results, kernels) -> str:
    """The block with its kernel line under its first line."""
    line = kernel_line(op_type, results, kernels) if op_type else ""
    if not line:
        return text
    head, _, rest = text.partition("\n")
    return f"{head}\n    {line}" + (f"\n{rest}" if rest else "")


def group_failures(results, order=(), op_type: str | None = None,
                   kernels=None) -> list[str]:
    """One line (or block) per root cause (a failure's kind and its message's shape). With
    `order` (the check names in the table's order) the blocks follow the table -- the first
    block is the first failing row's, not that of whichever check happened to finish first --
    and each block lists its checks in that order; else in order of first appearance. With
    `op_type` and `kernels` (the backend's kernel_functions), each block names the kernel
    function and its file:line (kernel_line)."""
    rank = {name: i for i, name in enumerate(order)}
    failed = sorted((r for r in results if r.status == "fail"),
                    key=lambda r: rank.get(r.check, len(rank)))
    raised: dict[str, list] = {}
    # the same kind and message under several checks: one block naming the checks
    by_message: dict[tuple, dict[str, list]] = {}   # (kind, cause) -> check -> failures
    for r in failed:
        if r.kind == UNCAUGHT:
            raised.setdefault(root_cause(r), []).append(r)
        else:
            by_message.setdefault((r.kind, root_cause(r)), {}).setdefault(r.check, []).append(r)
    blocks = []
    for entries in raised.values():
        checks = list(dict.fromkeys(r.check for r in entries))
        where = _where(entries)
        blocks.append((checks[0], f"FAIL the op raised{' ' + where if where else ''}: "
                       f"{entries[0].message.removeprefix('raised ')}"
                       + (f"\n    (so these checks could not run: {', '.join(checks)})"
                          if len(checks) > 1 else f" (check {checks[0]})"), entries))
    for entries in by_message.values():
        checks = list(entries)
        rs = [r for group in entries.values() for r in group]
        where = _where(rs)
        count = f" ({len(rs)} times)" if len(rs) > 1 else ""
        blocks.append((checks[0], f"FAIL {', '.join(checks)}{' ' + where if where else ''}"
                                  f"{count}: {rs[0].message}", rs))
    if rank:   # the table's order (stable: ties keep the order of appearance)
        blocks.sort(key=lambda b: rank.get(b[0], len(rank)))
    blocks = [(check, _with_kernel(text, op_type, rs, kernels), rs) for check, text, rs in blocks]
    return [text for _, text in fold(blocks)]     # one block per root cause


# -- one line for an error the op raised ----------------------------------------------------
def raised(exc: BaseException) -> str:
    """One line: the innermost error's type and message, and the kernel file:line it came
    from."""
    inner, seen = exc, {id(exc)}
    while inner.__cause__ is not None and id(inner.__cause__) not in seen:   # (a re-raised
        inner = inner.__cause__                                              # error is its
        seen.add(id(inner))                                                  # own cause)
    text = describe_error(exc)
    kind = type(inner).__name__
    return text if inner is exc or text.startswith(f"{kind}:") else f"{kind}: {text}"


_FRAMEWORK_DIRS: list[str] = []


def framework_code(folder: str) -> None:
    """A backend's own code lives in `folder`: its frames are the framework's, not the op's
    (opkit's backend registers its prepared op's folder)."""
    if folder not in _FRAMEWORK_DIRS:
        _FRAMEWORK_DIRS.append(folder)


def skip_prefixes() -> tuple:
    """Folders whose frames are not user code: numpy, cupy, opkit's framework, the
    backends' own code (`framework_code`), the harness package itself and the standard
    library."""
    # the harness package, two folders up from harness/reporting/ (no `import harness`)
    harness_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [os.path.dirname(np.__file__), os.path.dirname(opkit.framework.__file__),
            harness_dir, sysconfig.get_paths().get("stdlib", ""), *_FRAMEWORK_DIRS]
    mods = [sys.modules.get("cupy")]
    try:
        import hypothesis

        mods.append(hypothesis)
    except ImportError:
        pass
    dirs += [os.path.dirname(m.__file__) for m in mods if getattr(m, "__file__", None)]
    return tuple(os.path.realpath(d) + os.sep for d in dirs if d)


def user_line(exc: BaseException):
    """(file, line, source) of the innermost frame of `exc` (or of the error it wraps) that is
    user code: the kernel or a helper it called, not numpy, cupy or the framework."""
    chain = []
    while exc is not None and exc not in chain:
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    skip = skip_prefixes()
    for e in reversed(chain):            # the innermost error first
        found = [f for f in traceback.extract_tb(e.__traceback__) if not
                 (f.filename.startswith("<") or os.path.realpath(f.filename).startswith(skip))]
        if found:
            return found[-1].filename, found[-1].lineno, (found[-1].line or "").strip()
    return None


def rel(path: str) -> str:
    try:
        r = os.path.relpath(path)
        return r if not r.startswith("..") else path
    except ValueError:
        return path


def error_line(exc: BaseException) -> str:
    """' (at <file>:<line>: <source>)' of the innermost user frame of `exc`, or ''."""
    where = user_line(exc)
    return f" (at {rel(where[0])}:{where[1]}: {where[2]})" if where else ""


def describe_error(exc: BaseException) -> str:
    """One line: the error's kind (once) and message and, when it came from user code,
    where."""
    return one_line(exc) + error_line(exc)
