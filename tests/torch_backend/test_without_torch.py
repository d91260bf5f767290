"""Without torch installed, `--backend torch` is a usage error naming torch and the extra."""
import importlib.util

import pytest

from opkit_torch import env


@pytest.fixture
def no_torch(monkeypatch):
    real = importlib.util.find_spec

    def find_spec(name, *args, **kwargs):
        return None if name == "torch" else real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    env.missing.cache_clear()
    yield
    env.missing.cache_clear()


@pytest.mark.no_torch_needed
def test_the_reason_names_torch_and_the_extra(no_torch):
    why = env.missing()
    assert "'torch'" in why and "opkit-dl[torch]" in why


@pytest.mark.no_torch_needed
def test_opkit_test_backend_torch_exits_2(no_torch, capsys):
    from opkit.cli.main import main

    try:
        code = main(["test", "aten::relu", "--backend", "torch"])
    except SystemExit as exc:
        code = exc.code
    err = capsys.readouterr().err
    assert code == 2
    assert "--backend torch" in err and "'torch'" in err and "opkit-dl[torch]" in err
    assert "Traceback" not in err
