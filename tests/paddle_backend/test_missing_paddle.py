"""Without PaddlePaddle installed, `--backend paddle` / `--against paddle` are usage errors
naming the package and the extra (runs with or without Paddle: the import is hidden)."""
from __future__ import annotations

import pytest

from paddle_backend_helpers import run_opkit

HIDE = "sys.modules['paddle'] = None"     # importlib.util.find_spec('paddle') -> None


@pytest.mark.parametrize("flag", ["--backend", "--against"])
def test_missing_paddle_is_exit_2_naming_package_and_extra(flag):
    p = run_opkit("test", "softmax", flag, "paddle", pre=HIDE)
    assert p.returncode == 2, (p.returncode, p.stderr[-2000:])
    assert "Traceback" not in p.stderr
    assert "paddlepaddle" in p.stderr and "opkit-dl[paddle]" in p.stderr, p.stderr
    assert len([ln for ln in p.stderr.splitlines() if ln.strip()]) == 1, p.stderr


def test_unknown_backend_in_environment_is_named():
    from harness.options import Options, OptionsError

    with pytest.raises(OptionsError, match="OPKIT_BACKEND"):
        Options.from_env({"OPKIT_BACKEND": "tensorflow"})
    assert Options.from_env({"OPKIT_BACKEND": "paddle"}).backend == "paddle"
    assert Options.from_env({}).backend == "opkit"


def test_pytest_opkit_backend_paddle_without_paddle_is_a_usage_error(tmp_path):
    """`pytest --opkit-paddle --opkit-backend paddle` without Paddle: one usage error naming
    the package and the extra, exit 4 (pytest's usage-error status), no traceback."""
    import subprocess
    import sys

    from paddle_backend_helpers import ROOT

    test = tmp_path / "test_nothing.py"
    test.write_text("def test_nothing():\n    pass\n")
    code = (f"import sys, pytest; {HIDE}; sys.exit(pytest.main(['-p', 'no:xdist', '-p', "
            f"'no:cacheprovider', '--opkit-paddle', '--opkit-backend', 'paddle', "
            f"{str(test)!r}]))")
    p = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                       text=True, timeout=1800)
    assert p.returncode == 4, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert "Traceback" not in p.stderr
    assert "--opkit-backend paddle" in p.stderr and "opkit-dl[paddle]" in p.stderr, p.stderr
