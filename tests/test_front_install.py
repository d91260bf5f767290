"""A newcomer's path, for real, with what a user has: a scratch copy (clone) of this
repository, the release build of docs/tutorial.md ("A release for your team": a wheel built
with pip, pinned in a requirements file) installed into a fresh virtual environment, the
README's install command (`pip install ./opkit`), the built-in OpTests from any folder,
`--all` in a user's project, both pre-commit configurations of docs/lint.md with real
pre-commit, and the CI recipes of docs/lint.md and docs/compat.md run step by step in
scratch projects. Every recipe is taken from the docs and run as written (only a
placeholder path or commit hash is filled in).

Slow (one install into a fresh environment and one in pre-commit's, a minute or two): the
installs happen once per module. The copy is of the committed HEAD (uncommitted edits are
not in it)."""
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
RELEASE = "A release for your team"

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def sh(cmd, cwd, env=None, timeout=1800, check=True):
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


def doc_block(doc: str, section: str, lang: str, index: int = 0) -> str:
    """The `index`-th ```lang block under the '## section' (or '### section') heading of
    `doc`, up to the next '## ' heading."""
    text = (ROOT / doc).read_text(encoding="utf-8")
    start = text.index(f"## {section}\n")
    end = text.find("\n## ", start + 3)
    body = text[start:end if end > 0 else None]
    blocks = re.findall(rf"```{lang}\n(.*?)```", body, re.S)
    assert len(blocks) > index, f"{doc}: no ```{lang} block #{index} under ## {section}"
    return blocks[index]


def git_env(home: Path) -> dict:
    return dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.com",
                GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.com",
                HOME=str(home), GIT_CONFIG_NOSYSTEM="1")


def with_path(bin_dir, env=None) -> dict:
    full = dict(env or os.environ, NO_COLOR="1", PATH=f"{bin_dir}:{os.environ['PATH']}")
    full.pop("PYTHONPATH", None)
    full.pop("VIRTUAL_ENV", None)
    return full


def run_block(block: str, cwd: Path, bin_dir, timeout=1800):
    """A shell block of the docs, as written, with `bin_dir` first on PATH (an activated
    environment)."""
    return subprocess.run(["bash", "-e", "-c", block], cwd=cwd, capture_output=True,
                          text=True, env=with_path(bin_dir), timeout=timeout)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A copy of this repository's HEAD in a folder `opkit`, as a user has one."""
    base = tmp_path_factory.mktemp("copy")
    dest = base / "opkit"
    head = sh(["git", "rev-parse", "HEAD"], ROOT).stdout.strip()
    sh(["git", "clone", "-q", "--no-checkout", str(ROOT), str(dest)], base)
    sh(["git", "checkout", "-q", head], dest)
    return dest


@pytest.fixture(scope="module")
def wheel(clone):
    """The release build of docs/tutorial.md, run as written next to the copy."""
    build = doc_block("docs/tutorial.md", RELEASE, "bash")
    assert build.startswith("cd opkit\n") and "pip wheel" in build, build
    p = run_block(build, clone.parent, Path(sys.executable).parent)
    if p.returncode != 0 and ("No matching distribution" in p.stderr or
                              "Could not find a version" in p.stderr):
        pytest.skip(f"building the wheel needs setuptools from a package index: "
                    f"{p.stderr.strip().splitlines()[-1]}")
    assert p.returncode == 0, p.stdout + p.stderr
    assert sh(["git", "rev-parse", "HEAD"], clone).stdout.strip() in p.stdout
    (built,) = (clone / "dist").glob("opkit_dl-*.whl")
    assert built.name == f"opkit_dl-{version()}-py3-none-any.whl", built
    return built


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh virtual environment with opkit installed as a team project pins it: the
    requirements file of docs/tutorial.md (its shared folder is the wheel's)."""
    requirements = doc_block("docs/tutorial.md", RELEASE, "text")
    assert f"opkit-dl=={version()}" in requirements and "/shared/wheels" in requirements
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert "`pip install -r requirements-dev.txt` installs exactly that build" in text
    base = tmp_path_factory.mktemp("team")
    (base / "requirements-dev.txt").write_text(
        requirements.replace("/shared/wheels", str(wheel.parent)))
    env_dir = base / "env"
    sh([sys.executable, "-m", "venv", str(env_dir)], base)
    p = run_block("pip install -q -r requirements-dev.txt", base, env_dir / "bin")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return env_dir


def requirements_file(wheel: Path) -> str:
    """The tutorial's pin, pointing at the wheel's folder (a project's requirements-dev.txt)."""
    return doc_block("docs/tutorial.md", RELEASE, "text").replace("/shared/wheels",
                                                                  str(wheel.parent))


def opkit_in(venv, *args, cwd, env=None, timeout=1800):
    full = dict(os.environ, NO_COLOR="1", PATH=f"{venv / 'bin'}:{os.environ['PATH']}")
    full.pop("PYTHONPATH", None)
    full.update(env or {})
    return subprocess.run([str(venv / "bin" / "opkit"), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=timeout, env=full)


def test_the_readme_install_command_from_a_copy(venv, clone):
    """README's `pip install ./opkit`, as written, in the folder that holds the copy."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = doc_block("README.md", "Installing opkit into your own project", "bash")
    assert block.strip() == "pip install ./opkit", block
    assert "git+" not in readme and "@v" not in readme   # no URL or tag a user does not have
    p = run_block(block, clone.parent, venv / "bin")
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    assert opkit_in(venv, "--version", cwd=clone.parent).stdout.strip() == \
        f"opkit {version()}"


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


def user_project(path: Path, op_source: str = USER_OP, requirements: str = "") -> Path:
    (path / "my_ops").mkdir(parents=True)
    if requirements:
        (path / "requirements-dev.txt").write_text(requirements)
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


def _pre_commit() -> str:
    found = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")
    if not Path(found).exists():
        pytest.skip("pre-commit is not installed")
    return found


def _pre_commit_run(config: str, tmp_path, bin_dirs) -> tuple:
    """`pre-commit run --all-files` with `config` in a user project, then again after a
    kernel that writes to its input was staged."""
    proj = user_project(tmp_path / "proj")
    (proj / ".pre-commit-config.yaml").write_text(config)
    env = git_env(tmp_path)
    env["PRE_COMMIT_HOME"] = str(tmp_path / "pre-commit-home")
    env = with_path(":".join(str(b) for b in bin_dirs), env)
    sh(["git", "init", "-q"], proj, env)
    sh(["git", "add", "-A"], proj, env)
    good = sh([_pre_commit(), "run", "--all-files"], proj, env, timeout=1800, check=False)
    bad = USER_OP.replace('ctx.set_output("Out", ctx.input("X") * ctx.attr("scale"))',
                          'x = ctx.input("X")\n    x *= 2\n    ctx.set_output("Out", x)')
    (proj / "my_ops" / "my_half_op.py").write_text(bad)
    sh(["git", "add", "-A"], proj, env)
    failing = sh([_pre_commit(), "run", "--all-files"], proj, env, timeout=1800, check=False)
    return good, failing


def test_pre_commit_local_hook_works_as_written(venv, tmp_path):
    """The `repo: local` hook runs the installed `opkit lint`: no remote, no tag."""
    pre_commit = Path(_pre_commit()).parent
    snippet = doc_block("docs/lint.md", "pre-commit", "yaml")
    assert "repo: local" in snippet and "rev:" not in snippet, snippet
    good, failing = _pre_commit_run(snippet, tmp_path, [venv / "bin", pre_commit])
    assert good.returncode == 0 and "Passed" in good.stdout, good.stdout + good.stderr
    assert failing.returncode == 1 and "OPK001" in failing.stdout, \
        failing.stdout + failing.stderr


def test_pre_commit_hook_at_a_commit_of_your_copy(clone, tmp_path):
    """The second configuration: pre-commit installs opkit from a copy at a commit hash."""
    snippet = doc_block("docs/lint.md", "pre-commit", "yaml", index=1)
    assert "repo: /path/to/your/opkit" in snippet and "rev: <full commit hash>" in snippet
    head = sh(["git", "rev-parse", "HEAD"], clone).stdout.strip()
    config = snippet.replace("/path/to/your/opkit", str(clone)).replace(
        "<full commit hash>", head)
    good, failing = _pre_commit_run(config, tmp_path, [Path(_pre_commit()).parent])
    if good.returncode != 0 and "Could not find a version" in good.stdout + good.stderr:
        pytest.skip("pre-commit's environment needs opkit's dependencies from an index")
    assert good.returncode == 0 and "Passed" in good.stdout, good.stdout + good.stderr
    assert failing.returncode == 1 and "OPK001" in failing.stdout, \
        failing.stdout + failing.stderr


def _run_steps(yaml_text: str, cwd: Path, venv: Path, env: dict, subst: dict) -> list:
    """Run the `run:` steps of a GitHub Actions job, every one as written (the install step
    installs the project's requirements-dev.txt into `venv`, where they are satisfied)."""
    import yaml

    doc = yaml.safe_load(yaml_text)
    (job,) = doc["jobs"].values()
    results = []
    for step in job["steps"]:
        if "run" not in step:
            continue
        script = step["run"]
        for a, b in subst.items():
            script = script.replace(a, b)
        full = dict(env, PATH=f"{venv / 'bin'}:{os.environ['PATH']}", NO_COLOR="1")
        p = subprocess.run(["bash", "-e", "-c", script], cwd=cwd, capture_output=True,
                           text=True, env=full, timeout=1800)
        results.append((step.get("name", script), p))
        if p.returncode != 0:
            break
    return results


def test_lint_ci_recipe_in_a_scratch_project(venv, wheel, tmp_path):
    recipe = doc_block("docs/lint.md", "CI recipe", "yaml")
    assert "pip install -q -r requirements-dev.txt" in recipe, recipe
    proj = user_project(tmp_path / "proj", requirements=requirements_file(wheel))
    env = dict(os.environ)
    steps = _run_steps(recipe, proj, venv, env, {})
    assert steps and steps[-1][1].returncode == 0, steps[-1][1].stdout + steps[-1][1].stderr
    bad = USER_OP.replace('ctx.set_output("Out", ctx.input("X") * ctx.attr("scale"))',
                          'x = ctx.input("X")\n    x *= 2\n    ctx.set_output("Out", x)')
    (proj / "my_ops" / "my_half_op.py").write_text(bad)
    steps = _run_steps(recipe, proj, venv, env, {})
    last = steps[-1][1]
    assert last.returncode == 1 and "::error file=my_ops/my_half_op.py" in last.stdout, last.stdout


def test_compat_ci_recipe_in_a_scratch_project(venv, wheel, tmp_path):
    recipe = doc_block("docs/compat.md", "CI recipe", "yaml")
    assert "pip install -q -r requirements-dev.txt" in recipe, recipe
    env = git_env(tmp_path)
    origin = user_project(tmp_path / "origin", requirements=requirements_file(wheel))
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
