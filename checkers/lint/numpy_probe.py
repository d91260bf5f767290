"""Build checkers/lint/numpy_table.py from numpy itself: `python -m checkers.lint.numpy_probe`.

The linter never imports numpy; this generator does, once, and writes what it learns as
data. tests/lint/test_numpy_table.py regenerates the table in memory and fails when the
committed one differs from what the installed numpy says.

What is recorded:

* UFUNCS: every ufunc of the `numpy` namespace -> (nin, nout). Its outputs may be passed by
  position: arguments nin .. nin+nout-1 are written.
* OUT_POSITION: every other function (and array method) with an `out` parameter -> the
  position `out` may be given at (-1 when keyword-only), from its signature.
* WRITTEN_PARAM: for the functions that write their first array, that parameter's name
  (`np.copyto(dst=x, src=0)` passes it by keyword).
* ATTRS: array attributes (`T`, `real`, ...) -> the same flags, for reading the attribute.
* FUNCS / METHODS / RANDOM: what a call does to its first array argument (for methods: to
  the array it is called on; for RANDOM: to the array passed to a random generator's method
  or a `numpy.random` function), probed on small arrays (one finite and unsorted, one with a nan and an inf), keyed by the call's form: the number
  of positional arguments ("1", "2", ... for functions; "0", "1", ... for methods), or a
  keyword probe ("copy=False", "inplace=True"). The value is a string of flags: `w` the
  array is written, `v` the result is a view of it (np.shares_memory), `s` the result is a
  sequence holding views of it, `n` none of these (a new value). A form that raises on the
  probes is not recorded.
"""
from __future__ import annotations

import contextlib
import io
import pprint
import warnings
from pathlib import Path

TABLE = Path(__file__).with_name("numpy_table.py")
# never called while probing: they print, read or write files, run tests or change global state
SKIP = {"test", "show_config", "show_runtime", "info", "source", "lookfor", "seterr", "seterrcall",
        "setbufsize", "set_printoptions", "printoptions", "get_printoptions", "save", "savez",
        "savez_compressed", "savetxt", "load", "loadtxt", "genfromtxt", "fromfile", "tofile",
        "memmap", "frombuffer", "fromregex", "dump", "dumps", "set_string_function",
        "add_newdoc", "add_docstring", "deprecate", "disp", "getbufsize", "geterrcall",
        "seed", "set_state", "get_state", "setflags", "errstate", "nested_iters", "nditer",
        "busday_count", "is_busday", "busday_offset", "ndindex", "ndenumerate",
        "_add_newdoc_ufunc", "from_dlpack", "__dlpack__", "__array_function__",
        "__array_ufunc__", "__reduce__", "__reduce_ex__", "__setstate__", "__deepcopy__",
        "__copy__", "__array_wrap__", "__array_prepare__", "__array_finalize__", "__class_getitem__",
        "__init_subclass__", "__subclasshook__", "__new__", "__init__", "__del__",
        "__format__", "__sizeof__", "__dir__", "__getstate__", "__setitem__", "__delitem__",
        }


def _arrays(np):
    """Small 2-D float arrays: unsorted finite values, and one with a nan and an inf."""
    return (np.array([[5.0, 1.0, 4.0], [2.0, 6.0, 3.0]]),
            np.array([[5.0, np.nan, 4.0], [2.0, np.inf, 3.0]]))


def _patterns(np):
    """Positional argument lists tried after the array, by count (the first that works)."""
    mask = np.ones((2, 3), dtype=bool)
    return {0: [()], 1: [(1,), (-1,), ("float64",), ((2, 3),)], 2: [([0], 7.5), (mask, 7.5), (0, 1)],
            3: [(np.zeros((2, 1), dtype=np.intp), 7.5, 1)]}


def _probe(np, call, form_args, keywords=None, finite: bool = False) -> str | None:
    """Flags of one form, joined over the sample arrays (None: no sample takes it).
    `finite`: only the finite sample (random samplers given a nan or inf parameter can crash
    numpy itself, e.g. Generator.standard_gamma)."""
    flags = set()
    worked = False
    for sample in _arrays(np)[:1] if finite else _arrays(np):
        a = sample.copy()
        try:
            with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()), \
                    np.errstate(all="ignore"):
                warnings.simplefilter("ignore")
                result = call(a, *form_args, **(keywords or {}))
        except Exception:  # noqa: BLE001 - a form the callable does not take
            continue
        worked = True
        if a.shape != sample.shape or not np.array_equal(a, sample, equal_nan=True):
            flags.add("w")
        if isinstance(result, np.ndarray) and np.shares_memory(result, a):
            flags.add("v")
        elif isinstance(result, (list, tuple)) and any(
                isinstance(r, np.ndarray) and np.shares_memory(r, a) for r in result):
            flags.add("s")
    if not worked:
        return None
    return "".join(sorted(flags)) or "n"


def _forms(np, call, offset: int, params: set, finite: bool = False) -> dict:
    out = {}
    fixed = {"refcheck": False} if "refcheck" in params else {}
    for count, alternatives in _patterns(np).items():
        for args in alternatives:
            flags = _probe(np, call, args, fixed, finite)
            if flags is not None:
                out[str(count + offset)] = flags
                break
    for name, value in (("copy", False), ("inplace", True)):
        if name in params:
            for args in ((), ("float64",), (1,)):
                flags = _probe(np, call, args, {name: value, **fixed}, finite)
                if flags is not None:
                    out[f"{name}={value}"] = flags
                    break
    return out


def _params(func) -> tuple[set, int | None]:
    import inspect

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return set(), None
    names = list(sig.parameters)
    out_pos = None
    if "out" in sig.parameters:
        p = sig.parameters["out"]
        positional = [n for n in names if sig.parameters[n].kind in (
            p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        out_pos = positional.index("out") if "out" in positional else -1
    return set(names), out_pos


def _first_param(func) -> str | None:
    import inspect

    try:
        return next(iter(inspect.signature(func).parameters), None)
    except (TypeError, ValueError):
        return None


def build() -> dict:
    import numpy as np

    ufuncs, out_position, funcs, methods, random, written = {}, {}, {}, {}, {}, {}
    for name in sorted(dir(np)):
        if name.startswith("_") or name in SKIP:
            continue
        obj = getattr(np, name)
        if isinstance(obj, np.ufunc):
            ufuncs[name] = (obj.nin, obj.nout)
            continue
        if isinstance(obj, type) or not callable(obj):
            continue
        params, out_pos = _params(obj)
        if out_pos is not None:
            out_position[name] = out_pos
        forms = _forms(np, obj, 1, params)
        if forms:
            funcs[name] = forms
            first = _first_param(obj)
            if any("w" in f for f in forms.values()) and first:
                written[name] = first
    sample = _arrays(np)[0]
    for name in sorted(dir(sample)):
        if name.startswith("__") or name in SKIP:
            continue
        attr = getattr(np.ndarray, name, None)
        if not callable(attr):
            continue
        params, out_pos = _params(attr)
        if out_pos is not None:
            out_position["ndarray." + name] = max(out_pos - 1, -1) if out_pos >= 0 else -1
        forms = _forms(np, lambda a, *args, _n=name, **kw: getattr(a, _n)(*args, **kw), 0, params)
        if forms:
            methods[name] = forms
    attrs = {}
    for name in sorted(dir(sample)):
        if name.startswith("_") or callable(getattr(np.ndarray, name, None)):
            continue
        flags = _probe(np, lambda a, _n=name: getattr(a, _n), ())
        if flags is not None:
            attrs[name] = flags
    sources = [("Generator", lambda: np.random.default_rng(0)),
               ("RandomState", lambda: np.random.RandomState(0)),
               ("random", lambda: np.random)]
    for _, make in sources:
        owner = make()
        for name in sorted(dir(owner)):
            if name.startswith("_") or name in SKIP:
                continue
            if not callable(getattr(owner, name, None)) or isinstance(getattr(owner, name), type):
                continue
            params, _ = _params(getattr(owner, name))
            forms = _forms(np, lambda a, *args, _n=name, _m=make, **kw: getattr(_m(), _n)(a, *args, **kw),
                           1, params, finite=True)
            if forms:
                merged = random.setdefault(name, {})
                for key, flags in forms.items():  # a form that writes anywhere writes
                    old = merged.get(key, "")
                    merged[key] = "".join(sorted(set(old + flags) - ({"n"} if old + flags != "n" else set()))) \
                        or "n"
    return {"NUMPY_VERSION": np.__version__, "UFUNCS": ufuncs, "OUT_POSITION": out_position,
            "FUNCS": funcs, "METHODS": methods, "ATTRS": attrs, "RANDOM": random,
            "WRITTEN_PARAM": written}


def render(table: dict) -> str:
    lines = ['"""numpy semantics for `opkit lint`: GENERATED by `python -m checkers.lint.numpy_probe`',
             "from the installed numpy (see that module for what each table means). Do not edit;",
             'tests/lint/test_numpy_table.py checks it against the installed numpy."""', ""]
    for key, value in table.items():
        lines.append(f"{key} = {pprint.pformat(value, width=100, sort_dicts=True)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    TABLE.write_text(render(build()))
    print(f"wrote {TABLE}")
