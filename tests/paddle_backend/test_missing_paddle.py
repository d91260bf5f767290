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
