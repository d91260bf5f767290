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

from checkers.lint.astutil import argument, is_false, is_true, keyword, root_name, string_value, suite_statements
from checkers.lint.index import Kernel, ModuleIndex
from checkers.lint.ranks import condition_equalities, equalities, infer_shape_ranks, rank_pair

XP = "<array module>"
CTX = "<execution context>"
INT = "<int>"
FRESH = "<new array>"
PARAM = "\0param:"  # slot prefix of a helper's parameter while its summary is built

INPUT_CALLS = {"input": "array", "inputs": "list", "input_tensor": "tensor", "input_var": "var"}
VIEW_ATTRS = {"T", "mT", "real", "imag", "flat", "base"}
TENSOR_DATA_ATTRS = {"data", "value"}
META_ATTRS = {"shape", "dtype", "ndim", "size", "lod", "place", "name", "itemsize", "nbytes",
              "strides", "height", "type", "persistable"}
VIEW_METHODS = {"reshape", "ravel", "view", "transpose", "squeeze", "swapaxes", "diagonal",
                "__array__", "get_tensor", "get_selected_rows", "get", "value", "numpy"}
INPLACE_METHODS = {"sort", "fill", "put", "itemset", "resize", "partition", "__setitem__",
                   "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__",
                   "__ipow__", "__imod__", "__iand__", "__ior__", "__ixor__", "__ilshift__",
                   "__irshift__", "__imatmul__", "set_lod", "set_recursive_sequence_lengths"}
VIEW_FUNCS = {"asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "reshape", "ravel",
              "transpose", "squeeze", "expand_dims", "swapaxes", "moveaxis", "rollaxis",
              "broadcast_to", "atleast_1d", "atleast_2d", "atleast_3d", "real", "imag",
              "diagonal", "flip", "fliplr", "flipud", "rot90", "require", "permute_dims",
              "matrix_transpose"}
SAME_RANK = {"asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "transpose",
             "swapaxes", "moveaxis", "rollaxis", "real", "imag", "flip", "fliplr", "flipud",
             "rot90", "require", "permute_dims", "matrix_transpose", "T", "mT", "view"}
SPLIT_FUNCS = {"split", "array_split", "hsplit", "vsplit", "dsplit", "broadcast_arrays"}
WRITE_FUNCS = {"copyto": "dst", "put": "a", "place": "arr", "putmask": "a", "put_along_axis": "arr",
               "fill_diagonal": "a"}  # function -> name of the array it writes
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
    cls: str


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
        return next((v for v in value.items if isinstance(v, Taint)), None)
    if isinstance(value, IterVal):
        return value.element
    if isinstance(value, ShapeVal):
        return INT
    if value is FRESH:
        return FRESH
    return None


def merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for key, value in b.items():
        if value is not None and (out.get(key) is None or
                                  (isinstance(value, Taint) and not isinstance(out[key], Taint))):
            out[key] = value
    return out


def join(a, b):
    """One value for two paths: an input on either path wins."""
    if a is None or (isinstance(b, (Taint, TupleVal)) and not isinstance(a, (Taint, TupleVal))):
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
                 summaries: dict | None = None, ranks: dict | None = None) -> None:
        self.index = index
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
            if isinstance(stmt, cst.For):
                element = element_of(self.eval(stmt.iter, state))
            else:
                self.eval(stmt.test, state)
            loop = dict(state)
            for _ in range(2):
                if isinstance(stmt, cst.For):
                    self.bind(stmt.target, element, loop)
                self.block(suite_statements(stmt.body), loop)
                loop = merge(state, loop)
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
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
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
            self.target_write(target, state, target)

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
        return None

    # -- expressions -------------------------------------------------------------------------
    def eval(self, expr, state: dict):
        if expr is None:
            return None
        if isinstance(expr, cst.Name):
            return state.get(expr.value, XP if expr.value in self.index.array_modules else None)
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
            for el in expr.elements:
                if isinstance(el, cst.DictElement):
                    self.eval(el.key, state)
                self.eval(el.value, state)
            return None
        if isinstance(expr, cst.FormattedString):
            for part in expr.parts:
                if isinstance(part, cst.FormattedStringExpression):
                    self.eval(part.expression, state)
            return None
        if isinstance(expr, cst.Set):
            for el in expr.elements:
                self.eval(el.value, state)
            return None
        return None  # other literals, lambdas: nothing to track

    def _comprehension(self, expr, state: dict):
        local = dict(state)
        clause = expr.for_in
        while clause is not None:
            self.bind(clause.target, element_of(self.eval(clause.iter, local)), local)
            for cond in clause.ifs:
                self.eval(cond.test, local)
            clause = clause.inner_for_in
        if isinstance(expr, cst.DictComp):
            self.eval(expr.key, local)
            self.eval(expr.value, local)
            return None
        elt = self.eval(expr.elt, local)
        if isinstance(elt, Taint) and elt.kind == "array" and not isinstance(expr, cst.SetComp):
            return Taint(elt.slot, "list")
        return None

    def _attribute(self, expr: cst.Attribute, state: dict):
        attr = expr.attr.value
        base = self.eval(expr.value, state)
        if base is CTX and attr == "xp":
            return XP
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
        return None

    # -- calls -------------------------------------------------------------------------------
    def _call(self, call: cst.Call, state: dict):
        func = call.func
        values = [self.eval(arg.value, state) for arg in call.args]
        for arg, value in zip(call.args, values):
            if arg.keyword is not None and arg.keyword.value == "out":
                self._out_write(value, arg.value, state, call)
        if isinstance(func, cst.Attribute):
            method = func.attr.value
            receiver = self.eval(func.value, state)
            if receiver is CTX:
                return self._ctx_call(method, call, values, state)
            if receiver is XP:
                return self._module_call(method, call, values, state)
            if isinstance(func.value, cst.Attribute) and self.eval(func.value.value, state) is XP:
                inner = func.value.attr.value
                if method == "at" or (inner == "random" and method in ("shuffle",)):
                    self._arg0_write(call, values, state)  # np.add.at(x, ...), np.random.shuffle(x)
                    return None
                return FRESH if inner in ("linalg", "fft", "random") else None
            if isinstance(receiver, Taint):
                return self._method_call(receiver, method, func, call, state)
            if receiver is FRESH:
                return FRESH
            if isinstance(receiver, SelfVal):
                target = self._method(receiver.cls, method)
                if target is not None:
                    func_def, label = target
                    static = _decorated(func_def, "staticmethod")
                    return self._helper(func_def, label, call, values, state,
                                        bound_self=None if static else receiver)
                return None
            if isinstance(func.value, cst.Name) and func.value.value not in state \
                    and func.value.value in self.index.classes:
                target = self._method(func.value.value, method)
                if target is not None:
                    func_def, label = target
                    cls_first = _decorated(func_def, "classmethod")
                    return self._helper(func_def, label, call, values, state,
                                        bound_self=SelfVal(func.value.value) if cls_first else None)
            return None
        if isinstance(func, cst.Name):
            name = func.value
            if name in state:
                return None
            origin = self.index.from_imports.get(name, "")
            if origin.split(".")[0] in ("numpy", "cupy"):
                return self._module_call(origin.rsplit(".", 1)[-1], call, values, state)
            if name in LIST_BUILTINS and values and isinstance(values[0], Taint) \
                    and values[0].kind == "list":
                return values[0]
            if name == "enumerate" and values:
                return IterVal(TupleVal((INT, element_of(values[0]))))
            if name == "zip":
                return IterVal(TupleVal(tuple(element_of(v) for v in values)))
            if name == "range":
                return IterVal(INT)
            kind = self.index.canonical(name)
            if kind in ("enforce", "enforce_eq"):
                self._rank_facts(equalities(kind, call), state)
                return None
            if name in INT_BUILTINS and name not in self.index.functions:
                return INT if name in ("len", "int") or all(v is INT for v in values) else None
            if name in self.index.functions:
                return self._helper(self.index.functions[name], name, call, values, state)
        else:
            self.eval(func, state)
        return None

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

    def _module_call(self, name: str, call: cst.Call, values: list, state: dict):
        first = values[0] if values else None
        if name in WRITE_FUNCS:
            self._arg0_write(call, values, state, WRITE_FUNCS[name])
            return None
        if name in VIEW_FUNCS:
            if not (isinstance(first, Taint) and first.kind == "array"):
                return FRESH
            rank = first.rank
            if name in ("reshape",):
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
        if name == "array":
            copy = keyword(call, "copy")
            if copy is not None and is_false(copy.value) and isinstance(first, Taint):
                return first
            return FRESH
        if name in SPLIT_FUNCS and isinstance(first, Taint) and first.kind == "array":
            return Taint(first.slot, "list")
        if name == "get_array_module":
            return XP
        if name in ("ndim", "size"):
            return INT
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
        if method == "byteswap":
            inplace = argument(call, 0, "inplace")
            if inplace is not None and is_true(inplace):
                self.write(receiver, via, call)
                return replace(receiver, maybe_scalar=False)
            return FRESH
        if method == "astype":
            copy = keyword(call, "copy")
            if copy is not None and is_false(copy.value):
                return replace(receiver, maybe_scalar=False)
            return FRESH
        if method in VIEW_METHODS:
            if receiver.kind in ("tensor", "var") and method not in ("reshape", "ravel", "view",
                                                                     "transpose", "squeeze"):
                return Taint(receiver.slot, "var")
            rank = receiver.rank if method in SAME_RANK else None
            if method == "reshape":
                rank = _rank_of_shape_args(list(call.args))
            elif method == "ravel":
                rank = 1
            return replace(receiver, maybe_scalar=False, rank=rank)
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
                state: dict, bound_self=None):
        """Apply the summary of a same-module helper at this call; its return value."""
        p = func.params
        positional_names = [x.name.value for x in (*p.posonly_params, *p.params)]
        names = set(positional_names) | {x.name.value for x in p.kwonly_params}
        bound: dict = {}
        if bound_self is not None and positional_names:
            bound[positional_names[0]] = bound_self
            positional_names = positional_names[1:]
        star = p.star_arg.name.value if isinstance(p.star_arg, cst.Param) else None
        extra: list = []  # values of the positional arguments that land in *args
        i = 0
        for arg, value in zip(call.args, values):
            if arg.star:
                if arg.star == "*" and star is not None and i >= len(positional_names) \
                        and isinstance(value, Taint) and value.kind == "list" and not extra:
                    bound[star] = value  # f(*xs) into def f(*arrs): arrs holds the inputs
                    i = len(positional_names) + 1
                    continue
                return None  # which parameter gets what is unknown
            if arg.keyword is not None:
                pname = arg.keyword.value
            else:
                pname = positional_names[i] if i < len(positional_names) else None
                if pname is None and star is not None:
                    extra.append(value)
                i += 1
            if pname is None or pname not in names:
                continue
            if value is None and isinstance(arg.value, cst.Name):
                text = self.index.strings(arg.value)
                value = Const(text) if isinstance(text, str) else None
            if value is not None:
                bound[pname] = value
        spread = [v for v in extra if isinstance(v, Taint) and v.kind != "list"]
        if spread and star not in bound:
            bound[star] = StarArgs(tuple(spread))
        if not any(isinstance(v, (Taint, SelfVal, StarArgs)) or v is CTX for v in bound.values()):
            return None
        abstract = tuple(sorted((k, _abstract(v)) for k, v in bound.items()))
        key = (id(func), abstract, tuple(sorted(self.ranks.items())))
        summary = self.summaries.get(key)
        if summary is IN_PROGRESS:
            return None  # recursion: the call in progress accounts for the effects
        if summary is None:
            if self.depth >= MAX_HELPER_DEPTH:
                return None
            self.summaries[key] = IN_PROGRESS
            start = {}
            for k, v in bound.items():
                if isinstance(v, Taint):
                    start[k] = replace(v, slot=PARAM + k)
                elif isinstance(v, StarArgs):
                    start[k] = Taint(PARAM + k, "list")
                elif not isinstance(v, TupleVal):
                    start[k] = v
            sub = KernelAnalysis(self.index, label, self.depth + 1, self.summaries, self.ranks)
            sub.run(func, start)
            summary = self.summaries[key] = Summary(sub.events, sub.returns)
        slots = {PARAM + k: (list(v.items) if isinstance(v, StarArgs) else [v])
                 for k, v in bound.items() if isinstance(v, (Taint, StarArgs))}
        via_of = {PARAM + k: self._arg_via(k, call, positional_names, state) for k in bound}
        for event in summary.events:
            actuals = slots.get(event.slot)
            if event.slot.startswith(PARAM) and actuals is None:
                continue
            for actual in actuals or [None]:
                slot = actual.slot if actual is not None else event.slot
                self.emit(Event(event.kind, slot, via_of.get(event.slot), event.node, self.kernel,
                                output=event.output, helper=event.helper or label,
                                helper_via=event.helper_via if event.helper else event.via,
                                chain=(label, *event.chain), call=call))
        return _substitute(summary.returns, slots)

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


def _abstract(value):
    if isinstance(value, Taint):
        return ("taint", value.kind, value.maybe_scalar, value.rank)
    if isinstance(value, Const):
        return ("const", value.value)
    if isinstance(value, SelfVal):
        return ("self", value.cls)
    if isinstance(value, StarArgs):
        return ("star", tuple(v.kind for v in value.items))
    if isinstance(value, str):
        return value  # XP, CTX, INT, FRESH
    return None


def _substitute(value, slots: dict):
    """A helper's return value in the caller's terms (parameter slots -> the caller's inputs)."""
    if isinstance(value, Taint) and value.slot.startswith(PARAM):
        actual = slots.get(value.slot)
        return replace(value, slot=actual[0].slot) if actual else None
    if isinstance(value, TupleVal):
        return TupleVal(tuple(_substitute(v, slots) for v in value.items))
    if isinstance(value, IterVal):
        return IterVal(_substitute(value.element, slots))
    if isinstance(value, ShapeVal):
        return INT
    if isinstance(value, SelfVal):
        return None
    return value


def _taints(value) -> list[Taint]:
    if isinstance(value, Taint):
        return [value]
    if isinstance(value, TupleVal):
        return [v for v in value.items if isinstance(v, Taint)]
    return []


def analyse_kernels(index: ModuleIndex) -> list[tuple[Kernel, list[Event]]]:
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
        analysis = KernelAnalysis(index, kernel.name, 0, summaries, _op_ranks(index, kernel, cache))
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
