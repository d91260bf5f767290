"""Run-wide harness settings: which places and dtypes OpTest and the checks exercise.

The run's typed options (harness.options: built once by the front door -- `opkit test`, the
pytest plugin, or the environment on first use -- and inherited by forked workers) give the
places and dtypes; `configure` / `override` restrict them further (tests, a library call).
Readers call `selected_places()` / `selected_dtypes()`. Nothing here reads the environment.
"""
from __future__ import annotations

import contextlib

from harness import options as _options
from harness.options import ALL_DTYPES, ALL_PLACES, parse_choice

_place: str | None = None   # "CPU" | "GPU" | "all" | None (= environment, else all)
_dtype: str | None = None   # "float32" | "float64" | "all" | None
_place_option = "OPKIT_PLACE"   # how the user picks places in this run (named in skip reasons)


def _parse(value, allowed: tuple, what: str) -> tuple:
    return parse_choice(value, allowed, what)


def configure(place: str | None = None, dtype: str | None = None) -> None:
    """Restrict places (`CPU`, `GPU`, `all`) and dtypes (`float32`, `float64`, `all`)."""
    global _place, _dtype
    if place is not None:
        _parse(place, ALL_PLACES, "place")
        _place = place
    if dtype is not None:
        _parse(dtype, ALL_DTYPES, "dtype")
        _dtype = dtype


def reset() -> None:
    global _place, _dtype, _place_option
    _place = _dtype = None
    _place_option = "OPKIT_PLACE"


def set_place_option(name: str) -> None:
    """Record the command-line option that picks places in this run (`--place` under
    `opkit test`, `--opkit-place` under pytest), for messages that tell the user what to
    change."""
    global _place_option
    _place_option = name


def place_option() -> str:
    """`--place / OPKIT_PLACE`, `--opkit-place / OPKIT_PLACE` or `OPKIT_PLACE`."""
    name = _place_option if _place_option != "OPKIT_PLACE" else \
        _options.current().place_option
    return name if name == "OPKIT_PLACE" else f"{name} / OPKIT_PLACE"


def selected_places() -> tuple:
    """The place kinds to run on ("CPU", "GPU"); GPU still needs a usable device."""
    if _place is not None:
        return _parse(_place, ALL_PLACES, "place")
    return tuple(_options.current().places)


def selected_dtypes() -> tuple:
    """The float dtypes to run ("float32", "float64")."""
    if _dtype is not None:
        return _parse(_dtype, ALL_DTYPES, "dtype")
    return tuple(_options.current().dtypes)


@contextlib.contextmanager
def override(place: str | None = None, dtype: str | None = None):
    """Temporarily restrict places/dtypes (tests)."""
    global _place, _dtype
    saved = (_place, _dtype)
    try:
        configure(place, dtype)
        yield
    finally:
        _place, _dtype = saved


def place_unavailable_reason(kind: str) -> str | None:
    """Why a place kind cannot run here (None: it can). CPU always runs."""
    if kind != "GPU":
        return None
    if _options.current().no_gpu:
        return "OPKIT_NO_GPU is set"
    from opkit.framework.place import cupy_unavailable_reason

    return cupy_unavailable_reason()


def unusable_selection() -> str | None:
    """When none of the selected places can run here: why (one line); else None."""
    reasons = [(p, place_unavailable_reason(p)) for p in selected_places()]
    if all(reason for _, reason in reasons):
        return "; ".join(f"{p} asked for but not usable: {r}" for p, r in reasons)
    return None


def validate_environment() -> None:
    """Raise ValueError naming the variable when an OPKIT_* variable is bad (the options are
    built from the environment: harness.options.Options.from_env)."""
    _options.Options.from_env()
