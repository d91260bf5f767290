"""pytest plugin of opkit (entry point `pytest11: opkit`).

Options:
  --opkit-place CPU|GPU|all     places OpTest runs its checks on (default all)
  --opkit-dtype float32|float64|all
                                float dtypes OpTest runs (default all)
  --opkit-paddle                Paddle-compatibility mode: run Paddle's own OpTest files
                                unchanged (harness.paddle_compat; also OPKIT_PADDLE=1)
They set `harness.settings` (and OPKIT_PLACE / OPKIT_DTYPE, so pytest-xdist workers and
subprocesses agree); OpTest reads them through `harness.settings.selected_places()` /
`selected_dtypes()`.
"""
from __future__ import annotations

import os


def pytest_addoption(parser):
    group = parser.getgroup("opkit", "opkit op tests")
    group.addoption("--opkit-place", action="store", default=None,
                    choices=["CPU", "GPU", "all", "cpu", "gpu"],
                    help="places OpTest checks run on: CPU, GPU or all (default all)")
    group.addoption("--opkit-dtype", action="store", default=None,
                    choices=["float32", "float64", "all"],
                    help="float dtypes OpTest checks run: float32, float64 or all (default all)")
    group.addoption("--opkit-paddle", action="store_true", default=False,
                    help="Paddle-compatibility mode: run Paddle's OpTest files unchanged "
                         "(provides their `op_test` module and a CPU-only `paddle` facade)")


def pytest_configure(config):
    from harness import settings

    if config.getoption("--opkit-paddle", default=False) or os.environ.get("OPKIT_PADDLE"):
        from harness import paddle_compat

        paddle_compat.activate()
    place = config.getoption("--opkit-place", default=None)
    dtype = config.getoption("--opkit-dtype", default=None)
    if place:
        place = place.upper() if place.lower() != "all" else "all"
        settings.configure(place=place)
        os.environ["OPKIT_PLACE"] = place
    if dtype:
        settings.configure(dtype=dtype)
        os.environ["OPKIT_DTYPE"] = dtype


def pytest_ignore_collect(collection_path, config):
    """In the Paddle mode, Paddle's own harness files beside the tests are not test files."""
    if config.getoption("--opkit-paddle", default=False) or os.environ.get("OPKIT_PADDLE"):
        from harness import paddle_compat

        return True if paddle_compat.is_paddle_harness_file(collection_path) else None
    return None


def pytest_report_header(config):
    from harness import settings

    try:
        return (f"opkit: places {','.join(settings.selected_places())}, dtypes "
                f"{','.join(settings.selected_dtypes())}")
    except ValueError as exc:  # a bad OPKIT_PLACE / OPKIT_DTYPE
        return f"opkit: {exc}"
