"""The run's options are one typed object (harness.options.Options), built once by a front
door; nothing below the front doors reads the OPKIT_* option variables."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.options import DEFAULT_SEED, Options, OptionsError, current, using

ROOT = Path(__file__).resolve().parents[2]
OPTION_VARIABLES = ("OPKIT_SEED", "OPKIT_PLACE", "OPKIT_DTYPE", "OPKIT_GRAD_MODE",
                    "OPKIT_HASH_SEEDS", "OPKIT_NO_GPU")
FRONT_DOORS = {"harness/options.py"}   # the one reader (the CLI and the plugin call it)


def test_flags_over_environment_over_defaults():
    env = {"OPKIT_SEED": "7", "OPKIT_PLACE": "cpu", "OPKIT_DTYPE": "float32",
           "OPKIT_GRAD_MODE": "exact", "OPKIT_HASH_SEEDS": "0", "OPKIT_NO_GPU": "1"}
    o = Options.from_env(env)
    assert (o.seed, o.places, o.dtypes, o.grad_mode, o.hash_seeds, o.no_gpu) == \
        (7, ("CPU",), ("float32",), "exact", False, True)
    o = Options.from_env(env, seed=3, places="all", dtypes="float64")
    assert (o.seed, o.places, o.dtypes) == (3, ("CPU", "GPU"), ("float64",))
    d = Options.from_env({})
    assert d.seed == DEFAULT_SEED and d.places == ("CPU", "GPU") and d.hash_seeds
    assert Options.from_json(d.to_json()) == d


@pytest.mark.parametrize("var,value", [("OPKIT_SEED", "x"), ("OPKIT_SEED", "-1"),
                                       ("OPKIT_PLACE", "TPU"), ("OPKIT_DTYPE", "int8")])
def test_a_bad_variable_is_named(var, value):
    with pytest.raises(OptionsError, match=var):
        Options.from_env({var: value})


def test_the_harness_reads_the_installed_options():
    from harness.options import place_unavailable_reason, selected_dtypes, selected_places
    from harness.judging.grad_judge import resolve_mode
    from harness.checks.runs.hashseed import enabled

    with using(Options(places=("CPU",), dtypes=("float64",), grad_mode="fast",
                       hash_seeds=False, no_gpu=True)):
        assert selected_places() == ("CPU",)
        assert selected_dtypes() == ("float64",)
        assert resolve_mode() == "fast"
        assert not enabled()
        assert place_unavailable_reason("GPU") == "OPKIT_NO_GPU is set"
    assert current() is not None


def test_nothing_below_the_front_doors_reads_option_variables():
    pattern = re.compile(r"(environ(\.get)?\s*[\[(]\s*|getenv\(\s*)[\"'](" +
                         "|".join(OPTION_VARIABLES) + r")[\"']")
    offenders = []
    for folder in ("harness", "opkit", "checkers"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel in FRONT_DOORS:
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{rel}:{n}: {line.strip()}")
    assert not offenders, "\n".join(offenders)
