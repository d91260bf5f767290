"""pytest plugin of opkit (entry point `pytest11: opkit`).

Options:
  --opkit-place CPU|GPU|all     places OpTest runs its checks on (default all)
  --opkit-dtype float32|float64|all
                                float dtypes OpTest runs (default all)
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


def pytest_configure(config):
    from harness import settings

    place = config.getoption("--opkit-place", default=None)
    dtype = config.getoption("--opkit-dtype", default=None)
    if place:
        place = place.upper() if place.lower() != "all" else "all"
        settings.configure(place=place)
        os.environ["OPKIT_PLACE"] = place
    if dtype:
        settings.configure(dtype=dtype)
        os.environ["OPKIT_DTYPE"] = dtype


def pytest_report_header(config):
    from harness import settings

    try:
        return (f"opkit: places {','.join(settings.selected_places())}, dtypes "
                f"{','.join(settings.selected_dtypes())}")
    except ValueError as exc:  # a bad OPKIT_PLACE / OPKIT_DTYPE
        return f"opkit: {exc}"
