"""The run's options, typed: built ONCE by a front door (`Options.from_env(**flags)`, THE
reader of the `OPKIT_*` variables), installed with `use` and inherited by forked workers.
docs/harness.md "Run options". `DEFAULT_SEED` is the one place the default seed is written.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from dataclasses import dataclass

from harness.spec import BACKEND_GROUP
from opkit.framework.place import cupy_unavailable_reason

__all__ = ["DEFAULT_SEED", "DEFAULT_TIMEOUT", "ALL_PLACES", "ALL_DTYPES", "GRAD_MODES",
           "Options", "OptionsError", "current", "use", "using", "parse_choice"]

DEFAULT_SEED = 2024
DEFAULT_EXPLORE = 24       # harness.checks.declarations.explore: derived cases per OpTest case
DEFAULT_FUZZ = 1   # harness.executing.fuzz: generated cases per OpTest class (`opkit test`)
DEFAULT_TIMEOUT = 120.0
ALL_PLACES = ("CPU", "GPU")
ALL_DTYPES = ("float32", "float64")
GRAD_MODES = ("auto", "exact", "fast", "dense")


class OptionsError(ValueError):
    """A bad option value; the message names the variable or flag it came from."""


def parse_choice(value, allowed: tuple, what: str) -> tuple:
    """`CPU`, `gpu,cpu`, `all` (or None / ""): the allowed values picked, in order."""
    if value is None or str(value).strip().lower() in ("", "all"):
        return allowed
    if isinstance(value, (tuple, list)):
        value = ",".join(value)
    picked = []
    for item in str(value).split(","):
        item = item.strip()
        match = [a for a in allowed if a.lower() == item.lower() or
                 (what == "place" and item.upper() == "CUDA" and a == "GPU")]
        if not match:
            raise ValueError(f"unknown {what} {item!r}: choose from {', '.join(allowed)} or all")
        picked.extend(m for m in match if m not in picked)
    return tuple(picked)


#: opkit's own backend (harness.backend.dispatch.DEFAULT_BACKEND): known without reading entry points
BUILTIN_BACKEND = "opkit"


def backend_names() -> list[str]:
    """"opkit" (the default), then the names of the other `opkit.backends` entry points
    (not loaded), read when first asked: `opkit test --help` needs none of them."""
    from opkit.plugins import entry_points_of

    return [BUILTIN_BACKEND, *(name for name, _ in entry_points_of(BACKEND_GROUP)
                               if name != BUILTIN_BACKEND)]


def known_backend(name: str) -> bool:
    """`name` is a backend of this installation (opkit's own without reading entry points)."""
    return name == BUILTIN_BACKEND or name in backend_names()


@dataclass(frozen=True)
class Options:
    """Everything a run's checks need to know about how the user asked for it."""

    seed: int = DEFAULT_SEED
    places: tuple = ALL_PLACES          # place kinds to run on (GPU still needs a device)
    dtypes: tuple = ALL_DTYPES          # float dtypes to run
    grad_mode: str = "auto"             # numeric gradient mode (harness.judging.grad_judge.MODES)
    hash_seeds: bool = True             # determinism across PYTHONHASHSEED (fresh processes)
    no_gpu: bool = False                # treat the GPU as unusable (OPKIT_NO_GPU)
    laws_deep: bool = False             # the law checks' larger budget (OPKIT_LAWS_DEEP=1)
    timeout: float | None = DEFAULT_TIMEOUT   # seconds per check (None: no limit)
    place_option: str = "OPKIT_PLACE"   # how the user picks places (named in skip reasons)
    explore: int = DEFAULT_EXPLORE      # derived cases per OpTest case of `explore` (0: off)
    backend: str = "opkit"              # whose kernels run the op (harness.backend.dispatch)
    against: str = ""                   # a second backend judged beside it ("": none)

    @classmethod
    def from_env(cls, environ=None, **given) -> Options:
        """The options from `given` (command-line values; None = not given) over the
        `OPKIT_*` variables over the defaults. OptionsError names a bad variable."""
        env = os.environ if environ is None else environ
        values = {k: v for k, v in given.items() if v is not None}
        for key, var in (("seed", "OPKIT_SEED"), ("explore", "OPKIT_EXPLORE")):
            text = (env.get(var) or "").strip()
            if key not in values and text:
                try:
                    values[key] = int(text)
                except ValueError:
                    raise OptionsError(f"{var}={text!r}: not an integer") from None
                if key == "seed" and values[key] < 0:
                    raise OptionsError(f"OPKIT_SEED={text!r}: must be >= 0")
        for key, var, allowed, what in (("places", "OPKIT_PLACE", ALL_PLACES, "place"),
                                        ("dtypes", "OPKIT_DTYPE", ALL_DTYPES, "dtype")):
            raw, source = values.get(key), None
            if raw is None and env.get(var) is not None:
                raw, source = env.get(var), var
            try:
                values[key] = parse_choice(raw, allowed, what)
            except ValueError as exc:
                raise OptionsError(f"{source}={raw}: {exc}" if source else str(exc)) from None
        values.setdefault("grad_mode", (env.get("OPKIT_GRAD_MODE") or "auto").strip().lower())
        if values["grad_mode"] not in GRAD_MODES:
            raise OptionsError(f"unknown gradient check mode {values['grad_mode']!r}: "
                               f"choose from {', '.join(GRAD_MODES)}")
        values.setdefault("hash_seeds", env.get("OPKIT_HASH_SEEDS", "1").strip().lower()
                          not in ("0", "", "no", "false"))
        values.setdefault("no_gpu", bool(env.get("OPKIT_NO_GPU")))
        values.setdefault("laws_deep", (env.get("OPKIT_LAWS_DEEP") or "").strip() == "1")
        if "backend" not in values and (env.get("OPKIT_BACKEND") or "").strip():
            values["backend"] = env["OPKIT_BACKEND"].strip().lower()
        for key in ("backend", "against"):
            if values.get(key) and not known_backend(values[key]):
                raise OptionsError(f"unknown backend {values[key]!r}"
                                   + (" (OPKIT_BACKEND)" if key == "backend" and
                                      "backend" not in given else "")
                                   + ": choose from " + ", ".join(backend_names()))
        if values.get("explore", 0) < 0:
            raise OptionsError(f"explore budget {values['explore']}: must be >= 0")
        return cls(**values)

    def replace(self, **changes) -> Options:
        return dataclasses.replace(self, **changes)

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Options:
        data = json.loads(text)
        for key in ("places", "dtypes"):
            data[key] = tuple(data[key])
        return cls(**data)


_current: Options | None = None


def current() -> Options:
    """The run's options: what the front door installed, else (a library call, a plain
    unittest run) the environment's, read once."""
    global _current
    if _current is None:
        _current = Options.from_env()
    return _current


def use(options: Options | None) -> None:
    """Install the run's options (a front door); None: read the environment again on next
    use."""
    global _current
    _current = options


@contextlib.contextmanager
def using(options: Options):
    """Temporarily install `options` (tests, nested runs)."""
    saved = _current
    use(options)
    try:
        yield options
    finally:
        use(saved)


# -- process flags: variables the harness sets for its own child processes -------------------
HASHSEED_CHILD_ENV = "OPKIT_HASHSEED_CHILD"         # a child of the hash-seed comparison


def compat_env(mode: str) -> str:
    """The process flag of the compatibility mode `mode` (an entry point of
    harness.spec.COMPAT_GROUP): OPKIT_ and its name in capitals."""
    return "OPKIT_" + mode.upper()


def flag(name: str) -> bool:
    """Whether the process flag `name` is set: HASHSEED_CHILD_ENV, a compatibility mode's
    `compat_env`, or a plugin's own OPKIT_* switch."""
    if not name.startswith("OPKIT_"):
        raise ValueError(f"not a process flag: {name}")
    return bool(os.environ.get(name))


def env_text(name: str) -> str:
    """The text of the environment variable `name` ("" when unset): the one reader of
    OPKIT_* variables that are paths or names, not switches."""
    return os.environ.get(name, "")


def set_flag(name: str, on: bool) -> None:
    """Set (or clear) a process flag, for the child processes this process starts."""
    flag(name)   # validates the name
    if on:
        os.environ[name] = "1"
    else:
        os.environ.pop(name, None)


# -- the run's places and dtypes ----------------------------------------------------------
def selected_places() -> tuple:
    """The place kinds to run on ("CPU", "GPU"); GPU still needs a usable device."""
    return tuple(current().places)


def selected_dtypes() -> tuple:
    """The float dtypes to run ("float32", "float64")."""
    return tuple(current().dtypes)


@contextlib.contextmanager
def override(place: str | None = None, dtype: str | None = None):
    """Temporarily restrict places (`CPU`, `GPU`, `all`) and dtypes (`float32`, `float64`,
    `all`): the current options with those replaced."""
    changes = {}
    if place is not None:
        changes["places"] = parse_choice(place, ALL_PLACES, "place")
    if dtype is not None:
        changes["dtypes"] = parse_choice(dtype, ALL_DTYPES, "dtype")
    with using(current().replace(**changes)):
        yield


def set_place_option(name: str) -> None:
    """Record the command-line option that picks places in this run (`--place` under
    `opkit test`, `--opkit-place` under pytest), for messages that tell the user what to
    change."""
    use(current().replace(place_option=name))


def place_option() -> str:
    """`--place / OPKIT_PLACE`, `--opkit-place / OPKIT_PLACE` or `OPKIT_PLACE`."""
    name = current().place_option
    return name if name == "OPKIT_PLACE" else f"{name} / OPKIT_PLACE"


def place_unavailable_reason(kind: str) -> str | None:
    """Why a place kind cannot run here (None: it can). CPU always runs."""
    if kind != "GPU":
        return None
    if current().no_gpu:
        return "OPKIT_NO_GPU is set"
    return cupy_unavailable_reason()


def unusable_selection() -> str | None:
    """When none of the selected places can run here: why (one line); else None."""
    reasons = [(p, place_unavailable_reason(p)) for p in selected_places()]
    if all(reason for _, reason in reasons):
        return "; ".join(f"{p} asked for but not usable: {r}" for p, r in reasons)
    return None


def validate_environment() -> None:
    """Raise OptionsError naming the variable when an OPKIT_* variable is bad."""
    Options.from_env()
