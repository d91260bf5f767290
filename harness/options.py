"""The run's options, typed: built ONCE by a front door and handed to every worker.

The front doors are `opkit test` (opkit.cli.test), the pytest plugin (harness.pytest_plugin)
and, for a library call or a plain `unittest` run of an OpTest, the first use of `current()`.
Each builds one `Options` with `Options.from_env(**given)` -- THE one reader of the `OPKIT_*`
environment variables (`OPKIT_SEED`, `OPKIT_PLACE`, `OPKIT_DTYPE`, `OPKIT_GRAD_MODE`,
`OPKIT_HASH_SEEDS`, `OPKIT_NO_GPU`, `OPKIT_BACKEND`), command-line values taking precedence -- and installs it
with `use(options)`. Forked workers inherit it; a fresh interpreter gets it as JSON
(`to_json` / `from_json`). Nothing below the front doors reads those variables.

`DEFAULT_SEED` is the one place the default seed is written.
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from dataclasses import dataclass

__all__ = ["DEFAULT_SEED", "DEFAULT_TIMEOUT", "ALL_PLACES", "ALL_DTYPES", "GRAD_MODES",
           "Options", "OptionsError", "current", "use", "using", "parse_choice"]

DEFAULT_SEED = 2024
DEFAULT_EXPLORE = 24       # harness.checks.explore: derived cases per OpTest case
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


@dataclass(frozen=True)
class Options:
    """Everything a run's checks need to know about how the user asked for it."""

    seed: int = DEFAULT_SEED
    places: tuple = ALL_PLACES          # place kinds to run on (GPU still needs a device)
    dtypes: tuple = ALL_DTYPES          # float dtypes to run
    grad_mode: str = "auto"             # numeric gradient mode (harness.checks.grad.MODES)
    hash_seeds: bool = True             # determinism across PYTHONHASHSEED (fresh processes)
    no_gpu: bool = False                # treat the GPU as unusable (OPKIT_NO_GPU)
    timeout: float | None = DEFAULT_TIMEOUT   # seconds per check (None: no limit)
    place_option: str = "OPKIT_PLACE"   # how the user picks places (named in skip reasons)
    explore: int = DEFAULT_EXPLORE      # derived cases per OpTest case of `explore` (0: off)
    backend: str = "opkit"              # whose kernels run the op (harness.backends)
    against: str = ""                   # a second backend judged beside it ("": none)

    @classmethod
    def from_env(cls, environ=None, **given) -> Options:
        """The options from `given` (command-line values; None = not given) over the
        `OPKIT_*` variables over the defaults. OptionsError names a bad variable."""
        env = os.environ if environ is None else environ
        values = {k: v for k, v in given.items() if v is not None}
        if "seed" not in values:
            text = (env.get("OPKIT_SEED") or "").strip()
            if text:
                try:
                    values["seed"] = int(text)
                except ValueError:
                    raise OptionsError(f"OPKIT_SEED={text!r}: not an integer") from None
                if values["seed"] < 0:
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
        if "grad_mode" not in values:
            values["grad_mode"] = (env.get("OPKIT_GRAD_MODE") or "auto").strip().lower()
        if values["grad_mode"] not in GRAD_MODES:
            raise OptionsError(f"unknown gradient check mode {values['grad_mode']!r}: "
                               f"choose from {', '.join(GRAD_MODES)}")
        if "hash_seeds" not in values:
            values["hash_seeds"] = (env.get("OPKIT_HASH_SEEDS", "1").strip().lower()
                                    not in ("0", "", "no", "false"))
        if "no_gpu" not in values:
            values["no_gpu"] = bool(env.get("OPKIT_NO_GPU"))
        if "explore" not in values and (env.get("OPKIT_EXPLORE") or "").strip():
            text = env["OPKIT_EXPLORE"].strip()
            try:
                values["explore"] = int(text)
            except ValueError:
                raise OptionsError(f"OPKIT_EXPLORE={text!r}: not an integer") from None
        if "backend" not in values and (env.get("OPKIT_BACKEND") or "").strip():
            values["backend"] = env["OPKIT_BACKEND"].strip().lower()
        for key in ("backend", "against"):
            if values.get(key) and values[key] not in ("opkit", "paddle"):
                raise OptionsError(f"unknown backend {values[key]!r}"
                                   + (" (OPKIT_BACKEND)" if key == "backend" and
                                      "backend" not in given else "")
                                   + ": choose from opkit, paddle")
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
    global _current
    saved = _current
    _current = options
    try:
        yield options
    finally:
        _current = saved
