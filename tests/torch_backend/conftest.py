"""The torch backend's tests skip, with the reason, where torch is not installed."""
import pytest

from opkit_torch import env

WHY = env.missing()

# the red team's OpTests run through `opkit test --backend torch` (red_team/measure.py), not
# as pytest items of this suite (their own test_* methods would run on opkit's backend)
collect_ignore_glob = ["red_team/test_*.py"]
if WHY is None:
    import torch_test_ops  # noqa: F401 - registers the custom ops the tests run
    from opkit_torch.optests import mylib_ops  # noqa: F401 - mylib::scaled_softplus


def pytest_configure(config):
    config.addinivalue_line("markers", "no_torch_needed: runs without torch installed")


def pytest_collection_modifyitems(config, items):
    if WHY is None:
        return
    here = __file__.rsplit("/", 1)[0]
    for item in items:
        if str(item.fspath).startswith(here) and "no_torch_needed" not in item.keywords:
            item.add_marker(pytest.mark.skip(reason=WHY))


@pytest.fixture
def torch_backend():
    """The run's backend is torch for the test."""
    from harness import options

    saved = options.current()
    options.use(saved.replace(backend="torch"))
    try:
        yield
    finally:
        options.use(saved)
