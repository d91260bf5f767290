"""`opkit bench`: per-op forward and backward time on cases derived from the op's OpTests.

    opkit bench relu softmax                     a table of forward / backward times
    opkit bench my_op --against main             this tree against git ref `main` of the
                                                 project: the ratio with a confidence
                                                 interval; exit 1 when the whole interval
                                                 lies above 1 + --threshold
    opkit bench my_op --against ../old_ops       against another op package path

See docs/performance.md ("opkit bench") for the sizes, the statistics and a CI recipe.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from opkit.cli.config import add_format_option, add_ops_option

EXIT_CODES = {0: "measured (with --against: no op slower than the threshold)",
              1: "with --against: an op is slower than the threshold (the whole confidence "
                 "interval lies above it)",
              2: "usage error (unknown op, op without OpTest, ref that does not exist, ...)"}


def add_arguments(parser) -> None:
    from opkit.cli.bench_timing import (DEFAULT_ELEMENTS, DEFAULT_MAX_ROUNDS_FACTOR, DEFAULT_ROUNDS,
                               DEFAULT_THRESHOLD)

    parser.add_argument("op", nargs="+", help="op types to time")
    parser.add_argument("--against", metavar="REF",
                        help="compare with REF: a git ref of the project (the repository "
                             "holding the current folder) or the path of another op module, "
                             "file or folder defining the same ops")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                        help=f"with --against: the slowdown that fails, as a fraction "
                             f"(default {DEFAULT_THRESHOLD})")
    parser.add_argument("--rounds", type=int, default=DEFAULT_ROUNDS,
                        help=f"with --against: rounds of alternating fresh processes "
                             f"before the first look at the verdict, and between looks "
                             f"(default {DEFAULT_ROUNDS})")
    parser.add_argument("--max-rounds", type=int, default=None, metavar="N",
                        help=f"with --against: while an op's interval straddles "
                             f"1 + threshold, run --rounds more rounds, up to N in all "
                             f"(default {DEFAULT_MAX_ROUNDS_FACTOR} x --rounds; N = --rounds: "
                             f"one look). Each of the K looks uses a 1 - 0.05/K "
                             f"interval, which keeps the false-alarm bound of a single "
                             f"95%% look")
    parser.add_argument("--clock", choices=["cpu", "wall"], default="cpu",
                        help="with --against: time each batch by the worker's CPU time "
                             "(default: other processes' load does not enter) or by the "
                             "wall clock (for ops whose time is waiting: sleep, I/O, a "
                             "device)")
    parser.add_argument("--elements", type=int, default=DEFAULT_ELEMENTS,
                        help=f"scale each case's first dimension until its largest input "
                             f"holds at least this many values (default {DEFAULT_ELEMENTS})")
    parser.add_argument("--repeats", type=int, default=None,
                        help="timed batches per phase (default 5 alone, 4 per round with "
                             "--against)")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the OpTests' setUp")
    add_ops_option(parser)
    parser.add_argument("--tests", action="append", default=[], metavar="PATH",
                        help="test files or folders holding OpTest classes (default: "
                             "[tool.opkit] tests, and the built-in ops' tests)")
    add_format_option(parser)


def round_progress(stream, max_rounds: int, quiet: bool = False):
    """The progress callback of `--against`: on a terminal one line rewritten with `\r`,
    elsewhere (CI logs, files) one line per round."""
    tty = stream.isatty()

    def progress(done, look):
        if quiet:
            return
        text = f"round {done}/{look} (at most {max_rounds})"
        if tty:
            print(f"\r{text}", end="", file=stream, flush=True)
        else:
            print(text, file=stream, flush=True)
    return progress


def _usage(msg: str):
    from opkit.cli.config import UsageError

    return UsageError(msg)


def _validate(args) -> None:
    if args.rounds < 2:
        raise _usage(f"--rounds {args.rounds}: must be >= 2")
    if args.max_rounds is not None and args.max_rounds < args.rounds:
        raise _usage(f"--max-rounds {args.max_rounds}: must be >= --rounds ({args.rounds})")
    if not 0 <= args.threshold < 10:
        raise _usage(f"--threshold {args.threshold}: must be a fraction in [0, 10)")
    if args.elements < 1:
        raise _usage(f"--elements {args.elements}: must be >= 1")
    if args.repeats is not None and args.repeats < 1:
        raise _usage(f"--repeats {args.repeats}: must be >= 1")


def _cases(args):
    from opkit.cli.bench_timing import derive_cases
    from harness.selecting.discovery import builtin_test_paths, discover, test_paths
    from opkit.project import ProjectError, load_op_modules, load_project
    from opkit.registry import has_op, op_info

    try:
        project = load_project()
        load_op_modules(args.ops, project)
    except ProjectError as exc:
        raise _usage(str(exc)) from None
    for op in args.op:
        if not has_op(op):
            try:
                op_info(op)
            except Exception as exc:  # noqa: BLE001 - NotFound with the close names
                raise _usage(str(exc).split("NotFound: ")[-1]) from None
    paths = test_paths(args.tests)
    if not args.tests:
        paths += [p for p in builtin_test_paths() if p not in paths]
    by_op = discover(paths, seed=args.seed).by_op()
    cases = []
    for op in args.op:
        found = derive_cases(op, by_op.get(op, []), seed=args.seed, elements=args.elements)
        if not found:
            raise _usage(f"op '{op}': no OpTest case to time (none found, or none runs)")
        cases += found
    return cases


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def _inside(path: Path, root: Path) -> Path | None:
    try:
        return path.resolve().relative_to(root)
    except ValueError:
        return None


def _ref_side(ref: str, ops: list[str], workdir: Path):
    """The Side of `--against REF`: an op path, or the project at a git ref (extracted into
    `workdir`)."""
    from opkit.cli.bench_timing import Side

    cwd = Path.cwd()
    as_path = Path(ref)
    if as_path.exists():
        return Side(f"{ref}", str(cwd), [str(as_path.resolve())], [], project=False,
                    builtins=False)
    if shutil.which("git") is None:
        raise _usage(f"--against {ref}: no such path, and git is not installed")
    top = _git(["rev-parse", "--show-toplevel"], cwd)
    if top.returncode != 0:
        raise _usage(f"--against {ref}: no such path, and {cwd} is not in a git repository")
    root = Path(top.stdout.strip()).resolve()
    commit = _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], root)
    if commit.returncode != 0:
        raise _usage(f"--against {ref}: no such path, and no such git ref in {root}")
    tree = workdir / "ref"
    tree.mkdir()
    archive = subprocess.run(["git", "archive", "--format=tar", commit.stdout.strip()],
                             cwd=root, capture_output=True)
    if archive.returncode != 0:
        raise _usage(f"--against {ref}: git archive failed: "
                     f"{archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    prefix = []
    import reference_ops

    roots = [Path(p) for p in sys.path if p] + [cwd, Path(reference_ops.__file__).parent.parent]
    for p in roots:
        rel = _inside(p, root)
        if rel is not None and str(tree / rel) not in prefix:
            prefix.append(str(tree / rel))
    mapped = []
    for entry in ops:
        rel = _inside(Path(entry), root) if Path(entry).exists() else None
        mapped.append(str(tree / rel) if rel is not None else entry)
    rel_cwd = _inside(cwd, root) or Path(".")
    return Side(f"{ref} ({commit.stdout.strip()[:10]})", str(tree / rel_cwd), mapped, prefix)


def _print_times(rows, cases, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"cases": [
            {**row, "inputs": case.shapes(), "scale": case.scale,
             **({"note": case.note} if case.note else {})}
            for row, case in zip(rows, cases)]}, indent=1))
        return
    print(f"{'op':<22} {'case':<34} {'forward ms':>11} {'backward ms':>12}  inputs")
    for row, case in zip(rows, cases):
        back = f"{row['backward_s'] * 1e3:12.4f}" if row["backward_s"] else f"{'-':>12}"
        note = f"  ({case.note})" if case.note else ""
        print(f"{row['op']:<22} {row['case'][:34]:<34} {row['forward_s'] * 1e3:11.4f} "
              f"{back}  {case.shapes()}{note}")


def run(args) -> int:
    from opkit.cli.bench_timing import DEFAULT_MAX_ROUNDS_FACTOR, Side, compare, looks, time_cases

    _validate(args)
    as_json = args.format == "json"
    with tempfile.TemporaryDirectory(prefix="opkit-bench-") as tmp:
        ref = _ref_side(args.against, args.ops, Path(tmp)) if args.against else None
        cases = _cases(args)
        if ref is None:
            _print_times(time_cases(cases, repeats=args.repeats or 5), cases, as_json)
            return 0
        this = Side("this tree", str(Path.cwd()), list(args.ops))

        max_rounds = args.max_rounds or args.rounds * DEFAULT_MAX_ROUNDS_FACTOR

        progress = round_progress(sys.stderr, max_rounds, quiet=as_json)
        try:
            results = compare(cases, this, ref, rounds=args.rounds,
                              threshold=args.threshold, repeats=args.repeats or 4,
                              progress=progress, max_rounds=max_rounds,
                              clock=args.clock)
        except RuntimeError as exc:
            raise _usage(str(exc)) from None
        if not as_json and sys.stderr.isatty():
            print(file=sys.stderr)        # end the line the \r updates rewrote
    slower = [r for r in results if r.slower]
    n_looks = len(looks(args.rounds, max_rounds))
    if as_json:
        print(json.dumps({"against": ref.label, "threshold": args.threshold,
                          "min_rounds": args.rounds, "max_rounds": max_rounds,
                          "looks": n_looks, "clock": args.clock,
                          "ops": [r.to_json() for r in results],
                          "slower": [r.op for r in slower]}, indent=1))
    else:
        print(f"this tree against {ref.label}: time ratio (> 1: this tree is slower), "
              f"{results[0].confidence:.1%} interval ({n_looks} look(s), {args.rounds} to "
              f"{max_rounds} rounds, {args.clock} time), threshold +{args.threshold:.0%}")
        for r in results:
            verdict = "SLOWER" if r.slower else "ok"
            print(f"  {r.op:<22} {r.ratio:6.3f}  [{r.low:.3f}, {r.high:.3f}]  {verdict}"
                  f"  ({r.rounds} rounds)")
    return 1 if slower else 0
