"""A newcomer's path, for real: a tagged scratch clone of this repository, the README's
install command (a plain, non-editable install into a fresh virtual environment), the
built-in OpTests from any folder, `--all` in a user's project, the pre-commit snippet of
docs/lint.md with real pre-commit, and the CI recipes of docs/lint.md and docs/compat.md
run step by step in scratch projects.

Slow (two installs, about a minute): the installs happen once per module. The clone is of
the committed HEAD (uncommitted edits are not in it)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REPO_URL = "https://github.com/opkit/opkit"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def sh(cmd, cwd, env=None, timeout=600, check=True):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=env, shell=isinstance(cmd, str), executable="/bin/bash"
                       if isinstance(cmd, str) else None)
    if check and p.returncode != 0:
        raise AssertionError(f"{cmd!r} exit {p.returncode}\n{p.stdout[-3000:]}\n"
                             f"{p.stderr[-3000:]}")
    return p


def version() -> str:
    from opkit.version import __version__

    return __version__


def doc_block(doc: str, section: str, lang: str) -> str:
    """The first ```lang block under the '## section' heading of docs/<doc>."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    start = text.index(f"## {section}\n")
    end = text.find("\n## ", start + 3)
    body = text[start:end if end > 0 else None]
    m = re.search(rf"```{lang}\n(.*?)```", body, re.S)
    assert m, f"{doc}: no ```{lang} block under ## {section}"
    return m.group(1)


def git_env(home: Path) -> dict:
    return dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
                HOME=str(home), GIT_CONFIG_NOSYSTEM="1")


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """This repository's HEAD, tagged as the docs say a release is tagged."""
    base = tmp_path_factory.mktemp("clone")
    dest = base / "opkit"
    head = sh(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()
    sh(["git", "clone", "-q", "--no-checkout", str(ROOT), str(dest)], base)
    sh(["git", "checkout", "-q", head], dest)
    sh(["git", "tag", "-f", f"v{version()}"], dest)
    return dest


@pytest.fixture(scope="module")
def venv(clone, tmp_path_factory):
    """A fresh virtual environment with opkit installed by the README's command."""
    readme = (ROOT / "README.md").read_text()
    m = re.search(r'pip install "(opkit-dl @ git\+\S+?@v[\d.]+)"', readme)
    assert m, "README: no `pip install \"opkit-dl @ git+URL@vX.Y.Z\"` command"
    spec = m.group(1)
    assert spec.endswith(f"@v{version()}") and REPO_URL in spec
    spec = spec.replace(REPO_URL, f"file://localhost{clone}")   # git clones it at the tag
    env_dir = tmp_path_factory.mktemp("venv") / "env"
    sh([sys.executable, "-m", "venv", str(env_dir)], env_dir.parent)
    sh([str(env_dir / "bin" / "pip"), "install", "-q", spec], env_dir.parent, timeout=900)
    return env_dir


def opkit_in(venv, *args, cwd, env=None, timeout=600):
    full = dict(os.environ, NO_COLOR="1", PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    full.pop("PYTHONPATH", None)
    full.update(env or {})
    return subprocess.run([str(venv / "bin" / "opkit"), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=full)


def test_the_install_is_not_editable(venv, tmp_path):
    p = subprocess.run([str(venv / "bin" / "python"), "-c",
                        "import opkit, harness, reference_ops.tests; print(opkit.__file__)"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert str(venv) in p.stdout and str(ROOT) not in p.stdout
    assert opkit_in(venv, "--version", cwd=tmp_path).stdout.strip() == f"opkit {version()}"


def test_builtin_optests_run_from_any_folder(venv, tmp_path):
    p = opkit_in(venv, "test", "relu", cwd=tmp_path)
    assert p.returncode == 0 and "relu: PASS" in p.stdout, p.stdout + p.stderr
    p = opkit_in(venv, "test", "--all", "--checks", "output,dtypes", "--jobs", "2",
                 "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    ops = {o["op"]: o for o in json.loads(p.stdout)["ops"]}
    assert len(ops) >= 40 and ops["relu"]["status"] == "pass"
    skipped = {op for op, o in ops.items() if o["status"] == "skip"}
    assert skipped == {op for op, o in ops.items() if o.get("exempt")} == {"while"}


USER_OP = '''
from opkit import OpMaker, OperatorWithKernel, register_kernel, register_operator


class HalfOpMaker(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_output("Out", "(Tensor) output.")
        self.add_attr("scale", "float", "the factor").set_default(0.5)
        self.add_comment("Out = scale X")


class HalfOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))


register_operator("my_half", HalfOp, HalfOpMaker)


@register_kernel("my_half")
def kernel(ctx):
    ctx.set_output("Out", ctx.input("X") * ctx.attr("scale"))
'''

USER_TEST = '''
import numpy as np
from harness import OpTest


class TestMyHalf(OpTest):
    def setUp(self):
        self.op_type = "my_half"
        x = np.random.uniform(-1, 1, (3, 4))
        self.inputs = {"X": x}
        self.attrs = {"scale": 0.5}
        self.outputs = {"Out": 0.5 * x}

    def test_check_output(self):
        self.check_output()
'''


def user_project(path: Path, op_source: str = USER_OP) -> Path:
    (path / "my_ops").mkdir(parents=True)
    (path / "my_ops" / "my_half_op.py").write_text(op_source)
    (path / "tests").mkdir()
    (path / "tests" / "test_my_half_op.py").write_text(USER_TEST)
    (path / "pyproject.toml").write_text(textwrap.dedent('''
        [project]
        name = "my-ops"
        version = "0.0.1"

        [tool.opkit]
        ops = ["my_ops"]
        tests = ["tests"]
    '''))
    return path


def test_all_in_a_user_project_tests_the_users_ops(venv, tmp_path):
    proj = user_project(tmp_path / "proj")
    p = opkit_in(venv, "test", "--all", "--format", "json", cwd=proj)
    assert p.returncode == 0, p.stdout + p.stderr
    assert [o["op"] for o in json.loads(p.stdout)["ops"]] == ["my_half"]
    p = opkit_in(venv, "test", "--all", "--builtins", "--checks", "dtypes", "--format", "json",
                 cwd=proj)
    ops = [o["op"] for o in json.loads(p.stdout)["ops"]]
    assert "my_half" in ops and "relu" in ops


def test_pre_commit_snippet_works_as_written(clone, tmp_path):
    if shutil.which("pre-commit") is None and not (Path(sys.executable).parent /
                                                   "pre-commit").exists():
        pytest.skip("pre-commit is not installed")
    pre_commit = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    snippet = doc_block("docs/lint.md", "pre-commit", "yaml")
    assert f"rev: v{version()}" in snippet, snippet
    assert REPO_URL in snippet
    proj = user_project(tmp_path / "proj")
    (proj / ".pre-commit-config.yaml").write_text(snippet.replace(REPO_URL, str(clone)))
    env = git_env(tmp_path)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    sh(["git", "init", "-q"], proj, env)
    sh(["git", "add", "-A"], proj, env)
    p = sh([pre_commit, "run", "--all-files"], proj, env, timeout=900, check=False)
    assert p.returncode == 0 and "Passed" in p.stdout, p.stdout + p.stderr
    # a kernel that writes to its input: the hook fails naming the rule
    bad = USER_OP.replace('ctx.set_output("Out", ctx.input("X") * ctx.attr("scale"))',
                          'x = ctx.input("X")\n    x *= 2\n    ctx.set_output("Out", x)')
    (proj / "my_ops" / "my_half_op.py").write_text(bad)
    sh(["git", "add", "-A"], proj, env)
    p = sh([pre_commit, "run", "--all-files"], proj, env, timeout=600, check=False)
    assert p.returncode == 1 and "OPK001" in p.stdout, p.stdout + p.stderr


def _run_steps(yaml_text: str, cwd: Path, venv: Path, env: dict, subst: dict) -> list:
    """Run the `run:` steps of a GitHub Actions job (the opkit install step is checked to be
    the README's command and skipped: `venv` holds that install)."""
    import yaml

    doc = yaml.safe_load(yaml_text)
    (job,) = doc["jobs"].values()
    results = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        script = step["run"]
        if "pip install" in script and "opkit-dl" in script:
            assert f'"opkit-dl @ git+{REPO_URL}@v{version()}"' in script, script
            continue
        for a, b in subst.items():
            script = script.replace(a, b)
        full = dict(env, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", NO_COLOR="1")
        p = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True,
                           text=True, env=full, timeout=600)
        results.append((step.get("name", script), p))
        if p.returncode != 0:
            break
    return results


def test_lint_ci_recipe_in_a_scratch_project(venv, tmp_path):
    recipe = doc_block("docs/lint.md", "CI recipe", "yaml")
    proj = user_project(tmp_path / "proj")
    env = dict(os.environ)
    steps = _run_steps(recipe, proj, venv, env, {})
    assert steps and steps[-1][1].returncode == 0, steps[-1][1].stdout + steps[-1][1].stderr
    bad = USER_OP.replace('ctx.set_output("Out", ctx.input("X") * ctx.attr("scale"))',
                          'x = ctx.input("X")\n    x *= 2\n    ctx.set_output("Out", x)')
    (proj / "my_ops" / "my_half_op.py").write_text(bad)
    steps = _run_steps(recipe, proj, venv, env, {})
    last = steps[-1][1]
    assert last.returncode == 1 and "::error file=my_ops/my_half_op.py" in last.stdout, last.stdout


def test_compat_ci_recipe_in_a_scratch_project(venv, tmp_path):
    recipe = doc_block("docs/compat.md", "CI recipe", "yaml")
    env = git_env(tmp_path)
    origin = user_project(tmp_path / "origin")
    sh(["git", "init", "-q", "-b", "main"], origin, env)
    sh(["git", "add", "-A"], origin, env)
    sh(["git", "commit", "-qm", "base"], origin, env)
    work = tmp_path / "work"
    sh(["git", "clone", "-q", str(origin), str(work)], tmp_path, env)
    sh(["git", "checkout", "-qb", "change"], work, env)
    # the change deletes the attr `scale`: a break
    changed = USER_OP.replace('        self.add_attr("scale", "float", "the factor").set_default(0.5)\n', "")
    changed = changed.replace('ctx.attr("scale")', "0.5")
    (work / "my_ops" / "my_half_op.py").write_text(changed)
    sh(["git", "commit", "-qam", "drop scale"], work, env)
    runner = tmp_path / "runner"
    runner.mkdir()
    env["RUNNER_TEMP"] = str(runner)
    steps = _run_steps(recipe, work, venv, env, {"${{ github.base_ref }}": "main"})
    names = [n for n, _ in steps]
    assert any("compare" in n for n in names), names
    for name, p in steps[:-1]:
        assert p.returncode == 0, (name, p.stdout, p.stderr)
    last = steps[-1][1]
    assert last.returncode == 1, last.stdout + last.stderr
    doc = json.loads((work / "compat.json").read_text())
    assert any(b["op"] == "my_half" and b["kind"] == "attr-deleted" and b["name"] == "scale"
               for b in doc["breaking"]), doc
    # and a change that breaks nothing passes
    sh(["git", "checkout", "-q", "main"], work, env)
    shutil.rmtree(tmp_path / "base")
    sh(["git", "worktree", "prune"], work, env)
    steps = _run_steps(recipe, work, venv, env, {"${{ github.base_ref }}": "main"})
    assert steps[-1][1].returncode == 0, steps[-1][1].stdout + steps[-1][1].stderr
