"""Run-wide harness settings: which places and dtypes OpTest and the checks exercise.

Set by the pytest plugin (`--opkit-place`, `--opkit-dtype`), by `opkit test` and by the
environment (`OPKIT_PLACE`, `OPKIT_DTYPE`, read when nothing else set them, so worker
processes inherit them). Readers call `selected_places()` / `selected_dtypes()`.
"""
from __future__ import annotations

import contextlib
import os

ALL_PLACES = ("CPU", "GPU")
ALL_DTYPES = ("float32", "float64")

_place: str | None = None   # "CPU" | "GPU" | "all" | None (= environment, else all)
_dtype: str | None = None   # "float32" | "float64" | "all" | None
_place_option = "OPKIT_PLACE"   # how the user picks places in this run (named in skip reasons)


def _parse(value: str | None, allowed: tuple, what: str) -> tuple:
    if value is None or str(value).strip().lower() in ("", "all"):
        return allowed
    picked = []
    for item in str(value).split(","):
        item = item.strip()
        match = [a for a in allowed if a.lower() == item.lower() or
                 (what == "place" and item.upper() == "CUDA" and a == "GPU")]
        if not match:
            raise ValueError(f"unknown {what} {item!r}: choose from {', '.join(allowed)} or all")
        picked.extend(m for m in match if m not in picked)
    return tuple(picked)


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
    return _place_option if _place_option == "OPKIT_PLACE" else f"{_place_option} / OPKIT_PLACE"


def selected_places() -> tuple:
    """The place kinds to run on ("CPU", "GPU"); GPU still needs a usable device."""
    return _parse(_place if _place is not None else os.environ.get("OPKIT_PLACE"),
                  ALL_PLACES, "place")


def selected_dtypes() -> tuple:
    """The float dtypes to run ("float32", "float64")."""
    return _parse(_dtype if _dtype is not None else os.environ.get("OPKIT_DTYPE"),
                  ALL_DTYPES, "dtype")


def place_selected(place) -> bool:
    kind = getattr(place, "kind", None) or str(place).upper()
    return ("GPU" if kind == "CUDA" else kind) in selected_places()


def dtype_selected(dtype) -> bool:
    import numpy as np

    return np.dtype(dtype).name in selected_dtypes()


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
    if os.environ.get("OPKIT_NO_GPU"):
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
    """Raise ValueError naming the variable when OPKIT_PLACE / OPKIT_DTYPE is bad."""
    for var, allowed, what in (("OPKIT_PLACE", ALL_PLACES, "place"),
                               ("OPKIT_DTYPE", ALL_DTYPES, "dtype")):
        value = os.environ.get(var)
        if value is not None:
            try:
                _parse(value, allowed, what)
            except ValueError as exc:
                raise ValueError(f"{var}={value}: {exc}") from None
