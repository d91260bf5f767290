"""One suite: which ops `opkit test` (and the pytest plugin) run and which OpTests test them
(`select`), decided here once so the front doors cannot drift apart; harness.executing.pool plans the
tasks, harness.api gives the op-level verdicts (docs/harness.md, "Verdicts"). A test file
that cannot be imported, or an OpTest of an op type nobody registers, is a failure of its
op, with file, line and the close names.
"""
from __future__ import annotations

import ast
import difflib
import functools
import inspect
import re
from dataclasses import dataclass, field
from pathlib import Path

from harness.backend import dispatch as backends
from harness.selecting.discovery import (
    builtin_exemptions,
    builtin_test_paths,
    discover,
    has_test_methods,
    instantiate,
    active_compat,
    test_paths,
)
from harness.options import DEFAULT_SEED
from harness.reporting.report import FAIL, SKIP, CheckResult
from opkit.project import load_builtin_ops, load_op_modules, load_project
from opkit.registry import all_op_types, op_info

__all__ = ["SuiteError", "Selection", "select", "op_type_of",
           "forward_op_types", "runs_anything", "class_location", "guess_op_from_file",
           "unregistered_hint", "active_compat"]


class SuiteError(Exception):
    """A selection that cannot run (unknown op, no OpTest for a named op, ...): a usage
    error of the front door."""


# -- small helpers ---------------------------------------------------------------------------
def class_location(cls) -> str:
    """'path:line' of a class definition (best effort)."""
    try:
        path = inspect.getsourcefile(cls)
    except TypeError:
        path = None
    if not path:
        return getattr(cls, "__module__", "?")
    line = _class_lines(path).get(getattr(cls, "__qualname__", cls.__name__))
    return f"{path}:{line}" if line else path


@functools.lru_cache(maxsize=256)
def _class_lines(path: str) -> dict[str, int]:
    """{qualified class name: line of its `class` statement} of a source file, parsed once
    (inspect.getsourcelines re-parses the whole file for every class it is asked about)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return {}
    lines: dict[str, int] = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                name = prefix + child.name
                first = child.decorator_list[0].lineno if child.decorator_list else \
                    child.lineno
                lines.setdefault(name, first)
                walk(child, name + ".")
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                walk(child, prefix + child.name + ".<locals>.")
            elif not isinstance(child, (ast.Lambda,)):
                walk(child, prefix)

    walk(tree, "")
    return lines


def guess_op_from_file(path) -> str | None:
    """`test_relu_op.py` -> 'relu' (the file naming convention of OpTest files)."""
    m = re.fullmatch(r"test_(.+?)(_op)?\.py", Path(str(path)).name)
    return m.group(1) if m else None


def _named_in(path, op_names) -> str | None:
    """The one named op whose type a test file quotes (`op_type = "relu"`): a file that
    cannot be imported is attributed to that op, so its error is that op's failure."""
    try:
        text = Path(str(path)).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    quoted = [op for op in op_names if f'"{op}"' in text or f"'{op}'" in text]
    return quoted[0] if len(quoted) == 1 else None


def runs_anything(cls) -> bool:
    """Whether an OpTest class has a test method (unittest and pytest run nothing else)."""
    return has_test_methods(cls)


def forward_op_types() -> list[str]:
    """The registered op types that are not the grad op of another."""
    types = all_op_types()
    known = set(types)
    return [t for t in types if not (t.endswith("_grad") and t[: -len("_grad")] in known)]


def op_type_of(cls, seed: int = DEFAULT_SEED) -> str | None:
    """The op an OpTest class tests (its `op_type` after a seeded setUp); None when setUp
    fails (the class's own items report that)."""
    try:
        return getattr(instantiate(cls, seed=seed), "op_type", None)
    except BaseException:  # noqa: BLE001 - reported by the class's own tests
        return None


def has_op(op_type: str) -> bool:
    """The op is known to the backend the run's cases are declared by (harness.backend.dispatch)."""
    return backends.declared().has_op(op_type)


def unregistered_hint(op_type: str) -> str:
    """' (did you mean ...)' for an op type nobody registers (the registry's close names)."""
    try:
        op_info(op_type)
    except Exception as exc:  # noqa: BLE001 - NotFound with the close names
        return f" ({str(exc).split('NotFound: ')[-1]})"
    return ""


# -- selection -------------------------------------------------------------------------------
@dataclass
class Selection:
    """What a run of `opkit test` covers."""
    ops: list[str]                               # every op to report, in order
    by_op: dict                                  # op -> [DiscoveredTest]
    broken: dict = field(default_factory=dict)   # op (or <file>) -> [failed CheckResult]
    exempt: dict = field(default_factory=dict)   # op -> reason
    warnings: list = field(default_factory=list)
    unimportable: list = field(default_factory=list)   # "file:line: why" of test files

    @property
    def runnable(self) -> list[str]:
        return [op for op in self.ops if (op not in self.broken or op in self.by_op)
                and has_op(op)]


def _with_builtin_paths(paths, builtin) -> list[Path]:
    """`paths` and the installed op packages' OpTest folders, each once: also when the
    project's paths hold another copy of an installed package's OpTests (a checkout of it
    whose `[tool.opkit] tests` names `reference_ops/tests` while a non-editable install
    puts the package's own copy in site-packages), the project's copy is the one run."""
    out, seen = [], set()
    for p in list(paths) + list(builtin):
        p = Path(p)
        real = p.resolve()
        key = (real.parent.name, real.name) if p in builtin else None
        if real in seen or (key and key in seen):
            continue
        seen.update({real, (real.parent.name, real.name)})
        out.append(p)
    return out


def select(op_names=(), all_ops: bool = False, builtins: bool = False, tests=(),
           op_modules=(), seed: int = DEFAULT_SEED) -> Selection:
    """Load the project's ops, discover its OpTests and choose the ops to run: `op_names`,
    `all_ops` (the project's own ops; the built-in ones too with `builtins` or when the
    project has none) or every op the OpTests cover and the project's own ops (an own op
    without an OpTest fails, as under `all_ops`; SuiteError: a selection that cannot
    run). The built-in ops' OpTests are searched when built-in ops are tested."""
    project = load_project()
    load_builtin_ops()
    builtin_ops = set(forward_op_types())
    load_op_modules(list(op_modules or ()), project, builtins=False)
    own_ops = [op for op in forward_op_types() if op not in builtin_ops]
    op_names = list(op_names or ())
    for op in op_names:
        if not has_op(op):
            try:
                op_info(op)
            except Exception as exc:  # noqa: BLE001 - NotFound with the close names
                raise SuiteError(str(exc).split("NotFound: ")[-1]) from None

    with_builtins = all_ops and (builtins or project.builtin_tests or not own_ops)
    absent = [str(t) for t in tests or () if not Path(t).exists()]
    if absent:
        raise SuiteError(f"--tests {', '.join(absent)}: no such file or folder")
    paths = test_paths(list(tests or ()) or None)
    builtin_wanted = with_builtins or any(op in builtin_ops for op in op_names)
    if not tests and builtin_wanted:
        paths = _with_builtin_paths(paths, builtin_test_paths())
    exempt = {**builtin_exemptions(), **project.exempt} if builtin_wanted else dict(project.exempt)
    discovery = discover(paths, seed=seed)
    by_op = discovery.by_op()
    searched = ", ".join(str(p) for p in paths) or "(no test paths)"
    broken: dict[str, list[CheckResult]] = {}
    unregistered: dict[str, list[str]] = {}    # op type -> what tests it
    for b in discovery.broken:
        guess = guess_op_from_file(b.path)
        if op_names and guess not in op_names:
            guess = _named_in(b.path, op_names) or guess
        key = guess if guess and (guess in op_names or not op_names) else f"<{b.path}>"
        broken.setdefault(key, []).append(CheckResult("output", FAIL, "", "", "", b.text))
    for t in discovery.tests:
        where = class_location(t.cls)
        if t.skip is not None:       # unittest skips the class: so does every check
            broken.setdefault(t.op_type or f"<{t.path}>", []).append(CheckResult(
                "output", SKIP, "", "", t.name, f"{where}: {t.name} is skipped by its test "
                f"file: {t.skip}"))
            continue
        if not t.op_type and not t.error and not runs_anything(t.cls):
            continue   # no op_type and no test method: unittest and pytest run nothing either
        if not t.op_type:
            broken.setdefault(f"<{t.path}>", []).append(CheckResult(
                "output", FAIL, "", "", t.name, f"{where}: {t.name} has no op_type after "
                f"setUp" + (f" ({t.error})" if t.error else "")))
        elif not has_op(t.op_type) and (mode := active_compat()) is not None:
            # a framework's own files test ops opkit does not have: out of scope, not a failure
            broken.setdefault(t.op_type, []).append(CheckResult(
                "output", SKIP, "", "", t.name, f"{where}: out of scope: opkit has no op "
                f"'{t.op_type}' ({mode.title})"))
        elif not has_op(t.op_type):
            text = f"{where}: OpTest {t.name} tests op '{t.op_type}', which is not registered"
            unregistered.setdefault(t.op_type, []).append(text)
            broken.setdefault(t.op_type, []).append(CheckResult(
                "output", FAIL, "", "", t.name, f"{text}{unregistered_hint(t.op_type)}; "
                f"load it with --ops or [tool.opkit] ops"))
    if op_names:
        broken = {k: v for k, v in broken.items() if k in op_names}

    if all_ops:
        ops = sorted(own_ops) + (sorted(builtin_ops) if with_builtins else [])
        ops += sorted(op for op in by_op if op not in ops and has_op(op))
    elif op_names:
        ops = list(dict.fromkeys(op_names))
        missing = [op for op in ops if op not in by_op and op not in broken
                   and op not in exempt]
        if missing:
            text = (f"no OpTest found for op{'s' if len(missing) > 1 else ''} "
                    f"{', '.join(repr(m) for m in missing)} under {searched}")
            # an OpTest whose op_type is misspelt is the likely reason: say which
            for op in missing:
                for typo in difflib.get_close_matches(op, list(unregistered), n=3,
                                                      cutoff=0.6):
                    text += f"; {unregistered[typo][0]}: did you mean op_type = '{op}'?"
            for b in discovery.broken:      # the op's OpTest may be in a file that failed
                text += f"; a test file could not be imported: {b.text}"
            raise SuiteError(text)
    else:
        ops = sorted(op for op in by_op if has_op(op))
        if not ops and not broken:
            raise SuiteError(f"no OpTest found under {searched}; name ops, use --all or --tests")
        # the project's own ops too, as --all has them: one without an OpTest is no pass
        ops = sorted(set(ops) | set(own_ops))
    ops += sorted(k for k in broken if k not in ops)
    return Selection(ops, by_op, broken, exempt, discovery.problems,
                     [b.text for b in discovery.broken])
