"""Op protos: what an op takes (inputs, outputs, attributes) and the attribute checker."""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

from opkit.framework import errors
from opkit.framework.domains import AttrDomainMixin, VarDomainMixin  # declared domains

__all__ = ["OpMaker", "OpProto", "VarProto", "AttrProto", "ATTR_TYPE_IDS", "NO_DEFAULT"]

ATTR_TYPE_IDS = {
    "int": 0, "float": 1, "string": 2, "ints": 3, "floats": 4, "strings": 5, "bool": 6,
    "bools": 7, "block": 8, "long": 9, "blocks": 10, "longs": 11, "float64s": 12, "var": 13,
    "vars": 14, "float64": 15, "scalar": 16, "scalars": 17,
}
_SHORTHAND = {int: "int", float: "float", str: "string", bool: "bool"}


class _NoDefault:
    """The marker of a required attr: one instance, kept by copy, deepcopy and pickle."""

    def __repr__(self):
        return "<no default>"

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return "NO_DEFAULT"


NO_DEFAULT = _NoDefault()


def _is_int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_float(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


_SCALAR_CHECK = {
    "int": (_is_int, int), "long": (_is_int, int),
    "float": (_is_float, float), "float64": (_is_float, float),
    "string": (lambda v: isinstance(v, str), str),
    "bool": (lambda v: isinstance(v, bool), bool),
}
_LIST_OF = {"ints": "int", "longs": "long", "floats": "float", "float64s": "float64",
            "strings": "string", "bools": "bool"}


def normalize_attr_type(attr_type) -> str:
    if attr_type in _SHORTHAND:
        return _SHORTHAND[attr_type]
    name = str(attr_type).lower()
    if name not in ATTR_TYPE_IDS:
        raise errors.InvalidArgument(
            "unknown attr type %r: use one of %s (or int, float, str, bool)", attr_type,
            ", ".join(ATTR_TYPE_IDS))
    return name


def coerce_attr(attr_type: str, value):
    """Value converted to the attr's Python type, or a ValueError saying why it cannot be."""
    if attr_type in _SCALAR_CHECK:
        ok, conv = _SCALAR_CHECK[attr_type]
        if hasattr(value, "item") and getattr(value, "ndim", 1) == 0:  # numpy scalar
            value = value.item()
        if not ok(value):
            raise ValueError(f"expected {attr_type}, got {type(value).__name__} {value!r}")
        return conv(value)
    if attr_type in _LIST_OF:
        if hasattr(value, "tolist"):
            value = value.tolist()
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"expected {attr_type} (a list), got {type(value).__name__} {value!r}")
        inner = _LIST_OF[attr_type]
        return [coerce_attr(inner, v) for v in value]
    return value  # block(s), var(s), scalar(s): taken as given


@dataclass
class VarProto(VarDomainMixin):
    name: str
    comment: str = ""
    duplicable: bool = False
    dispensable: bool = False
    intermediate: bool = False
    extra: bool = False
    quant: bool = False

    # builder calls, chainable (`add_input("X", "...").as_dispensable()`)
    def as_dispensable(self) -> "VarProto":
        self.dispensable = True
        return self

    def as_duplicable(self) -> "VarProto":
        self.duplicable = True
        return self

    def as_intermediate(self) -> "VarProto":
        self.intermediate = True
        return self

    def as_extra(self) -> "VarProto":
        self.extra = True
        return self

    def as_quant(self) -> "VarProto":
        self.quant = True
        return self

    def no_gradient(self, reason: str) -> "VarProto":
        """The op gives this float input no gradient on purpose (a label, a running
        statistic, a padding constant), for `reason`: the `every_grad` check then leaves its
        numeric gradient alone (without it, an input that moves the outputs but gets no
        gradient fails). Not part of the proto's JSON."""
        if not isinstance(reason, str) or not reason.strip():
            from opkit.framework import errors

            raise errors.InvalidArgument("input '%s': no_gradient needs a reason (a "
                                         "non-empty string)", self.name)
        self.__dict__["_no_gradient"] = reason.strip()
        return self

    @property
    def no_gradient_reason(self) -> str:
        """The reason given to `no_gradient` ("" when the input declares none)."""
        return self.__dict__.get("_no_gradient", "")


@dataclass
class AttrProto(AttrDomainMixin):
    name: str
    type: str
    comment: str = ""
    default: object = NO_DEFAULT
    generated: bool = False
    extra: bool = False
    quant: bool = False
    checks: list = field(default_factory=list)  # (description, predicate)
    op_type: str = ""
    converter: object = None  # value -> value, applied before the type check (set_converter)

    @property
    def has_default(self) -> bool:
        return self.default is not NO_DEFAULT

    @property
    def type_id(self) -> int:
        return ATTR_TYPE_IDS[self.type]

    # -- checker builder ------------------------------------------------------------------
    def set_default(self, value) -> "AttrProto":
        self.default = self._coerce(value, "default")
        self._run_checks(self.default, "default")
        return self

    def greater_than(self, bound) -> "AttrProto":
        self.checks.append((f"> {bound}", lambda v: _all(v, lambda x: x > bound)))
        return self._recheck_default()

    def less_than(self, bound) -> "AttrProto":
        self.checks.append((f"< {bound}", lambda v: _all(v, lambda x: x < bound)))
        return self._recheck_default()

    def equal_greater_than(self, bound) -> "AttrProto":
        self.checks.append((f">= {bound}", lambda v: _all(v, lambda x: x >= bound)))
        return self._recheck_default()

    def in_set(self, values) -> "AttrProto":
        allowed = list(values)
        self.checks.append((f"in {allowed}", lambda v: _all(v, lambda x: x in allowed)))
        return self._recheck_default()

    def add_custom_checker(self, fn, description: str = "") -> "AttrProto":
        name = description or getattr(fn, "__name__", "custom checker")
        self.checks.append((f"accepted by {name}", fn))
        return self._recheck_default()

    def as_extra(self) -> "AttrProto":
        self.extra = True
        return self

    def as_quant(self) -> "AttrProto":
        self.quant = True
        return self

    def set_converter(self, fn) -> "AttrProto":
        """Map a given value before it is type-checked (e.g. Paddle's VarType number of a
        dtype attr to its name); fn raises ValueError for a value it cannot map."""
        self.converter = fn
        if self.has_default:
            self.default = self._coerce(self.default, "default")
        return self

    def as_generated(self) -> "AttrProto":
        self.generated = True
        return self

    # -- checking -------------------------------------------------------------------------
    def _where(self) -> str:
        return f"attr '{self.name}' of op '{self.op_type}'" if self.op_type else f"attr '{self.name}'"

    def _coerce(self, value, what: str = "value"):
        try:
            if self.converter is not None:
                value = self.converter(value)
            return coerce_attr(self.type, value)
        except ValueError as exc:
            raise errors.InvalidArgument("%s: bad %s: %s", self._where(), what, exc) from None

    def _run_checks(self, value, what: str = "value") -> None:
        for description, predicate in self.checks:
            try:
                ok = predicate(value)
            except Exception as exc:  # a checker that raises rejects the value
                raise errors.InvalidArgument("%s: %s %r rejected by checker (%s): %s",
                                             self._where(), what, value, description,
                                             exc) from None
            if not ok:
                raise errors.InvalidArgument("%s: %s %r must be %s", self._where(), what, value,
                                             description)

    def _recheck_default(self) -> "AttrProto":
        if self.has_default:
            self._run_checks(self.default, "default")
        return self

    def check(self, value):
        """The checked and converted value; the default when value is NO_DEFAULT."""
        if value is NO_DEFAULT or value is None:
            if not self.has_default:
                raise errors.InvalidArgument("%s is required but was not given", self._where())
            value = self.default
            return list(value) if isinstance(value, list) else value
        value = self._coerce(value)
        self._run_checks(value)
        return value


def _all(value, pred) -> bool:
    if isinstance(value, (list, tuple)):
        return all(pred(x) for x in value)
    return pred(value)


@dataclass
class OpProto:
    type: str
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    attrs: list = field(default_factory=list)
    comment: str = ""

    def input(self, name: str) -> VarProto | None:
        return next((v for v in self.inputs if v.name == name), None)

    def output(self, name: str) -> VarProto | None:
        return next((v for v in self.outputs if v.name == name), None)

    def attr(self, name: str) -> AttrProto | None:
        return next((a for a in self.attrs if a.name == name), None)

    def check_attrs(self, attrs: dict | None) -> dict:
        """Every attr of the proto, checked, with defaults filled in; unknown attrs refused."""
        attrs = dict(attrs or {})
        known = {a.name for a in self.attrs}
        unknown = [k for k in attrs if k not in known and not k.startswith("@")]
        if unknown:
            raise errors.InvalidArgument(
                "op '%s' has no attr %s (its attrs: %s)", self.type,
                ", ".join(repr(u) for u in sorted(unknown)), ", ".join(sorted(known)) or "none")
        out = {k: v for k, v in attrs.items() if k.startswith("@")}
        for a in self.attrs:
            out[a.name] = a.check(attrs.get(a.name, NO_DEFAULT))
        return out


class OpMaker:
    """Describes an op: subclass it and override `make()` (Paddle's OpProtoAndCheckerMaker)."""

    def __init__(self, op_type: str = ""):
        self.proto = OpProto(type=op_type)

    def make(self) -> None:  # pragma: no cover - overridden
        raise NotImplementedError(f"{type(self).__name__}.make() must describe the op")

    def build(self) -> OpProto:
        self.make()
        names = [v.name for v in self.proto.inputs + self.proto.outputs]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise errors.AlreadyExists("op '%s' declares slot(s) %s twice", self.proto.type,
                                       ", ".join(dupes))
        return self.proto

    def add_input(self, name: str, comment: str = "") -> VarProto:
        v = VarProto(name, comment)
        self.proto.inputs.append(v)
        return v

    def add_output(self, name: str, comment: str = "") -> VarProto:
        v = VarProto(name, comment)
        self.proto.outputs.append(v)
        return v

    def add_attr(self, name: str, type, comment: str = "", default=NO_DEFAULT) -> AttrProto:
        if self.proto.attr(name) is not None:
            raise errors.AlreadyExists("op '%s' declares attr '%s' twice", self.proto.type, name)
        a = AttrProto(name, normalize_attr_type(type), comment, op_type=self.proto.type)
        self.proto.attrs.append(a)
        if default is not NO_DEFAULT:
            a.set_default(default)
        return a

    def add_comment(self, text: str) -> None:
        self.proto.comment = text
