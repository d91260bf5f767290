"""The `repo: local` pre-commit recipe of docs/lint.md, taken from the doc and run as written
with real pre-commit on C++ sources (and a Python file beside them): a staged `.cc`, `.cu`
and `.h` each fail the hook, their fixed versions pass.

`language: system` installs nothing: the hook runs the `opkit` of this environment, which
is put first on PATH, as the doc says (activate the project's environment)."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent

BAD = {
    "paddle/fluid/operators/cos_sim_op.cc":
        "void Check(int a, int b) {\n  PADDLE_ENFORCE_EQ(a, b);\n}\n",
    "paddle/fluid/operators/cos_sim_op.cu":
        "REGISTER_OP_CUDA_KERNEL(\n    cos_sim, ops::CosSimKernel<plat::CUDADeviceContext, float>);\n",
    "paddle/fluid/operators/cos_sim_op.h":
        "void Compute(const framework::ExecutionContext& ctx) const {\n"
        "  auto* x = ctx.Input<Tensor>(\"X\");\n  const_cast<Tensor*>(x)->Resize({1});\n}\n",
}
GOOD = {
    "paddle/fluid/operators/cos_sim_op.cc":
        "void Check(int a, int b) {\n  PADDLE_ENFORCE_EQ(a, b, platform::errors::InvalidArgument(\"a != b\"));\n}\n",
    "paddle/fluid/operators/cos_sim_op.cu":
        "REGISTER_OP_CUDA_KERNEL(\n    cos_sim, ops::CosSimKernel<plat::CUDADeviceContext, float>,\n"
        "    ops::CosSimKernel<plat::CUDADeviceContext, double>);\n",
    "paddle/fluid/operators/cos_sim_op.h":
        "void Compute(const framework::ExecutionContext& ctx) const {\n"
        "  auto* x = ctx.Input<Tensor>(\"X\");\n  Tensor y = *x;\n  y.Resize({1});\n}\n",
}


def _recipe() -> str:
    text = (ROOT / "docs" / "lint.md").read_text(encoding="utf-8")
    start = text.index("## pre-commit\n")
    body = text[start:text.find("\n## ", start + 3)]
    return re.findall(r"```yaml\n(.*?)```", body, re.S)[0]


def _pre_commit() -> str:
    exe = BIN / "pre-commit"
    if exe.exists():
        return str(exe)
    if shutil.which("pre-commit") is None:
        pytest.skip("pre-commit is not installed")
    return shutil.which("pre-commit")


@pytest.mark.slow
def test_local_recipe_lints_staged_cpp_files(tmp_path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    if not (BIN / "opkit").exists():
        pytest.skip("the opkit command is not installed in this environment")
    recipe = _recipe()
    assert "repo: local" in recipe and "c++" in recipe and "cuda" in recipe, recipe
    work = tmp_path / "paddle"
    work.mkdir()
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}", NO_COLOR="1",
               PRE_COMMIT_HOME=str(tmp_path / "pc-home"), HOME=str(tmp_path),
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_NOSYSTEM="1")
    env.pop("VIRTUAL_ENV", None)

    def sh(*args, check=True):
        return subprocess.run(list(args), cwd=work, env=env, capture_output=True, text=True,
                              timeout=1800, check=check)

    sh("git", "init", "-q")
    (work / ".pre-commit-config.yaml").write_text(recipe)
    (work / "pyproject.toml").write_text("[project]\nname = 'paddle'\n")
    for rel, text in BAD.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_text(text)
    sh("git", "add", "-A")
    failing = sh(_pre_commit(), "run", "--all-files", check=False)
    out = failing.stdout + failing.stderr
    assert failing.returncode == 1, out
    for rel, code in zip(BAD, ("OPK002", "OPK003", "OPK001")):
        assert re.search(rf"{re.escape(rel)}:\d+:\d+: {code}", out), (rel, out)
    for rel, text in GOOD.items():
        (work / rel).write_text(text)
    sh("git", "add", "-A")
    passing = sh(_pre_commit(), "run", "--all-files", check=False)
    assert passing.returncode == 0 and "Passed" in passing.stdout, passing.stdout + passing.stderr
