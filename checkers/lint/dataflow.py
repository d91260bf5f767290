"""Flow-sensitive tracking of kernel inputs, shared by OPK001 and OPK004.

A kernel body is interpreted statement by statement. Each local name maps to what it
holds: an input (`Taint`: which slot, what kind of object, its rank when known), a tuple of
such values, the array module (`XP`), the ExecutionContext (`CTX`), the kernel object
(`SelfVal`), an integer (`INT`), an array that is not an input (`FRESH`) or a string
constant (`Const`). Views and aliases keep the taint; copies, arithmetic and other calls
give new values; rebinding a name ends its tracking. Branches are analysed separately and
merged (a name is an input when it is one on any path); loop bodies run twice so that values
flowing around the loop are seen.

Indexing follows numpy: basic indexing (integers, slices, `...`, `None`) gives a view, or a
scalar when every axis gets an integer; an integer or boolean array, a list, or a
comparison makes a copy. An index whose kind cannot be told (an attribute, a call of
unknown result) counts as a copy: no finding rather than a false alarm. Ranks come from
`n, d = x.shape`, `reshape`, `ravel`, indexing and iteration.

Helpers (functions of the same module, methods of the kernel's class) are summarised once
per kind of argument: the writes to and outputs set from each parameter, the inputs the
helper fetches from `ctx` itself, and what it returns. The summary is applied at every call
site; recursion and call cycles terminate (a call to a helper whose summary is being built
contributes nothing).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from checkers.lint.astutil import argument, is_false, keyword, root_name, string_value, suite_statements
from checkers.lint import numpy_semantics as nps
from checkers.lint.catalog import ERROR_NAMES
from checkers.lint.index import Kernel, ModuleIndex
from checkers.lint.ranks import condition_equalities, equalities, infer_shape_ranks, rank_pair

XP = "<array module>"
CTX = "<execution context>"
INT = "<int>"
FRESH = "<new array>"
PARAM = "\0param:"  # slot prefix of a helper's parameter while its summary is built

INPUT_CALLS = {"input": "array", "inputs": "list", "input_tensor": "tensor", "input_var": "var"}
# What numpy calls do comes from the generated table (checkers/lint/numpy_table.py, see
# numpy_semantics). The names below are opkit's own tensor API, not numpy's.
TENSOR_DATA_ATTRS = {"data", "value"}
META_ATTRS = {"shape", "dtype", "ndim", "size", "lod", "place", "name", "itemsize", "nbytes",
              "strides", "height", "type", "persistable"}
TENSOR_VIEW_METHODS = {"__array__", "get_tensor", "get_selected_rows", "get", "value", "numpy"}
INPLACE_METHODS = {"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                   "__ifloordiv__", "__ipow__", "__imod__", "__iand__", "__ior__", "__ixor__",
                   "__ilshift__", "__irshift__", "__imatmul__", "set_lod",
                   "set_recursive_sequence_lengths"}
# rank rules for the view-making calls whose effect on the rank the code shows
SAME_RANK = {"asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "transpose",
             "swapaxes", "moveaxis", "rollaxis", "real", "imag", "flip", "fliplr", "flipud",
             "rot90", "require", "permute_dims", "matrix_transpose", "T", "mT", "view",
             "asarray_chkfinite", "conj", "conjugate", "astype", "byteswap"}
RNG_MAKERS = {"default_rng", "RandomState", "Generator"}
# calls known not to write their arguments nor to keep them (no note when an input reaches them)
PURE_BUILTINS = {"len", "print", "isinstance", "float", "int", "str", "repr", "range", "enumerate",
                 "zip", "sum", "min", "max", "abs", "round", "list", "tuple", "sorted", "reversed",
                 "any", "all", "iter", "next", "type", "id", "hash", "bool", "dict", "set",
                 "frozenset", "map", "filter", "format", "divmod", "complex", "hasattr", "callable",
                 "issubclass", "super", "object", "slice", "memoryview", "bytes", "ord", "chr"}
LIST_BUILTINS = {"list", "tuple", "reversed", "sorted"}
INT_BUILTINS = {"len", "int", "round", "min", "max", "abs", "sum"}
MAX_HELPER_DEPTH = 8


@dataclass(frozen=True)
class Taint:
    slot: str
    kind: str  # array | list | tensor | var
    maybe_scalar: bool = False  # integer indexing of unknown rank: a view or a numpy scalar
    rank: int | None = None


@dataclass(frozen=True)
class TupleVal:
    items: tuple


@dataclass(frozen=True)
class IterVal:
    """enumerate(...) / zip(...) / range(...): iterating gives `element`."""
    element: object


@dataclass(frozen=True)
class ShapeVal:
    """`x.shape` of an input held in the local name `name`."""
    name: str | None
    taint: Taint


@dataclass(frozen=True)
class StarArgs:
    """The inputs a call spreads into a helper's `*args`."""
    items: tuple


@dataclass(frozen=True)
class Const:
    value: str


@dataclass(frozen=True)
class SelfVal:
    """An object of a class of the module (the kernel object, or one the kernel made), with
    what its attributes hold (attributes are followed across methods)."""
    cls: str
    attrs: tuple = ()  # ((name, value), ...)

    def get(self, name: str):
        return next((v for k, v in self.attrs if k == name), None)

    def set(self, name: str, value) -> "SelfVal":
        rest = tuple((k, v) for k, v in self.attrs if k != name)
        return replace(self, attrs=tuple(sorted(rest + ((name, value),) if value is not None else rest,
                                                key=lambda kv: kv[0])))


@dataclass(frozen=True)
class DictVal:
    """A dict: constant keys -> values; values under unknown keys are kept under None."""
    items: tuple = ()  # ((key or None, value), ...)

    def get(self, key):
        if key is None:
            return _join_all(v for _, v in self.items)
        found = [v for k, v in self.items if k == key]
        if found:
            return found[-1]
        return _join_all(v for k, v in self.items if k is None)

    def set(self, key, value) -> "DictVal":
        rest = tuple((k, v) for k, v in self.items if key is None or k != key)
        return DictVal(rest + ((key, value),)) if value is not None else DictVal(rest)

    def values(self):
        return _join_all(v for _, v in self.items)


@dataclass(frozen=True)
class FuncVal:
    """A function defined inside the kernel (a closure) or a lambda: analysed where it is
    called, seeing the names of the enclosing function as they are then."""
    node: object  # cst.FunctionDef | cst.Lambda
    label: str


@dataclass(frozen=True)
class ForeignFunc:
    """A function imported from another module of the project (read, never imported)."""
    func: object  # cst.FunctionDef
    index: object  # that module's ModuleIndex
    label: str  # "name (path)"


RNG = "<random generator>"
OPKIT_API = "<opkit function>"  # imported from opkit inside the kernel: takes arrays read-only


@dataclass(frozen=True)
class NumpyFunc:
    """`np.add`, `np.maximum` held in a name (`reducer = np.add`)."""
    name: str


@dataclass(frozen=True)
class ForeignModule:
    """`import pkg.mod as m`: a module of the project, read for its functions."""
    origin: str
    path: str
    level: int = 0

    def function(self, name: str):
        from checkers.lint.imports import resolve_function

        found = resolve_function(self.path, f"{self.origin}.{name}", self.level)
        if found is None:
            return None
        func, index, shown = found
        return ForeignFunc(func, index, f"{name} ({shown})")


VIEW_ATTRS = nps.VIEW_ATTRS
ERROR_CLASSES = set(ERROR_NAMES) | {"Exception", "ValueError", "TypeError", "RuntimeError",
                                    "KeyError", "IndexError", "NotImplementedError"}


@dataclass
class Event:
    kind: str  # write | output
    slot: str
    via: str | None  # the kernel's local name the input was reached through
    node: cst.CSTNode  # where it happens (inside the helper, for a helper's events)
    kernel: str
    output: str | None = None
    helper: str | None = None  # the function the event happens in, when not the kernel
    helper_via: str | None = None  # the helper's own name for the value
    chain: tuple = ()  # helpers called from the kernel down to `helper`
    call: cst.CSTNode | None = None  # the kernel's call that leads to the helper


@dataclass
class Summary:
    events: list = field(default_factory=list)
    returns: object = None
    self_after: object = None  # the object bound to the first parameter, after the call


IN_PROGRESS = Summary()


def element_of(value):
    if isinstance(value, Taint):
        if value.kind == "list":
            return Taint(value.slot, "array")
        if value.kind == "array":
            if value.rank is None:
                return replace(value, maybe_scalar=True)
            return replace(value, rank=value.rank - 1, maybe_scalar=False) if value.rank > 1 else None
        return None
    if isinstance(value, TupleVal):
        return _join_all(value.items)
    if isinstance(value, IterVal):
        return value.element
    if isinstance(value, ShapeVal):
        return INT
    if value is FRESH:
        return FRESH
    return None


def _show(slot: str) -> str:
    return f"parameter '{slot[len(PARAM):]}'" if slot.startswith(PARAM) else f"'{slot}'"


def _root(expr):
    return expr.value if isinstance(expr, cst.Name) else None


def _join_all(values):
    out = None
    for value in values:
        out = join(out, value)
    return out


def merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for key, value in b.items():
        if value is not None:
            out[key] = join(out.get(key), value)
    return out


def join(a, b):
    """One value for two paths: an input on either path wins; containers and objects join
    what they hold."""
    if a is None or a == b:
        return b if a is None else a
    if b is None:
        return a
    if isinstance(a, DictVal) and isinstance(b, DictVal):
        return DictVal(tuple(dict.fromkeys(a.items + b.items)))
    if isinstance(a, SelfVal) and isinstance(b, SelfVal) and a.cls == b.cls:
        out = a
        for k, v in b.attrs:
            out = out.set(k, join(a.get(k), v))
        return out
    if isinstance(b, (Taint, TupleVal)) and not isinstance(a, (Taint, TupleVal)):
        return b
    return a


def _is_array(value) -> bool:
    return value is FRESH or (isinstance(value, Taint) and value.kind == "array")


def _rank_of_shape_args(args: list) -> int | None:
    """Rank that `reshape(*args)` gives: `reshape(n, -1)` 2, `reshape((a, b, c))` 3."""
    pos = [a for a in args if a.keyword is None]
    if any(a.star for a in pos):
        return None
    if len(pos) == 1:
        value = pos[0].value
        if isinstance(value, (cst.Tuple, cst.List)):
            if any(isinstance(el, cst.StarredElement) for el in value.elements):
                return None
            return len(value.elements)
        if isinstance(value, cst.Integer) or (isinstance(value, cst.UnaryOperation)
                                               and isinstance(value.expression, cst.Integer)):
            return 1
        return None
    return len(pos) or None


class KernelAnalysis:
    def __init__(self, index: ModuleIndex, kernel: str, depth: int = 0,
                 summaries: dict | None = None, ranks: dict | None = None,
                 path: str | None = None) -> None:
        self.index = index
        self.path = path  # the file, to find the project modules it imports helpers from
        self._inlining: frozenset = frozenset()
        self._expanding = 0
        self.ranks = ranks or {}  # slot -> rank the op's infer_shape asserts
        self.kernel = kernel
        self.depth = depth
        self.events: list[Event] = []
        self.returns = None
        self._seen: set[tuple] = set()
        self.summaries = summaries if summaries is not None else {}

    # -- entry points ------------------------------------------------------------------------
    def run(self, func: cst.FunctionDef, state: dict) -> list[Event]:
        self.block(suite_statements(func.body), state)
        return self.events

    def emit(self, event: Event) -> None:
        key = (event.kind, id(event.node), event.slot, event.output, id(event.call))
        if key not in self._seen:
            self._seen.add(key)
            self.events.append(event)

    # -- statements --------------------------------------------------------------------------
    def block(self, statements, state: dict) -> None:
        for stmt in statements:
            self.statement(stmt, state)

    def statement(self, stmt, state: dict) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small, state)
        elif isinstance(stmt, cst.If):
            self.eval(stmt.test, state)
            branch = dict(state)
            self.block(suite_statements(stmt.body), branch)
            other = dict(state)
            if stmt.orelse is not None:
                if isinstance(stmt.orelse, cst.If):
                    self.statement(stmt.orelse, other)
                else:
                    self.block(suite_statements(stmt.orelse.body), other)
            self._replace(state, merge(branch, other))
        elif isinstance(stmt, (cst.For, cst.While)):
            elements = [None]
            if isinstance(stmt, cst.For):
                iterated = self.eval(stmt.iter, state)
                # a tuple of several inputs (`for a in (x, y)`, `*args`): each one in turn
                many = iterated.items if isinstance(iterated, TupleVal) else ()
                elements = list(dict.fromkeys(many)) if 1 < len(many) <= 8 and not self._expanding \
                    and sum(1 for v in many if _taints(v)) > 1 else [element_of(iterated)]
            else:
                self.eval(stmt.test, state)
            loop = dict(state)
            self._expanding += len(elements) > 1  # nested loops over tuples: joined elements
            for _ in range(2):
                for element in elements:
                    if isinstance(stmt, cst.For):
                        self.bind(stmt.target, element, loop)
                    self.block(suite_statements(stmt.body), loop)
                    loop = merge(state, loop)
            self._expanding -= len(elements) > 1
            self._replace(state, merge(state, loop))
            if stmt.orelse is not None:
                self.block(suite_statements(stmt.orelse.body), state)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.block(suite_statements(stmt.body), state)
            merged = dict(state)
            for handler in stmt.handlers:
                branch = dict(state)
                if handler.name is not None:
                    self.bind(handler.name.name, None, branch)
                self.block(suite_statements(handler.body), branch)
                merged = merge(merged, branch)
            self._replace(state, merged)
            if stmt.orelse is not None:
                self.block(suite_statements(stmt.orelse.body), state)
            if stmt.finalbody is not None:
                self.block(suite_statements(stmt.finalbody.body), state)
        elif isinstance(stmt, cst.With):
            for item in stmt.items:
                self.eval(item.item, state)
                if item.asname is not None:
                    self.bind(item.asname.name, None, state)
            self.block(suite_statements(stmt.body), state)
        elif isinstance(stmt, cst.Match):
            self.eval(stmt.subject, state)
            merged = dict(state)
            for case in stmt.cases:
                branch = dict(state)
                self.block(suite_statements(case.body), branch)
                merged = merge(merged, branch)
            self._replace(state, merged)
        elif isinstance(stmt, cst.FunctionDef):
            state[stmt.name.value] = FuncVal(stmt, stmt.name.value)
        elif isinstance(stmt, cst.ClassDef):
            state.pop(stmt.name.value, None)

    @staticmethod
    def _replace(state: dict, new: dict) -> None:
        state.clear()
        state.update(new)

    def small(self, small, state: dict) -> None:
        if isinstance(small, cst.Assign):
            value = self.eval(small.value, state)
            for target in small.targets:
                self.bind(target.target, value, state)
        elif isinstance(small, cst.AnnAssign):
            if small.value is not None:
                self.bind(small.target, self.eval(small.value, state), state)
        elif isinstance(small, cst.AugAssign):
            self.eval(small.value, state)
            target = small.target
            if isinstance(target, cst.Name):
                value = state.get(target.value)
                if isinstance(value, Taint) and value.kind in ("array", "var") and not value.maybe_scalar:
                    self.write(value, target.value, small)
                elif isinstance(value, Taint) and value.maybe_scalar:
                    self.note(small, f"'{target.value}' is an element of input {_show(value.slot)} "
                                     "of unknown rank: a scalar (this rebinds it) or a view (this "
                                     "writes the input); not reported")
            else:
                # `self.x += v`, `d["x"] += v`: in place on the array the attribute/item holds
                held = self._held(target, state)
                if isinstance(held, Taint) and held.kind in ("array", "var") and not held.maybe_scalar:
                    self.write(held, self._via(target, state), small)
                else:
                    self.target_write(target, state, small)
        elif isinstance(small, cst.Del):
            self._delete(small.target, state)
        elif isinstance(small, cst.Return):
            if small.value is not None:
                self.returns = join(self.returns, self.eval(small.value, state))
        elif isinstance(small, cst.Expr):
            self.eval(small.value, state)
        elif isinstance(small, cst.Raise):
            if small.exc is not None:
                self.eval(small.exc, state)
        elif isinstance(small, cst.Assert):
            self.eval(small.test, state)
            self._rank_facts(condition_equalities(small.test), state)
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            module = cst.Module([]).code_for_node(small.module) if small.module else ""
            for alias in small.names:
                local = alias.asname.name if alias.asname is not None else alias.name
                if isinstance(local, cst.Name):
                    state[local.value] = OPKIT_API if module.split(".")[0] == "opkit" and \
                        not small.relative else None
        elif isinstance(small, cst.Import):
            for alias in small.names:
                full = cst.Module([]).code_for_node(alias.name)
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    state[alias.asname.name.value] = XP if full in ("numpy", "cupy") else None
                elif full in ("numpy", "cupy"):
                    state[full] = XP

    def _delete(self, target, state: dict) -> None:
        if isinstance(target, cst.Name):
            state.pop(target.value, None)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                self._delete(el.value, state)

    # -- binding and writes ------------------------------------------------------------------
    def bind(self, target, value, state: dict) -> None:
        if isinstance(target, cst.Name):
            if value is None:
                state.pop(target.value, None)
            else:
                state[target.value] = value
        elif isinstance(target, (cst.Tuple, cst.List)):
            elements = list(target.elements)
            starred = any(isinstance(el, cst.StarredElement) for el in elements)
            if isinstance(value, TupleVal) and not starred and len(value.items) == len(elements):
                for el, item in zip(elements, value.items):
                    self.bind(el.value, item, state)
                return
            if isinstance(value, TupleVal) and starred and len(value.items) >= len(elements) - 1:
                i = next(k for k, el in enumerate(elements) if isinstance(el, cst.StarredElement))
                after = len(elements) - i - 1
                for el, item in zip(elements[:i], value.items):
                    self.bind(el.value, item, state)
                self.bind(elements[i].value, TupleVal(value.items[i:len(value.items) - after]), state)
                for el, item in zip(elements[i + 1:], value.items[len(value.items) - after:]):
                    self.bind(el.value, item, state)
                return
            if isinstance(value, ShapeVal):
                # `n, d = x.shape`: x has rank 2
                if not starred and value.name is not None and state.get(value.name) == value.taint:
                    state[value.name] = replace(value.taint, rank=len(elements))
                for el in elements:
                    self.bind(el.value, None if isinstance(el, cst.StarredElement) else INT, state)
                return
            item = element_of(value) if isinstance(value, (Taint, IterVal)) or value is FRESH else None
            for el in elements:
                if isinstance(el, cst.StarredElement):
                    self.bind(el.value, value if isinstance(value, Taint) and value.kind == "list"
                              else None, state)
                else:
                    self.bind(el.value, item, state)
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, None, state)
        elif isinstance(target, (cst.Subscript, cst.Attribute)):
            if not self._store(target, value, state):
                self.target_write(target, state, target)

    def _held(self, target, state: dict):
        """What `obj.attr` / `d[key]` / `items[0]` holds, when the base is an object, a dict or
        a list we follow (`x[0]` of an input is not: that is a write to x itself)."""
        base = self.eval(target.value, state)
        if isinstance(target, cst.Attribute) and isinstance(base, SelfVal):
            return base.get(target.attr.value)
        if isinstance(target, cst.Subscript) and (isinstance(base, (DictVal, TupleVal)) or
                                                  (isinstance(base, Taint) and base.kind == "list")):
            return self.eval(target, state)
        return None

    def _key(self, el, state: dict):
        inner = el.slice
        if isinstance(inner, cst.Index):
            key = self.eval(inner.value, state)
            return key.value if isinstance(key, Const) else None
        return None

    def _store(self, target, value, state: dict) -> bool:
        """`obj.attr = v` on an object we follow, `d[key] = v` on a dict (also nested:
        `self.cache["x"] = v`): remember it."""
        base = self.eval(target.value, state)
        if isinstance(target, cst.Attribute) and isinstance(base, SelfVal):
            new = base.set(target.attr.value, value)
        elif isinstance(target, cst.Subscript) and isinstance(base, DictVal) and len(target.slice) == 1:
            new = base.set(self._key(target.slice[0], state), value)
        elif isinstance(target, cst.Subscript) and isinstance(base, TupleVal):
            new = TupleVal(tuple(dict.fromkeys(base.items + (value,))))  # items[i] = v
        else:
            return False
        holder = target.value
        if isinstance(holder, cst.Name):
            state[holder.value] = new
            return True
        if isinstance(holder, (cst.Attribute, cst.Subscript)):
            return self._store(holder, new, state)
        return False

    def target_write(self, target, state: dict, node) -> None:
        """`base[...] = v` / `base.attr = v` / `base[...] += v`: a write when base is an input."""
        base = self.eval(target.value, state)
        if isinstance(target, cst.Subscript):
            for el in target.slice:
                self._index_kind(el, state)
        if isinstance(base, Taint) and base.kind in ("array", "var", "tensor"):
            self.write(base, self._via(target.value, state), node)

    def _via(self, expr, state: dict) -> str | None:
        name = root_name(expr)
        return name if name is not None and isinstance(state.get(name), Taint) else None

    def write(self, taint: Taint, via: str | None, node) -> None:
        self.emit(Event("write", taint.slot, via, node, self.kernel))

    def note(self, node, reason: str) -> None:
        """Where the analysis stops following a value (reported by OPK009 when enabled)."""
        self.emit(Event("note", "", None, node, self.kernel, output=reason))

    # -- indexing ----------------------------------------------------------------------------
    def _index_kind(self, el, state: dict) -> str:
        """int | slice | none | ellipsis | advanced | unknown, evaluating what it contains."""
        inner = el.slice
        if isinstance(inner, cst.Slice):
            for part in (inner.lower, inner.upper, inner.step):
                if part is not None:
                    self.eval(part, state)
            return "slice"
        value = inner.value
        if isinstance(value, cst.Ellipsis):
            return "ellipsis"
        if isinstance(value, cst.Name) and value.value == "None":
            return "none"
        if isinstance(value, cst.Integer):
            return "int"
        if isinstance(value, (cst.List, cst.ListComp, cst.Comparison)):
            self.eval(value, state)
            return "advanced"
        if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.BitInvert):
            self.eval(value, state)
            return "advanced"
        result = self.eval(value, state)
        if result is INT:
            return "int"
        if _is_array(result) or isinstance(result, TupleVal) or \
                (isinstance(result, Taint) and result.kind == "list"):
            return "advanced"
        return "unknown"

    def _subscript(self, expr: cst.Subscript, state: dict):
        base = self.eval(expr.value, state)
        if isinstance(base, DictVal):
            return base.get(self._key(expr.slice[0], state)) if len(expr.slice) == 1 else None
        kinds = [self._index_kind(el, state) for el in expr.slice]
        if isinstance(base, Taint):
            if base.kind == "list":
                if len(kinds) == 1 and kinds[0] == "slice":
                    return base
                return Taint(base.slot, "array")
            if base.kind != "array":
                return None
            if "advanced" in kinds:
                return FRESH  # numpy's advanced indexing copies
            if "unknown" in kinds:
                self.note(expr, f"index of unknown kind on input {_show(base.slot)}: "
                                f"`{self.index.code(expr)}` may be a view or a copy; taken as a copy")
                return None  # documented choice: treated as a copy
            ints = kinds.count("int")
            rank = base.rank
            new_rank = None if rank is None else rank - ints + kinds.count("none")
            if all(k == "int" for k in kinds):
                if rank is None:
                    return replace(base, maybe_scalar=True)
                if ints >= rank:
                    return None  # a numpy scalar: not a view
            return replace(base, maybe_scalar=False, rank=new_rank)
        if base is FRESH:
            return FRESH
        if isinstance(base, ShapeVal):
            return INT
        if isinstance(base, TupleVal) and len(expr.slice) == 1:
            idx = expr.slice[0].slice
            if isinstance(idx, cst.Index) and isinstance(idx.value, cst.Integer):
                i = int(idx.value.value, 0)
                if -len(base.items) <= i < len(base.items):
                    return base.items[i]
            return _join_all(base.items)
        return None

    # -- expressions -------------------------------------------------------------------------
    def eval(self, expr, state: dict):
        if expr is None:
            return None
        if isinstance(expr, cst.Name):
            name = expr.value
            if name in state:
                return state[name]
            if name in self.index.array_modules:
                return XP
            if name in self.index.module_imports and self.path is not None:
                return ForeignModule(self.index.module_imports[name], self.path)
            return None
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, state)
        if isinstance(expr, cst.Call):
            return self._call(expr, state)
        if isinstance(expr, cst.Subscript):
            return self._subscript(expr, state)
        if isinstance(expr, cst.Integer):
            return INT
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString)):
            text = string_value(expr)
            return Const(text) if text is not None else None
        if isinstance(expr, (cst.Tuple, cst.List)):
            items = []
            for el in expr.elements:
                value = self.eval(el.value, state)
                items.append(None if isinstance(el, cst.StarredElement) else value)
            return TupleVal(tuple(items))
        if isinstance(expr, cst.BooleanOperation):
            left, right = self.eval(expr.left, state), self.eval(expr.right, state)
            return left if left is not None else right
        if isinstance(expr, cst.IfExp):
            self.eval(expr.test, state)
            body, orelse = self.eval(expr.body, state), self.eval(expr.orelse, state)
            return join(body, orelse)
        if isinstance(expr, cst.NamedExpr):
            value = self.eval(expr.value, state)
            self.bind(expr.target, value, state)
            return value
        if isinstance(expr, cst.BinaryOperation):
            left, right = self.eval(expr.left, state), self.eval(expr.right, state)
            if _is_array(left) or _is_array(right):
                return FRESH
            return INT if left is INT and right is INT else None
        if isinstance(expr, cst.UnaryOperation):
            value = self.eval(expr.expression, state)
            if _is_array(value):
                return FRESH
            return INT if value is INT else None
        if isinstance(expr, cst.Comparison):
            values = [self.eval(expr.left, state)]
            for target in expr.comparisons:
                values.append(self.eval(target.comparator, state))
            return FRESH if any(_is_array(v) for v in values) else None
        if isinstance(expr, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            return self._comprehension(expr, state)
        if isinstance(expr, (cst.Await, cst.Yield)):
            inner = getattr(expr, "expression", None) or getattr(expr, "value", None)
            if isinstance(inner, cst.BaseExpression):
                self.eval(inner, state)
            return None
        if isinstance(expr, cst.Dict):
            out = DictVal()
            for el in expr.elements:
                value = self.eval(el.value, state)
                if isinstance(el, cst.DictElement):
                    key = self.eval(el.key, state)
                    out = out.set(key.value if isinstance(key, Const) else None, value)
                elif isinstance(value, DictVal):  # {**other}
                    out = DictVal(out.items + value.items)
            return out
        if isinstance(expr, cst.FormattedString):
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.eval(part.expression, state)
            return None
        if isinstance(expr, cst.Set):
            return TupleVal(tuple(self.eval(el.value, state) for el in expr.elements))
        if isinstance(expr, cst.Lambda):
            return FuncVal(expr, "<lambda>")
        return None  # other literals: nothing to track

    def _comprehension(self, expr, state: dict):
        local = dict(state)
        clause = expr.for_in
        while clause is not None:
            self.bind(clause.target, element_of(self.eval(clause.iter, local)), local)
            for cond in clause.ifs:
                self.eval(cond.test, local)
            clause = clause.inner_for_in
        if isinstance(expr, cst.DictComp):
            key = self.eval(expr.key, local)
            value = self.eval(expr.value, local)
            return DictVal(((key.value if isinstance(key, Const) else None, value),))
        elt = self.eval(expr.elt, local)
        if isinstance(elt, Taint) and elt.kind in ("array", "var", "tensor"):
            return Taint(elt.slot, "list") if elt.kind == "array" else TupleVal((elt,))
        if isinstance(elt, (TupleVal, DictVal, SelfVal)):
            return TupleVal((elt,))  # a list of containers: an element is `elt`
        return None

    def _attribute(self, expr: cst.Attribute, state: dict):
        attr = expr.attr.value
        base = self.eval(expr.value, state)
        if base is CTX and attr == "xp":
            return XP
        if base is XP and nps.known_function(attr):
            return NumpyFunc(attr)
        if isinstance(base, Taint):
            if base.kind == "array":
                if attr in VIEW_ATTRS:
                    rank = base.rank if attr in SAME_RANK else (1 if attr == "flat" else None)
                    return replace(base, maybe_scalar=False, rank=rank)
                if attr == "shape":
                    name = expr.value.value if isinstance(expr.value, cst.Name) else None
                    return ShapeVal(name, base)
                if attr in ("ndim", "size"):
                    return INT
            if base.kind == "tensor" and attr in TENSOR_DATA_ATTRS:
                return Taint(base.slot, "array")
            if base.kind == "var" and attr not in META_ATTRS:
                return base
        if base is FRESH and attr in VIEW_ATTRS:
            return FRESH
        if isinstance(base, SelfVal):
            return base.get(attr)
        return None

    # -- calls -------------------------------------------------------------------------------
    def _call(self, call: cst.Call, state: dict):
        func = call.func
        values = [self.eval(arg.value, state) for arg in call.args]
        for arg, value in zip(call.args, values):
            if arg.keyword is not None and arg.keyword.value == "out":
                self._out_write(value, arg.value, state, call)
            elif arg.star == "**" and isinstance(value, DictVal):  # f(..., **{"out": x})
                held = value.get("out")
                if held is not None:
                    self._out_write(held, arg.value, state, call)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.eval(func.value, state)
            if receiver is CTX:
                return self._ctx_call(method, call, values, state)
            if receiver is XP:
                return self._module_call(method, call, values, state)
            if receiver is RNG:
                return self._random_call(method, call, values, state)
            if isinstance(receiver, NumpyFunc):  # np.add.at(x, ...), reducer.reduceat(...)
                if method == "at" and receiver.name in nps.UFUNCS:
                    self._arg0_write(call, values, state)
                    return None
                return FRESH
            if isinstance(func.value, cst.Attribute) and self.eval(func.value.value, state) is XP:
                inner = func.value.attr.value
                if inner == "random":
                    return self._random_call(method, call, values, state)
                if method == "at" and inner in nps.UFUNCS:
                    self._arg0_write(call, values, state)  # np.add.at(x, ...)
                    return None
                if inner in nps.UFUNCS:  # reduce, accumulate, outer, reduceat
                    return FRESH
                if inner in ("linalg", "fft"):
                    return FRESH
                self._unknown_call(call, values, state)
                return None
            if isinstance(receiver, Taint):
                return self._method_call(receiver, method, func, call, state)
            if receiver is FRESH:
                return FRESH
            if isinstance(receiver, DictVal):
                return self._dict_method(receiver, method, func, call, values, state)
            if receiver is None and isinstance(func.value, cst.Name) and self.path is not None \
                    and func.value.value in self.index.from_imports and func.value.value not in state:
                origin = self.index.from_imports[func.value.value]  # from pkg import rows
                if origin.split(".")[0] not in ("numpy", "cupy", "opkit"):
                    receiver = ForeignModule(origin, self.path,
                                             self.index.import_levels.get(func.value.value, 0))
            if isinstance(receiver, ForeignModule):
                target = receiver.function(method)
                if target is not None:
                    return self._foreign(target, call, values, state)
                self._unknown_call(call, values, state)
                return None
            if isinstance(receiver, SelfVal):
                target = self._method(receiver.cls, method)
                if target is not None:
                    func_def, label = target
                    static = _decorated(func_def, "staticmethod")
                    return self._helper(func_def, label, call, values, state,
                                        bound_self=None if static else receiver,
                                        self_name=_root(func.value))
                return None
            if isinstance(func.value, cst.Name) and func.value.value not in state \
                    and func.value.value in self.index.classes:
                target = self._method(func.value.value, method)
                if target is not None:
                    func_def, label = target
                    cls_first = _decorated(func_def, "classmethod")
                    return self._helper(func_def, label, call, values, state,
                                        bound_self=SelfVal(func.value.value) if cls_first else None)
            if isinstance(receiver, (TupleVal,)) or (isinstance(receiver, Taint) and receiver.kind == "list"):
                return None
            if method in ("append", "extend", "insert", "add", "update") and isinstance(func.value, cst.Name):
                self._grow(func.value.value, receiver, method, values, state)
                return None
            self._unknown_call(call, values, state)
            return None
        if isinstance(func, cst.Name):
            name = func.value
            if name in state:
                held = state[name]
                if isinstance(held, FuncVal):
                    return self._inline(held, call, values, state)
                if isinstance(held, ForeignFunc):
                    return self._foreign(held, call, values, state)
                if isinstance(held, NumpyFunc):
                    return self._module_call(held.name, call, values, state)
                if held is OPKIT_API:
                    return None
                if isinstance(held, SelfVal):
                    return None
                self._unknown_call(call, values, state)
                return None
            origin = self.index.from_imports.get(name, "")
            if origin.startswith(("numpy.random.", "cupy.random.")):
                return self._random_call(origin.rsplit(".", 1)[-1], call, values, state)
            if origin.split(".")[0] in ("numpy", "cupy"):
                return self._module_call(origin.rsplit(".", 1)[-1], call, values, state)
            if name in LIST_BUILTINS and values and isinstance(values[0], Taint) \
                    and values[0].kind == "list":
                return values[0]
            if name in LIST_BUILTINS and values and isinstance(values[0], TupleVal):
                return values[0]
            if name == "enumerate" and values:
                return IterVal(TupleVal((INT, element_of(values[0]))))
            if name == "zip":
                return IterVal(TupleVal(tuple(element_of(v) for v in values)))
            if name == "range":
                return IterVal(INT)
            if name == "dict" and name not in self.index.functions:
                return self._dict_call(call, values)
            if name == "map" and len(values) >= 2 and isinstance(values[0], FuncVal):
                self._inline(values[0], call, [element_of(v) for v in values[1:]], state, positional=True)
                return None
            kind = self.index.canonical(name)
            if kind in ("enforce", "enforce_eq"):
                self._rank_facts(equalities(kind, call), state)
                return None
            if name in INT_BUILTINS and name not in self.index.functions:
                return INT if name in ("len", "int") or all(v is INT for v in values) else None
            if name in self.index.functions:
                return self._helper(self.index.functions[name], name, call, values, state)
            if name in self.index.classes:
                return self._construct(name, call, values, state)
            foreign = self._foreign_function(name)
            if foreign is not None:
                return self._foreign(foreign, call, values, state)
            if name in PURE_BUILTINS or (kind or "").startswith("enforce") or name in ERROR_CLASSES \
                    or origin.split(".")[0] == "opkit":
                return None  # builtins and opkit's own API take their arguments as read-only
            self._unknown_call(call, values, state)
        else:
            self.eval(func, state)
            self._unknown_call(call, values, state)
        return None

    def _unknown_call(self, call: cst.Call, values: list, state: dict) -> None:
        """An input reaches a call the linter cannot follow: a note (OPK009)."""
        for _arg, value in zip(call.args, values):
            taints = [t for t in _taints(value) if t.kind in ("array", "list", "tensor", "var")]
            if isinstance(value, DictVal):
                taints = _taints(value.values())
            if taints:
                self.note(call, f"input {_show(taints[0].slot)} is passed to "
                                f"`{self.index.code(call.func)}`, which the linter cannot follow "
                                "(not numpy, not a helper of this project): a write or alias there "
                                "is not seen")
                return

    def _grow(self, name: str, receiver, method: str, values: list, state: dict) -> None:
        """`items.append(x)`: a list of ours now also holds x."""
        if isinstance(receiver, TupleVal):
            extra = values[0] if values else None
            if method in ("extend", "update"):
                extra = element_of(extra)
            elif method == "insert":
                extra = values[1] if len(values) > 1 else None
            state[name] = TupleVal(tuple(dict.fromkeys(receiver.items + (extra,))))

    def _dict_call(self, call: cst.Call, values: list):
        out = DictVal()
        for arg, value in zip(call.args, values):
            if arg.keyword is not None:
                out = out.set(arg.keyword.value, value)
            elif isinstance(value, DictVal):
                out = DictVal(out.items + value.items)
            elif isinstance(value, IterVal) and isinstance(value.element, TupleVal) \
                    and len(value.element.items) == 2:  # dict(zip(keys, values)), dict(pairs)
                out = out.set(None, value.element.items[1])
            elif value is not None:
                pair = element_of(value)
                if isinstance(pair, TupleVal) and len(pair.items) == 2:
                    out = out.set(None, pair.items[1])
        return out

    def _dict_method(self, receiver: DictVal, method: str, func, call: cst.Call, values: list,
                     state: dict):
        key = None
        if values and isinstance(values[0], Const):
            key = values[0].value
        if method in ("get", "pop", "setdefault"):
            held = receiver.get(key)
            if method == "setdefault" and len(values) > 1 and isinstance(func.value, cst.Name) \
                    and held is None:
                state[func.value.value] = receiver.set(key, values[1])
                return values[1]
            return join(held, values[1] if method == "get" and len(values) > 1 else None)
        if method == "values":
            return IterVal(receiver.values())
        if method == "items":
            return IterVal(TupleVal((None, receiver.values())))
        if method == "update" and isinstance(func.value, cst.Name):
            extra = self._dict_call(call, values)
            state[func.value.value] = DictVal(receiver.items + extra.items)
        if method == "copy":
            return receiver
        return None

    def _construct(self, cls: str, call: cst.Call, values: list, state: dict):
        """`obj = Holder(x)`: run `__init__` on a new object; the object keeps its attributes."""
        obj = SelfVal(cls)
        target = self._method(cls, "__init__")
        if target is None:
            return obj
        func_def, label = target
        after = []
        self._helper(func_def, label, call, values, state, bound_self=obj, self_after=after)
        return after[0] if after else obj

    def _slot_name(self, expr, state: dict) -> str:
        if isinstance(expr, cst.Name) and isinstance(state.get(expr.value), Const):
            return state[expr.value].value
        return self.index.slot(expr)

    def _ctx_call(self, method: str, call: cst.Call, values: list, state: dict):
        if method in INPUT_CALLS:
            slot = self._slot_name(call.args[0].value, state) if call.args else "?"
            return Taint(slot, INPUT_CALLS[method],
                         rank=self.ranks.get(slot) if method == "input" else None)
        if method == "set_output" and len(call.args) >= 2:
            value = values[1]
            name = self._slot_name(call.args[0].value, state)
            for taint in _taints(value):
                self.emit(Event("output", taint.slot, self._via_plain(call.args[1].value, state),
                                call, self.kernel, output=name))
        return None

    @staticmethod
    def _via_plain(expr, state: dict) -> str | None:
        return expr.value if isinstance(expr, cst.Name) and isinstance(state.get(expr.value), Taint) \
            else None

    def _positional_out(self, name: str, call: cst.Call, values: list, state: dict,
                        method: bool = False) -> object:
        """Outputs passed by position (a ufunc's args nin.., `np.clip(a, lo, hi, out)`)."""
        written = None
        positions = nps.out_positions(name, method)
        if not positions:
            return None
        pos = [(a, v) for a, v in zip(call.args, values) if a.keyword is None and not a.star]
        for i in positions:
            if i < len(pos):
                arg, value = pos[i]
                self._out_write(value, arg.value, state, call)
                written = join(written, value if isinstance(value, Taint) else None)
        return written

    def _module_call(self, name: str, call: cst.Call, values: list, state: dict):
        first = values[0] if values else None
        if name in RNG_MAKERS:
            return RNG
        if name == "get_array_module":
            return XP
        out = self._positional_out(name, call, values, state)
        if name in nps.UFUNCS:
            kw = keyword(call, "out")
            held = self.eval(kw.value, state) if kw is not None else out
            return held if isinstance(held, Taint) else FRESH
        flags = nps.function_flags(name, call)
        if flags is None:
            return FRESH  # a numpy call the table does not know takes its arguments as read-only
        if "w" in flags:
            self._arg0_write(call, values, state, nps.written_param(name))
        if "s" in flags:
            return Taint(first.slot, "list") if isinstance(first, Taint) and first.kind == "array" \
                else FRESH
        if "v" in flags:
            if not (isinstance(first, Taint) and first.kind == "array"):
                return FRESH
            rank = first.rank
            if name == "reshape":
                rank = _rank_of_shape_args(call.args[1:2])
            elif name == "ravel":
                rank = 1
            elif name == "expand_dims":
                rank = None if rank is None else rank + 1
            elif name.startswith("atleast_"):
                need = int(name[-2])
                rank = None if rank is None else max(rank, need)
            elif name not in SAME_RANK:
                rank = None
            return replace(first, maybe_scalar=False, rank=rank)
        if name in ("ndim", "size"):
            return INT
        return FRESH

    def _random_call(self, method: str, call: cst.Call, values: list, state: dict):
        """A random generator's method, or a `numpy.random` function."""
        if method in RNG_MAKERS:
            return RNG
        flags = nps.random_flags(method, call)
        if flags is not None and "w" in flags:
            self._arg0_write(call, values, state)
        return FRESH

    def _arg0_write(self, call: cst.Call, values: list, state: dict, keyword_name: str = "") -> None:
        """The first argument (positional, or given as `keyword_name=`) is written."""
        for i, arg in enumerate(call.args):
            if (i == 0 and arg.keyword is None and not arg.star) or \
                    (arg.keyword is not None and arg.keyword.value == keyword_name):
                for taint in _taints(values[i]):
                    if taint.kind != "list":
                        self.write(taint, self._via(arg.value, state), call)
                return

    def _out_write(self, value, expr, state: dict, call) -> None:
        for taint in _taints(value):
            if taint.kind != "list":
                self.write(taint, self._via(expr, state), call)

    def _method_call(self, receiver: Taint, method: str, func, call: cst.Call, state: dict):
        via = self._via(func.value, state)
        if receiver.kind == "list":
            if method == "pop":
                return Taint(receiver.slot, "array")
            return None
        if method in INPLACE_METHODS:
            self.write(receiver, via, call)
            return None
        if method == "setflags":
            write = argument(call, 0, "write")
            if write is not None and not is_false(write):
                self.write(receiver, via, call)
            return None
        if receiver.kind in ("tensor", "var"):
            if method in TENSOR_VIEW_METHODS:
                return Taint(receiver.slot, "var")
            if method not in ("reshape", "ravel", "view", "transpose", "squeeze"):
                return None
        elif method in TENSOR_VIEW_METHODS:
            return replace(receiver, maybe_scalar=False, rank=None)
        values = [self.eval(arg.value, state) for arg in call.args]
        out = self._positional_out(method, call, values, state, method=True)
        flags = nps.method_flags(method, call)
        if flags is None:
            if out is not None:
                return out
            return FRESH if receiver.kind == "array" else None
        if "w" in flags:
            self.write(receiver, via, call)
        if "v" in flags:
            rank = receiver.rank if method in SAME_RANK else None
            if method == "reshape":
                rank = _rank_of_shape_args(list(call.args))
            elif method == "ravel":
                rank = 1
            return replace(receiver, maybe_scalar=False, rank=rank)
        if "s" in flags:
            return Taint(receiver.slot, "list")
        if receiver.kind == "array":
            return FRESH
        return None

    def _rank_facts(self, pairs, state: dict) -> None:
        """`enforce_eq(x.ndim, 2, ...)`, `assert len(x.shape) == 2`: x has rank 2 from here."""
        for left, right in pairs:
            pair = rank_pair(left, right)
            if pair is None:
                continue
            (kind, expr), rank = pair
            if kind == "len":
                if not (isinstance(expr, cst.Attribute) and expr.attr.value == "shape"):
                    continue
                expr = expr.value
            if isinstance(expr, cst.Name):
                value = state.get(expr.value)
                if isinstance(value, Taint) and value.kind == "array":
                    state[expr.value] = replace(value, rank=rank, maybe_scalar=False)

    # -- helpers -----------------------------------------------------------------------------
    def _method(self, cls_name: str, method: str, depth: int = 0):
        """(FunctionDef, "Class.method") for a method of a class of this module (or a local base)."""
        from checkers.lint.index import method as find_method

        cls = self.index.classes.get(cls_name)
        if cls is None or depth > 5:
            return None
        func = find_method(cls, method)
        if func is not None:
            return func, f"{cls_name}.{method}"
        for base in cls.bases:
            if isinstance(base.value, cst.Name):
                found = self._method(base.value.value, method, depth + 1)
                if found is not None:
                    return found
        return None

    def _helper(self, func: cst.FunctionDef, label: str, call: cst.Call, values: list,
                state: dict, bound_self=None, self_name: str | None = None, self_after=None,
                index: ModuleIndex | None = None, foreign: bool = False):
        """Apply the summary of a helper at this call; its return value. `index` is the
        helper's module when it is not this one (an imported helper)."""
        p = func.params
        positional_names = [x.name.value for x in (*p.posonly_params, *p.params)]
        names = set(positional_names) | {x.name.value for x in p.kwonly_params}
        bound: dict = {}
        first_name = None
        if bound_self is not None and positional_names:
            first_name = positional_names[0]
            bound[first_name] = bound_self
            positional_names = positional_names[1:]
        star = p.star_arg.name.value if isinstance(p.star_arg, cst.Param) else None
        kwargs = p.star_kwarg.name.value if p.star_kwarg is not None else None
        expanded = []  # (keyword or None, value, expression or None)
        for arg, value in zip(call.args, values):
            if arg.star == "*":
                if isinstance(value, TupleVal):
                    expanded.extend((None, v, None) for v in value.items)
                    continue
                if star is not None and isinstance(value, Taint) and value.kind == "list" \
                        and len([e for e in expanded if e[0] is None]) >= len(positional_names):
                    bound[star] = value  # f(*xs) into def f(*arrs): arrs holds the inputs
                    continue
                if _taints(value) or value is None:
                    self.note(call, f"`*{self.index.code(arg.value)}` of unknown length: which "
                                    f"parameter of '{label}' gets what is unknown")
                return None
            if arg.star == "**":
                if isinstance(value, DictVal):
                    expanded.extend((k if k is not None else "\0unknown", v, None) for k, v in value.items)
                    continue
                self.note(call, f"`**{self.index.code(arg.value)}` of unknown keys: which "
                                f"parameter of '{label}' gets what is unknown")
                return None
            expanded.append((arg.keyword.value if arg.keyword is not None else None, value, arg.value))
        extra: list = []  # values of the positional arguments that land in *args
        kw_extra = DictVal()
        i = 0
        for key, value, expr in expanded:
            if key is not None:
                pname = key
                if pname not in names:
                    if kwargs is not None:
                        kw_extra = kw_extra.set(None if pname == "\0unknown" else pname, value)
                    continue
            else:
                pname = positional_names[i] if i < len(positional_names) else None
                if pname is None and star is not None:
                    extra.append(value)
                i += 1
            if pname is None or pname not in names:
                continue
            if value is None and isinstance(expr, cst.Name):
                text = self.index.strings(expr)
                value = Const(text) if isinstance(text, str) else None
            if value is not None:
                bound[pname] = value
        if kwargs is not None and kw_extra.items:
            bound[kwargs] = kw_extra
        if star is not None and star not in bound and extra:
            bound[star] = TupleVal(tuple(extra))
        slots: dict = {}
        start = {k: _to_param(v, k, slots) for k, v in bound.items()}
        if not slots and not any(isinstance(v, SelfVal) or v is CTX for v in bound.values()):
            return None
        abstract = tuple(sorted((k, _sig(v)) for k, v in start.items()))
        key = (id(func), abstract, tuple(sorted(self.ranks.items())))
        summary = self.summaries.get(key)
        if summary is IN_PROGRESS:
            return None  # recursion: the call in progress accounts for the effects
        if summary is None:
            if self.depth >= MAX_HELPER_DEPTH:
                self.note(call, f"helpers nested more than {MAX_HELPER_DEPTH} calls deep: "
                                f"'{label}' is not followed")
                return None
            self.summaries[key] = IN_PROGRESS
            sub = KernelAnalysis(index or self.index, label, self.depth + 1, self.summaries,
                                 self.ranks, self.path)
            sub.run(func, start)
            summary = Summary(sub.events, sub.returns,
                              start.get(first_name) if first_name is not None else None)
            self.summaries[key] = summary
        via_of = {PARAM + k: self._arg_via(k, call, positional_names, state) for k in bound}
        for event in summary.events:
            actuals = slots.get(event.slot)
            if event.slot.startswith(PARAM) and actuals is None:
                continue
            node = call if foreign else event.node
            for actual in actuals or [None]:
                slot = actual.slot if actual is not None else event.slot
                self.emit(Event(event.kind, slot, via_of.get(event.slot), node, self.kernel,
                                output=event.output, helper=event.helper or label,
                                helper_via=event.helper_via if event.helper else event.via,
                                chain=(label, *event.chain), call=call))
        if summary.self_after is not None:
            after = _substitute(summary.self_after, slots)
            if self_name is not None and isinstance(state.get(self_name), SelfVal):
                state[self_name] = after
            if self_after is not None:
                self_after.append(after)
        return _substitute(summary.returns, slots)

    def _inline(self, fn: FuncVal, call: cst.Call, values: list, state: dict,
                positional: bool = False):
        """Call a closure or lambda: its body runs with the enclosing names as they are now."""
        node = fn.node
        if self.depth >= MAX_HELPER_DEPTH or id(node) in self._inlining:
            return None
        p = node.params
        names = [x.name.value for x in (*p.posonly_params, *p.params)]
        if not positional and any(a.star for a in call.args):
            if any(_taints(v) for v in values):
                self.note(call, f"`{self.index.code(call.func)}` is called with `*`/`**` "
                                "arguments: which parameter gets what is unknown")
            return None
        local = dict(state)
        for name in names:
            local.pop(name, None)
        args = [(None, v) for v in values] if positional else \
            [(a.keyword.value if a.keyword is not None else None, v) for a, v in zip(call.args, values)]
        i = 0
        for key, value in args:
            pname = key if key is not None else (names[i] if i < len(names) else None)
            if key is None:
                i += 1
            if pname is not None and value is not None:
                local[pname] = value
        sub = KernelAnalysis(self.index, fn.label, self.depth + 1, self.summaries, self.ranks, self.path)
        sub._inlining = self._inlining | {id(node)}
        if isinstance(node, cst.Lambda):
            result = sub.eval(node.body, local)
        else:
            sub.run(node, local)
            result = sub.returns
        for event in sub.events:
            self.emit(Event(event.kind, event.slot, None, event.node, self.kernel,
                            output=event.output, helper=event.helper or fn.label,
                            helper_via=event.helper_via if event.helper else event.via,
                            chain=(fn.label, *event.chain), call=call))
        return result

    def _foreign_function(self, name: str):
        """A function imported (`from pkg.mod import f`) from a module of this project."""
        origin = self.index.from_imports.get(name)
        if not origin or self.path is None or origin.split(".")[0] in ("numpy", "cupy", "opkit"):
            return None
        from checkers.lint.imports import resolve_function

        found = resolve_function(self.path, origin, self.index.import_levels.get(name, 0))
        if found is None:
            return None
        func, index, shown = found
        return ForeignFunc(func, index, f"{name} ({shown})")

    def _foreign(self, target: ForeignFunc, call: cst.Call, values: list, state: dict):
        return self._helper(target.func, target.label, call, values, state, index=target.index,
                            foreign=True)

    def _arg_via(self, pname: str, call: cst.Call, positional_names: list, state: dict):
        i = 0
        for arg in call.args:
            if arg.keyword is not None:
                match = arg.keyword.value == pname
            else:
                match = i < len(positional_names) and positional_names[i] == pname
                i += 1
            if match:
                return self._via_plain(arg.value, state)
        return None


def _decorated(func: cst.FunctionDef, name: str) -> bool:
    return any(isinstance(d.decorator, cst.Name) and d.decorator.value == name for d in func.decorators)


def _to_param(value, path: str, slots: dict):
    """The value as the helper sees it: inputs become its parameter slots (recorded in
    `slots`: parameter slot -> the caller's inputs), inside tuples, dicts and objects too."""
    if isinstance(value, Taint):
        slots[PARAM + path] = [value]
        return replace(value, slot=PARAM + path)
    if isinstance(value, StarArgs):
        slots[PARAM + path] = list(value.items)
        return Taint(PARAM + path, "list")
    if isinstance(value, TupleVal):
        return TupleVal(tuple(_to_param(v, f"{path}[{i}]", slots) for i, v in enumerate(value.items)))
    if isinstance(value, DictVal):
        return DictVal(tuple((k, _to_param(v, f"{path}[{k!r}#{i}]", slots))
                             for i, (k, v) in enumerate(value.items)))
    if isinstance(value, SelfVal):
        return replace(value, attrs=tuple((k, _to_param(v, f"{path}.{k}", slots)) for k, v in value.attrs))
    return value


def _sig(value):
    """What a helper's summary depends on (inputs by kind, not by name)."""
    if isinstance(value, Taint):
        return ("taint", value.kind, value.maybe_scalar, value.rank, value.slot)
    if isinstance(value, Const):
        return ("const", value.value)
    if isinstance(value, TupleVal):
        return ("tuple", tuple(_sig(v) for v in value.items))
    if isinstance(value, DictVal):
        return ("dict", tuple((k, _sig(v)) for k, v in value.items))
    if isinstance(value, SelfVal):
        return ("self", value.cls, tuple((k, _sig(v)) for k, v in value.attrs))
    if isinstance(value, (FuncVal, ForeignFunc)):
        return ("func", id(value.func if isinstance(value, ForeignFunc) else value.node))
    if isinstance(value, str):
        return value  # XP, CTX, INT, FRESH, RNG
    return None


def _substitute(value, slots: dict):
    """A helper's return value in the caller's terms (parameter slots -> the caller's inputs)."""
    if isinstance(value, Taint) and value.slot.startswith(PARAM):
        actual = slots.get(value.slot)
        if not actual:
            return None
        return replace(value, slot=actual[0].slot) if value.kind == actual[0].kind or \
            actual[0].kind != "list" else actual[0]
    if isinstance(value, TupleVal):
        return TupleVal(tuple(_substitute(v, slots) for v in value.items))
    if isinstance(value, IterVal):
        return IterVal(_substitute(value.element, slots))
    if isinstance(value, DictVal):
        return DictVal(tuple((k, _substitute(v, slots)) for k, v in value.items))
    if isinstance(value, SelfVal):
        return replace(value, attrs=tuple((k, _substitute(v, slots)) for k, v in value.attrs))
    if isinstance(value, ShapeVal):
        return INT
    return value


def _taints(value) -> list[Taint]:
    if isinstance(value, Taint):
        return [value]
    if isinstance(value, TupleVal):
        return [t for v in value.items for t in _taints(v)]
    return []


def analyse_kernels(index: ModuleIndex, path: str | None = None) -> list[tuple[Kernel, list[Event]]]:
    out = []
    summaries: dict = {}
    cache: dict = {}
    for kernel in index.kernels:
        state = {kernel.ctx: CTX} if kernel.ctx else {}
        if "." in kernel.name:  # Class.compute(self, ctx)
            p = kernel.func.params
            names = [x.name.value for x in (*p.posonly_params, *p.params)]
            if names and names[0] != kernel.ctx:
                state[names[0]] = SelfVal(kernel.name.split(".")[0])
        analysis = KernelAnalysis(index, kernel.name, 0, summaries, _op_ranks(index, kernel, cache), path)
        out.append((kernel, analysis.run(kernel.func, state)))
    return out


def _op_ranks(index: ModuleIndex, kernel: Kernel, cache: dict) -> dict:
    """slot -> rank asserted by the infer_shape of every op the kernel is registered for."""
    if not kernel.ops or any(not isinstance(op, str) for op in kernel.ops):
        return {}
    found = []
    for op in kernel.ops:
        if op not in cache:
            cache[op] = infer_shape_ranks(index, {op})
        found.append(cache[op])
    first = found[0]
    return {slot: rank for slot, rank in first.items() if all(f.get(slot) == rank for f in found)}
