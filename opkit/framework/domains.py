"""Declared domains: what values an attr or an input may take, beyond its type.

An op declares its contract once, in its OpMaker; the harness explores it (the `explore`
check, docs/harness.md) and `opkit dump` / `opkit compat` record and compare it
(docs/domains.md)::

    from opkit.framework import domains as D

    self.add_attr("data_format", str, "...", "NCHW").in_set(["NCHW", "NHWC"])   # a value set
    self.add_attr("alpha", float, "...", 0.02).greater_than(0.0)                  # a range
    self.add_attr("axis", int, "...", -1).set_domain(D.axis_of("X"))
    self.add_attr("dim", "ints", "...", [0]).set_domain(D.axes_of("X"))          # distinct axes
    self.add_attr("axis", "ints", "...").set_domain(D.perm_of("X"))              # a permutation
    self.add_attr("out_dtype", str, "...", "float32").set_domain(D.dtype(["float32", "int64"]))
    self.add_input("Ids", "...").set_domain(D.integers(0, D.dim("W", 0)))        # [0, rows of W)
    self.add_input("Label", "...").set_domain(D.integers(0, D.attr("depth")))
    self.add_input("X", "...").set_domain(D.finite())          # or probabilities(), positive()
    self.add_input("W", "...").as_parameter()                  # no batch dim: never zero-size

An attr's `in_set` and `greater_than`/`less_than`/`equal_greater_than` checkers are its
declared domain when `set_domain` is not called (`AttrProto.domain`). A domain is data: it
has a JSON form (`to_json` / `from_json`), a one-line description, and `covers(other)` (every
value `other` allows, this one allows too), which `opkit compat` uses to tell a narrowed
domain (breaking) from a widened one (a note).
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field

__all__ = ["Domain", "one_of", "between", "axis_of", "axes_of", "perm_of", "dtype",
           "integers", "finite", "probabilities", "positive", "nonnegative", "attr", "dim",
           "attr_domain", "var_domain", "AttrDomainMixin", "VarDomainMixin", "ATTR_KINDS",
           "INPUT_KINDS", "DTYPES"]

DTYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
          "float64")
ATTR_KINDS = ("set", "range", "axis", "axes", "perm", "dtype")
INPUT_KINDS = ("integers", "range", "finite", "probabilities", "positive", "nonnegative")


@dataclass(frozen=True)
class Ref:
    """A bound taken from the op's own description: an attr's value or an input's dim."""

    attr: str = ""
    input: str = ""
    axis: int = 0
    offset: int = 0

    def __add__(self, n: int) -> "Ref":
        return Ref(self.attr, self.input, self.axis, self.offset + int(n))

    def __sub__(self, n: int) -> "Ref":
        return self + (-int(n))

    def to_json(self):
        out = {"attr": self.attr} if self.attr else {"dim": [self.input, self.axis]}
        if self.offset:
            out["offset"] = self.offset
        return out

    def describe(self) -> str:
        text = f"attr {self.attr}" if self.attr else f"dim {self.axis} of {self.input}"
        return text + (f" {'+' if self.offset > 0 else '-'} {abs(self.offset)}"
                       if self.offset else "")

    def resolve(self, attrs: dict, shapes: dict):
        """The bound's number for a case (attrs, {input name or slot: shape}), or None."""
        if self.attr:
            v = (attrs or {}).get(self.attr)
            ok = isinstance(v, (int, float)) and not isinstance(v, bool)
            return v + self.offset if ok else None
        shape = (shapes or {}).get(self.input)
        if shape is None or not len(shape) > self.axis >= -len(shape):
            return None
        return shape[self.axis] + self.offset


def attr(name: str) -> Ref:
    """A bound equal to the value of attr `name` (e.g. one_hot's `depth`)."""
    return Ref(attr=name)


def dim(input_name: str, axis: int = 0) -> Ref:
    """A bound equal to dim `axis` of input `input_name` (e.g. the rows of a table W)."""
    return Ref(input=input_name, axis=axis)


def _bound_json(b):
    return b.to_json() if isinstance(b, Ref) else b


def _bound_from(b):
    if isinstance(b, dict):
        if "attr" in b:
            return Ref(attr=str(b["attr"]), offset=int(b.get("offset", 0)))
        if "dim" in b:
            return Ref(input=str(b["dim"][0]), axis=int(b["dim"][1]),
                       offset=int(b.get("offset", 0)))
    return b


@dataclass(frozen=True)
class Domain:
    """One declared domain. kind: one of ATTR_KINDS (attrs) or INPUT_KINDS (inputs)."""

    kind: str
    values: tuple = ()              # set, dtype
    lo: object = None               # range, integers: a number, a Ref, or None (unbounded)
    hi: object = None
    lo_open: bool = False           # range: lo excluded; integers: lo is always included
    hi_open: bool = False           # range: hi excluded; integers: hi is always excluded
    of: str = ""                    # axis, axes, perm: the input whose rank decides
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    # -- description ---------------------------------------------------------------------
    def describe(self) -> str:
        k = self.kind
        if k == "set":
            return f"one of {list(self.values)}"
        if k == "dtype":
            return f"a dtype ({', '.join(self.values)})" if self.values else "a dtype"
        if k == "axis":
            return f"an axis of {self.of}"
        if k == "axes":
            return f"distinct axes of {self.of}"
        if k == "perm":
            return f"a permutation of {self.of}'s dims"
        if k in ("range", "integers"):
            lo = "-inf" if self.lo is None else (self.lo.describe() if isinstance(self.lo, Ref)
                                                 else repr(self.lo))
            hi = "inf" if self.hi is None else (self.hi.describe() if isinstance(self.hi, Ref)
                                                else repr(self.hi))
            if k == "integers":
                return f"integers in [{lo}, {hi})"
            return f"{'(' if self.lo_open else '['}{lo}, {hi}{')' if self.hi_open else ']'}"
        return {"finite": "finite (no NaN or inf)", "probabilities": "probabilities in [0, 1]",
                "positive": "> 0", "nonnegative": ">= 0"}.get(k, k)

    def __str__(self) -> str:
        return self.describe()

    # -- JSON ----------------------------------------------------------------------------
    def to_json(self) -> dict:
        out = {"kind": self.kind}
        if self.kind in ("set", "dtype"):
            out["values"] = list(self.values)
        if self.kind in ("range", "integers"):
            out["lo"] = _bound_json(self.lo)
            out["hi"] = _bound_json(self.hi)
            if self.kind == "range":
                out["lo_open"] = bool(self.lo_open)
                out["hi_open"] = bool(self.hi_open)
        if self.of:
            out["of"] = self.of
        return out

    @classmethod
    def from_json(cls, data: dict) -> "Domain":
        return cls(kind=str(data["kind"]), values=tuple(data.get("values") or ()),
                   lo=_bound_from(data.get("lo")), hi=_bound_from(data.get("hi")),
                   lo_open=bool(data.get("lo_open", False)),
                   hi_open=bool(data.get("hi_open", False)), of=str(data.get("of", "")))

    # -- membership ----------------------------------------------------------------------
    def contains(self, value, rank: int | None = None, attrs=None, shapes=None) -> bool:
        """Whether `value` (an attr value, or an input array for input domains) is inside.
        Unknown (a bound that cannot be resolved, an axis without the rank): True."""
        import numpy as np

        k = self.kind
        if k == "set":
            vals = value if isinstance(value, (list, tuple)) else [value]
            return all(v in self.values for v in vals)
        if k == "dtype":
            return not self.values or _dtype_name(value) in self.values
        if k in ("axis", "axes", "perm"):
            if rank is None:
                return True
            vals = [value] if k == "axis" else list(value)
            if not all(isinstance(v, (int, np.integer)) and -max(rank, 1) <= v < max(rank, 1)
                       for v in vals):
                return False
            norm = [int(v) % max(rank, 1) for v in vals]
            if k == "axes":
                return len(set(norm)) == len(norm)
            if k == "perm":
                return sorted(norm) == list(range(rank))
            return True
        lo = self.lo.resolve(attrs, shapes) if isinstance(self.lo, Ref) else self.lo
        hi = self.hi.resolve(attrs, shapes) if isinstance(self.hi, Ref) else self.hi
        a = np.asarray(value)
        if a.dtype.kind not in "fiub":
            return True
        if a.size == 0:
            return True
        with np.errstate(invalid="ignore"):
            if k == "integers":
                if a.dtype.kind == "f" and not np.all(np.isfinite(a) & (a == np.round(a))):
                    return False
                return bool((lo is None or np.all(a >= lo)) and (hi is None or np.all(a < hi)))
            if k == "range":
                if a.dtype.kind == "f" and np.isnan(a).any():
                    return False
                ok_lo = lo is None or bool(np.all(a > lo) if self.lo_open else np.all(a >= lo))
                ok_hi = hi is None or bool(np.all(a < hi) if self.hi_open else np.all(a <= hi))
                return ok_lo and ok_hi
            if k == "finite":
                return a.dtype.kind != "f" or bool(np.all(np.isfinite(a)))
            if k == "probabilities":
                return bool(np.all((a >= 0) & (a <= 1)))
            if k == "positive":
                return bool(np.all(a > 0))
            if k == "nonnegative":
                return bool(np.all(a >= 0))
        return True

    def allows_nan(self) -> bool:
        return self.kind not in ("finite", "probabilities", "positive", "nonnegative",
                                 "integers", "range")

    def allows_inf(self) -> bool:
        if self.kind in ("finite", "probabilities", "integers"):
            return False
        if self.kind == "range":
            return self.lo is None or self.hi is None
        return True

    # -- comparison (opkit compat) -------------------------------------------------------
    def covers(self, other: "Domain") -> bool | None:
        """True: every value `other` allows, self allows too; False: not; None: the two
        cannot be compared (different kinds, bounds from attrs or dims)."""
        if self.kind == other.kind and self.kind in ("set", "dtype"):
            if not self.values:
                return True
            if not other.values:
                return False
            return set(other.values) <= set(self.values)
        if self.kind == other.kind and self.kind in ("axis", "axes", "perm"):
            return True if self.of == other.of else None
        if self.kind in ("range", "integers") and other.kind == self.kind:
            return _covers_bounds(self, other)
        order = {"finite": 0, "range": 0, "nonnegative": 1, "positive": 2, "probabilities": 2}
        if self.kind == "finite" and other.kind in ("nonnegative", "positive", "probabilities"):
            return True
        if self.kind == "nonnegative" and other.kind in ("positive", "probabilities"):
            return True
        if other.kind == "finite" and self.kind in ("nonnegative", "positive",
                                                    "probabilities"):
            return False
        if self.kind in ("positive", "probabilities") and other.kind == "nonnegative":
            return False
        del order
        return None


def _covers_bounds(a: Domain, b: Domain) -> bool | None:
    """[a.lo, a.hi] contains [b.lo, b.hi] (numbers only; None when a bound is a Ref)."""
    if any(isinstance(x, Ref) for x in (a.lo, a.hi, b.lo, b.hi)):
        return None if (a.lo, a.hi) != (b.lo, b.hi) else True
    lo_ok = a.lo is None or (b.lo is not None and (
        b.lo > a.lo or (b.lo == a.lo and (not a.lo_open or b.lo_open))))
    hi_ok = a.hi is None or (b.hi is not None and (
        b.hi < a.hi or (b.hi == a.hi and (not a.hi_open or b.hi_open))))
    return lo_ok and hi_ok


def _dtype_name(value) -> str:
    try:
        import numpy as np

        return np.dtype(value).name
    except TypeError:
        return str(value)


# -- constructors ----------------------------------------------------------------------------
def one_of(values) -> Domain:
    """A set of values (Paddle's InEnum): strings, numbers."""
    return Domain("set", values=tuple(values))


def between(lo=None, hi=None, lo_open: bool = False, hi_open: bool = False) -> Domain:
    """A range of numbers (Paddle's GreaterThan / LessThan); None: unbounded."""
    return Domain("range", lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)


def axis_of(input_name: str) -> Domain:
    """An int attr that is an axis of input `input_name`: -rank <= v < rank."""
    return Domain("axis", of=input_name)


def axes_of(input_name: str) -> Domain:
    """An ints attr of distinct axes of `input_name`, in any order."""
    return Domain("axes", of=input_name)


def perm_of(input_name: str) -> Domain:
    """An ints attr that is a permutation of `input_name`'s dims."""
    return Domain("perm", of=input_name)


def dtype(values=()) -> Domain:
    """A dtype attr: one of `values` (numpy dtype names); empty: any dtype."""
    return Domain("dtype", values=tuple(_dtype_name(v) for v in values))


def integers(lo=None, hi=None) -> Domain:
    """An integer-valued input with values in [lo, hi); a bound may be attr(...) or dim(...)."""
    return Domain("integers", lo=lo, hi=hi)


def finite() -> Domain:
    """An input without NaN or inf."""
    return Domain("finite")


def probabilities() -> Domain:
    """An input of probabilities: values in [0, 1]."""
    return Domain("probabilities")


def positive() -> Domain:
    return Domain("positive")


def nonnegative() -> Domain:
    return Domain("nonnegative")


# -- reading a proto -------------------------------------------------------------------------
def attr_domain(attr_proto) -> Domain | None:
    """The declared domain of an AttrProto: `set_domain`'s, else its in_set / bound checkers'
    (a range from greater_than/less_than/equal_greater_than), else None."""
    explicit = attr_proto.__dict__.get("_domain")
    if explicit is not None:
        return explicit
    lo = hi = None
    lo_open = hi_open = False
    choices = None
    for description, _ in getattr(attr_proto, "checks", []) or []:
        if description.startswith("in "):
            try:
                choices = tuple(ast.literal_eval(description[3:]))
            except (ValueError, SyntaxError):
                pass
            continue
        for op in (">=", ">", "<"):
            if description.startswith(op + " "):
                try:
                    bound = float(description[len(op) + 1:])
                except ValueError:
                    break
                if attr_proto.type in ("int", "long", "ints", "longs") and \
                        math.isfinite(bound) and bound == int(bound):
                    bound = int(bound)
                if op.startswith(">"):
                    if lo is None or bound >= lo:
                        lo, lo_open = bound, op == ">"
                else:
                    if hi is None or bound <= hi:
                        hi, hi_open = bound, True
                break
    if choices is not None:
        return one_of(choices)
    if lo is not None or hi is not None:
        return between(lo, hi, lo_open, hi_open)
    return None


def var_domain(var_proto) -> Domain | None:
    return var_proto.__dict__.get("_domain")


class AttrDomainMixin:
    """`AttrProto.set_domain(domain)` and `AttrProto.domain` (see the module doc)."""

    def set_domain(self, domain: Domain):
        if not isinstance(domain, Domain):
            from opkit.framework import errors

            raise errors.InvalidArgument("attr '%s': set_domain takes an opkit domain "
                                         "(opkit.framework.domains), got %r",
                                         getattr(self, "name", "?"), domain)
        self.__dict__["_domain"] = domain
        return self

    @property
    def domain(self) -> Domain | None:
        return attr_domain(self)


class VarDomainMixin:
    """`VarProto.set_domain(domain)`, `VarProto.as_parameter()`, `.domain`, `.parameter`."""

    def set_domain(self, domain: Domain):
        if not isinstance(domain, Domain):
            from opkit.framework import errors

            raise errors.InvalidArgument("input '%s': set_domain takes an opkit domain "
                                         "(opkit.framework.domains), got %r",
                                         getattr(self, "name", "?"), domain)
        self.__dict__["_domain"] = domain
        return self

    def as_parameter(self):
        """A parameter (weights, an embedding table): none of its dims is a batch dim, so
        the harness never derives a zero-size version of it."""
        self.__dict__["_parameter"] = True
        return self

    @property
    def domain(self) -> Domain | None:
        return var_domain(self)

    @property
    def parameter(self) -> bool:
        return bool(self.__dict__.get("_parameter"))


def input_allows(proto, inputs: dict, attrs: dict, var_name: str, array) -> bool:
    """Whether `array`, fed as variable `var_name` of a case of the op whose OpProto is
    `proto` (inputs in the OpTest format), lies inside the declared domain of its input slot
    (True without one, or without a proto). The harness's variants use it so that derived
    inputs stay inside the op's contract."""
    if proto is None:
        return True
    slot, shapes = None, {}
    for name, value in (inputs or {}).items():
        items = value if isinstance(value, list) else [(name, value)]
        for var, data in items:
            arr = data[0] if isinstance(data, tuple) else data
            shape = getattr(arr, "shape", None)
            if shape is not None:
                shapes.setdefault(name, shape)
                shapes[var] = shape
            if var == var_name:
                slot = name
    vp = proto.input(slot) if slot is not None else None
    dom = var_domain(vp) if vp is not None else None
    return dom is None or dom.contains(array, attrs=attrs, shapes=shapes)
