"""The measured set for `opkit lint` on Paddle's C++ operators: build it from Paddle's history,
then score the linter on it.

    # 1. build: needs a git directory of Paddle (or a fork carrying its history and tags),
    #    e.g. the bare mirror of github.com/Qin-sx/Paddle; writes the manifest and the files
    python benchmarks/cpp_lint_set.py build --git-dir /path/to/Paddle.git --out /tmp/paddle_set
    # 2. score (rerunnable from the committed manifest and the same git directory)
    python benchmarks/cpp_lint_set.py score --git-dir /path/to/Paddle.git --out /tmp/paddle_set

Ground truth is judged here, independently of the linter (a character-level scanner of
macro invocations, not tree-sitter), and confirmed by Paddle's own history:

* OPK002: every `PADDLE_ENFORCE*`/`PADDLE_THROW` of the old release (v1.6.0) whose message
  argument is missing, an empty literal, or a literal without letters once its printf
  conversions are removed; each confirmed by the first later commit (towards v2.0.0) whose
  version of the file no longer contains the statement (whitespace ignored).
* OPK003: every op/place of the old release registered (REGISTER_OP_CPU/CUDA_KERNEL) with
  float but not double, or double but not float, whose registration at the later release
  (v2.3.0) has both; confirmed by the first commit whose version of the file registers both.
* OPK001: const_cast statements of the old release that a reviewer (this manifest's author)
  judged to be writes to a kernel input and that a later commit removed (listed in
  MANUAL_OPK001 with the judgement; the fixing commit is found the same way).

Clean files (zero findings expected for the rule): for OPK002 the whole operators tree of
v2.0.0 with no violation by the scanner (Paddle made message-less enforce a compile error);
for OPK003 the v2.3.0 files whose every judged registration has both float and double or no
floating type at all (integer-only look-alikes); for OPK001 the v2.3.0 files in
MANUAL_OPK001_CLEAN, each with const_casts of things that are not inputs (look-alikes), as
judged by the reviewer.

A finding counts as a catch only on the violating statement's lines.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MANIFEST = ROOT / "benchmarks" / "cpp_lint_manifest.json"
OLD, FIXED_BY, LATER = "v1.6.0", "v2.0.0", "v2.3.0"
OPS = "paddle/fluid/operators"
SUFFIXES = (".cc", ".cu", ".h", ".cuh")

ENFORCE = {"PADDLE_ENFORCE": 1, "PADDLE_ENFORCE_NOT_NULL": 1, "PADDLE_THROW": 0,
           **{f"PADDLE_ENFORCE_{op}": 2 for op in ("EQ", "NE", "GT", "GE", "LT", "LE")}}
ERROR_NAMES = ["InvalidArgument", "NotFound", "OutOfRange", "AlreadyExists", "ResourceExhausted",
               "PreconditionNotMet", "PermissionDenied", "ExecutionTimeout", "Unimplemented",
               "Unavailable", "Fatal", "External"]
REGISTER = {"REGISTER_OP_CPU_KERNEL": "CPU", "REGISTER_OP_CUDA_KERNEL": "GPU"}
FLOATS = {"float", "double", "float16"}

# (file, line at OLD, judgement): const_casts a reviewer judged to be writes to an input,
# removed by a later commit
MANUAL_OPK001 = [
    ("lookup_table_v2_op.h", 74, "const_cast of the data of Input(Ids)"),
    ("mkldnn/fc_mkldnn_op.cc", 71, "const_cast of the data of the input tensor `in`"),
    ("cudnn_lstm_op.cu.cc", 71, "const_cast of InputVar(Cache), then GetMutable"),
    ("cudnn_lstm_op.cu.cc", 75, "const_cast of InputVar(Cache), then GetMutable"),
    ("cudnn_lstm_op.cu.cc", 146, "const_cast of InputVar(Cache), then GetMutable"),
    ("elementwise/mkldnn/elementwise_mul_mkldnn_op.cc", 85, "const_cast of Input(X), format updated"),
    ("elementwise/mkldnn/elementwise_mul_mkldnn_op.cc", 86, "const_cast of Input(Y), format updated"),
    ("elementwise/mkldnn/elementwise_mul_mkldnn_op.cc", 148, "const_cast of Input(X), reordered"),
    ("elementwise/mkldnn/elementwise_mul_mkldnn_op.cc", 151, "const_cast of Input(Y), reordered"),
]
# v2.3.0 files whose const_casts are of things that are not kernel inputs (look-alikes)
MANUAL_OPK001_CLEAN = [
    # from a seeded sample (random.Random(37)) of the 65 v2.3.0 files with a const_cast: the
    # files whose every const_cast was judged not to be of an op input
    ("jit/gen_base.h", "const_cast of a generated code buffer"),
    ("controlflow/recurrent_op_helper.cc", "const_cast of an op's attribute map"),
    ("recurrent_op.cc", "const_cast of scopes"),
    ("math/sparse_impl.cu.h", "const_cast of raw pointers handed to cuSPARSE by a math helper"),
    # picked by hand, checked the same way
    ("controlflow/while_op.cc", "const_cast of a scope"),
]


# --- an independent, character-level scanner of macro invocations -------------------------

def _mask(text: str) -> str:
    """`text` with comments and string/char literal contents replaced by spaces (quotes kept),
    so that brackets and commas inside them do not count."""
    out, i, n = list(text), 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "//":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif two == "/*":
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [c if c == "\n" else " " for c in text[i:j]]
            i = j
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                out[k] = " " if text[k] != "\n" else "\n"
            i = j + 1
        else:
            i += 1
    return "".join(out)


def invocations(text: str, names) -> list:
    """(name, line, start, end, [argument texts]) of `NAME(...)` not in a #define."""
    masked = _mask(text)
    found = []
    for name in names:
        start = 0
        while True:
            i = masked.find(name, start)
            if i < 0:
                break
            start = i + len(name)
            before = masked[i - 1] if i else " "
            after = masked[start:start + 1]
            if before.isalnum() or before == "_" or not (after == "(" or after.isspace()):
                continue
            j = start
            while j < len(masked) and masked[j].isspace():
                j += 1
            if j >= len(masked) or masked[j] != "(":
                continue
            line_start = masked.rfind("\n", 0, i) + 1
            if masked[line_start:i].lstrip().startswith("#"):
                continue  # the macro's own #define (or an #if on it)
            depth, k, args, piece = 0, j, [], j + 1
            while k < len(masked):
                c = masked[k]
                if c in "([{":
                    depth += 1
                elif c in ")]}":
                    depth -= 1
                    if depth == 0:
                        args.append(text[piece:k])
                        break
                elif c == "," and depth == 1:
                    args.append(text[piece:k])
                    piece = k + 1
                k += 1
            args = [a for a in args if a.strip()] if len(args) > 1 or (args and args[0].strip()) else []
            found.append((name, text.count("\n", 0, i) + 1, i, k + 1, args))
    return found


def _literal(arg: str) -> str | None:
    """The contents of an argument made only of string literals, else None."""
    parts, s = [], arg.strip()
    while s:
        if not s.startswith('"'):
            return None
        j = 1
        while j < len(s) and s[j] != '"':
            j += 2 if s[j] == "\\" else 1
        parts.append(s[1:j])
        s = s[j + 1:].strip()
    return "".join(parts) if parts else None


def _wordless(message: str) -> bool:
    i, plain = 0, []
    while i < len(message):
        if message[i] == "%":
            j = i + 1
            while j < len(message) and message[j] in "-+ #0123456789.*hljztL":
                j += 1
            i = j + 1
            continue
        plain.append(message[i])
        i += 1
    text = "".join(plain).replace("\\n", " ").replace("\\t", " ")
    return not any(c.isalpha() for c in text)


def enforce_violations(text: str) -> list:
    """(line, statement text) of message-less enforce calls, judged by the scanner."""
    out = []
    for name, line, start, end, args in invocations(text, sorted(ENFORCE, key=len, reverse=True)):
        # PADDLE_ENFORCE is a prefix of PADDLE_ENFORCE_EQ: `find` only matched the full token
        if any("__VA_ARGS__" in a for a in args):
            continue
        where = ENFORCE[name]
        if len(args) <= where:
            out.append((line, text[start:end]))
            continue
        value = _literal(args[where])
        if value is not None and (not value.strip() or _wordless(value)):
            out.append((line, text[start:end]))
    # errors::X(...) anywhere (in an enforce or not)
    masked = _mask(text)
    for _name, line, start, end, args in invocations(text, ERROR_NAMES):
        if not "".join(masked[max(0, start - 12):start].split()).endswith("errors::"):
            continue
        value = _literal(args[0]) if args else ""
        if value is not None and (not value.strip() or _wordless(value)):
            out.append((line, text[start:end]))
    return sorted(out)


def _dtype(kernel: str) -> str | None:
    """First scalar type among a kernel class's template arguments (scanner's reading)."""
    if "<" not in kernel:
        return None
    inner = kernel[kernel.index("<") + 1:]
    for token in inner.replace("<", ",").replace(">", ",").split(","):
        token = token.strip().rsplit("::", 1)[-1]
        if token in FLOATS or token in ("int", "int64_t", "int32_t", "bool", "int8_t", "uint8_t",
                                        "int16_t", "complex64", "complex128", "bfloat16"):
            return token
    return None


def registrations(text: str) -> dict:
    """(op, place) -> (first line, set of dtypes or None when one is unknown)."""
    out: dict = {}
    for name, line, _, _, args in invocations(text, list(REGISTER)):
        if not args:
            continue
        op = args[0].strip()
        dtypes = [_dtype(a) for a in args[1:]]
        key = (op, REGISTER[name])
        prev = out.get(key)
        known = None if None in dtypes else set(dtypes)
        if prev is None:
            out[key] = (line, known)
        else:
            both = None if prev[1] is None or known is None else prev[1] | known
            out[key] = (prev[0], both)
    return out


def float_only(regs: dict) -> dict:
    return {key: line for key, (line, dtypes) in regs.items()
            if dtypes is not None and dtypes & {"float", "double"} and
            not {"float", "double"} <= dtypes}


# --- git --------------------------------------------------------------------------------------

class Git:
    def __init__(self, git_dir: str) -> None:
        self.git_dir = git_dir

    def run(self, *args: str) -> str:
        return subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True,
                              check=False).stdout.decode("utf-8", "replace")

    def show(self, rev: str, path: str) -> str | None:
        proc = subprocess.run(["git", "--git-dir", self.git_dir, "show", f"{rev}:{path}"],
                              capture_output=True, check=False)
        return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None

    def files(self, rev: str) -> list:
        return [p for p in self.run("ls-tree", "-r", "--name-only", rev, OPS).splitlines()
                if p.endswith(SUFFIXES)]

    def commits(self, old: str, new: str, path: str) -> list:
        return self.run("rev-list", "--reverse", "--topo-order", f"{old}..{new}", "--", path).split()

    def subject(self, commit: str) -> str:
        return self.run("log", "-1", "--format=%s", commit).strip()


def _squash(text: str) -> str:
    return "".join(text.split())


def first_commit_without(git: Git, path: str, statements: list, old: str, new: str) -> dict:
    """statement -> the first commit (old..new, oldest first) whose file lacks it."""
    left = {s: _squash(s) for s in statements}
    fixed = {}
    for commit in git.commits(old, new, path):
        content = git.show(commit, path)
        flat = _squash(content) if content is not None else ""
        for statement, squashed in list(left.items()):
            if squashed not in flat:
                fixed[statement] = commit
                del left[statement]
        if not left:
            break
    return fixed


def first_commit_with_both(git: Git, path: str, keys: list, old: str, new: str) -> dict:
    left, fixed = set(keys), {}
    for commit in git.commits(old, new, path):
        content = git.show(commit, path)
        if content is None:
            continue
        regs = registrations(content)
        for key in list(left):
            entry = regs.get(key)
            if entry is not None and entry[1] is not None and {"float", "double"} <= entry[1]:
                fixed[key] = commit
                left.discard(key)
        if not left:
            break
    return fixed


# --- build ------------------------------------------------------------------------------------

def build(git: Git) -> dict:
    manifest = {"old": OLD, "fixed_by": FIXED_BY, "later": LATER, "violations": [], "clean": []}
    old_files = git.files(OLD)
    started = time.time()
    for path in old_files:
        text = git.show(OLD, path)
        if text is None:
            continue
        rel = path[len(OPS) + 1:]
        found = enforce_violations(text)
        if found:
            fixes = first_commit_without(git, path, [s for _, s in found], OLD, FIXED_BY)
            for line, statement in found:
                if statement in fixes:
                    manifest["violations"].append(
                        {"rule": "OPK002", "tag": OLD, "file": rel, "line": line,
                         "lines": [line, line + statement.count("\n")],
                         "fixing_commit": fixes[statement]})
        singles = float_only(registrations(text))
        if singles:
            later = git.show(LATER, path)
            later_regs = registrations(later) if later else {}
            keep = [k for k in singles if later_regs.get(k, (0, None))[1] is not None
                    and {"float", "double"} <= later_regs[k][1]]
            fixes = first_commit_with_both(git, path, keep, OLD, LATER)
            for key in keep:
                if key in fixes:
                    manifest["violations"].append(
                        {"rule": "OPK003", "tag": OLD, "file": rel, "line": singles[key],
                         "lines": [singles[key], singles[key]], "op": key[0], "place": key[1],
                         "fixing_commit": fixes[key]})
    for rel, line, why in MANUAL_OPK001:
        path = f"{OPS}/{rel}"
        text = git.show(OLD, path) or ""
        statement = text.splitlines()[line - 1].strip()
        fixes = first_commit_without(git, path, [statement], OLD, LATER)
        manifest["violations"].append({"rule": "OPK001", "tag": OLD, "file": rel, "line": line,
                                       "lines": [line, line], "judgement": why,
                                       "fixing_commit": fixes.get(statement)})
    for v in manifest["violations"]:
        if v["fixing_commit"]:
            v["fix_subject"] = git.subject(v["fixing_commit"])[:72]
    # clean files
    for path in git.files(FIXED_BY):
        text = git.show(FIXED_BY, path)
        if text is not None and not enforce_violations(text) and "PADDLE_" in text:
            manifest["clean"].append({"rule": "OPK002", "tag": FIXED_BY, "file": path[len(OPS) + 1:]})
    for path in git.files(LATER):
        text = git.show(LATER, path)
        if text is None:
            continue
        regs = registrations(text)
        if regs and all(d is not None and (not d & {"float", "double"} or {"float", "double"} <= d)
                        for _, d in regs.values()):
            manifest["clean"].append({"rule": "OPK003", "tag": LATER, "file": path[len(OPS) + 1:]})
    for rel, why in MANUAL_OPK001_CLEAN:
        manifest["clean"].append({"rule": "OPK001", "tag": LATER, "file": rel, "judgement": why})
    manifest["build_seconds"] = round(time.time() - started, 1)
    return manifest


# --- score ------------------------------------------------------------------------------------

def materialize(git: Git, manifest: dict, out: Path) -> None:
    for item in manifest["violations"] + manifest["clean"]:
        dest = out / item["tag"] / item["file"]
        if dest.exists():
            continue
        text = git.show(item["tag"], f"{OPS}/{item['file']}")
        if text is None:
            raise SystemExit(f"cpp_lint_set: {item['tag']}:{OPS}/{item['file']} not in {git.git_dir}")
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text, encoding="utf-8")


def score(manifest: dict, out: Path) -> dict:
    args_out = out
    from checkers.lint.config import build_config
    from checkers.lint.engine import lint_source

    config = build_config({}, None, no_cache=True)
    cache: dict = {}

    def findings(tag, rel):
        key = (tag, rel)
        if key not in cache:
            path = out / tag / rel
            if not path.exists():
                raise SystemExit(f"cpp_lint_set: {tag}/{rel} is in the manifest but not in "
                                 f"{args_out}: rebuild with `build`")
            cache[key] = lint_source(str(path), path.read_bytes(), config).findings
        return cache[key]

    result = defaultdict(lambda: {"violations": 0, "caught": 0, "missed": [], "clean_files": 0,
                                  "false_alarms": []})
    for v in manifest["violations"]:
        got = findings(v["tag"], v["file"])
        row = result[v["rule"]]
        row["violations"] += 1
        lo, hi = v["lines"]
        if any(f.rule == v["rule"] and lo <= f.line <= hi for f in got):
            row["caught"] += 1
        else:
            row["missed"].append(f"{v['file']}:{v['line']}")
    for c in manifest["clean"]:
        got = findings(c["tag"], c["file"])
        row = result[c["rule"]]
        row["clean_files"] += 1
        row["false_alarms"] += [f"{c['tag']}/{c['file']}:{f.line} {f.message}" for f in got
                                if f.rule == c["rule"]]
    return dict(result)


def _compact(manifest: dict) -> str:
    """One line per violation; clean files grouped by rule and tag."""
    head = {k: v for k, v in manifest.items() if k not in ("violations", "clean")}
    groups: dict = defaultdict(list)
    for c in manifest["clean"]:
        groups[f"{c['rule']}@{c['tag']}"].append(c["file"] if "judgement" not in c
                                                  else [c["file"], c["judgement"]])
    rows = ",\n  ".join(json.dumps(v, separators=(",", ":")) for v in manifest["violations"])
    clean = ",\n  ".join(f"{json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}"
                          for k, v in groups.items())
    return (f"{{\n \"about\": {json.dumps(head, separators=(',', ':'))},\n"
            f" \"violations\": [\n  {rows}\n ],\n \"clean\": {{\n  {clean}\n }}\n}}\n")


def _load() -> dict:
    data = json.loads(MANIFEST.read_text(encoding="utf-8"))
    clean = []
    for key, files in data["clean"].items():
        rule, tag = key.split("@")
        for item in files:
            name, why = (item, None) if isinstance(item, str) else item
            clean.append({"rule": rule, "tag": tag, "file": name, **({"judgement": why} if why else {})})
    return {**data["about"], "violations": data["violations"], "clean": clean}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("action", choices=("build", "score"))
    parser.add_argument("--git-dir", required=True, help="a git directory of Paddle (or a fork)")
    parser.add_argument("--out", required=True, help="where the set's files are written")
    args = parser.parse_args(argv)
    git, out = Git(args.git_dir), Path(args.out)
    if args.action == "build":
        manifest = build(git)
        MANIFEST.write_text(_compact(manifest), encoding="utf-8")
        print(f"wrote {MANIFEST}: {len(manifest['violations'])} violations, "
              f"{len(manifest['clean'])} clean files ({manifest['build_seconds']} s)")
    manifest = _load()
    materialize(git, manifest, out)
    result = score(manifest, out)
    total = sum(r["violations"] for r in result.values())
    caught = sum(r["caught"] for r in result.values())
    alarms = sum(len(r["false_alarms"]) for r in result.values())
    for rule, row in sorted(result.items()):
        print(f"{rule}: caught {row['caught']}/{row['violations']}, "
              f"false alarms {len(row['false_alarms'])} on {row['clean_files']} clean files")
        for item in row["missed"][:20]:
            print(f"   missed {item}")
        for item in row["false_alarms"][:20]:
            print(f"   false alarm {item}")
    print(f"total: caught {caught}/{total} ({caught / max(1, total):.1%}), false alarms {alarms}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
