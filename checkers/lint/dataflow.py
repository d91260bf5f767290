"""Flow-sensitive tracking of kernel inputs, shared by OPK001 and OPK004.

A kernel body is interpreted statement by statement. Each local name maps to what it
holds: an input (`Taint`: which slot, and what kind of object), a tuple of such values,
the array module (`XP`) or the ExecutionContext (`CTX`). Views and aliases keep the
taint; copies, arithmetic and other calls give new values; rebinding a name ends its
tracking. Branches are analysed separately and merged (a name is an input when it is one
on any path); loop bodies run twice so that values flowing around the loop are seen.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import libcst as cst

from checkers.lint.astutil import argument, is_false, is_true, keyword, params, root_name, suite_statements
from checkers.lint.index import Kernel, ModuleIndex

XP = "<array module>"
CTX = "<execution context>"

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
SPLIT_FUNCS = {"split", "array_split", "hsplit", "vsplit", "dsplit", "broadcast_arrays"}
WRITE_FUNCS = {"copyto", "put", "place", "putmask", "put_along_axis", "fill_diagonal"}
LIST_BUILTINS = {"list", "tuple", "reversed", "sorted"}
MAX_HELPER_DEPTH = 3


@dataclass(frozen=True)
class Taint:
    slot: str
    kind: str  # array | list | tensor | var
    maybe_scalar: bool = False  # from plain indexing: may be a numpy scalar, not a view


@dataclass(frozen=True)
class TupleVal:
    items: tuple


@dataclass(frozen=True)
class IterVal:
    """enumerate(...) / zip(...): iterating gives a tuple of element values."""
    element: object


@dataclass
class Event:
    kind: str  # write | output
    slot: str
    via: str | None
    node: cst.CSTNode
    kernel: str
    output: str | None = None
    helper: str | None = None  # for writes inside a helper function
    helper_line_node: cst.CSTNode | None = None
    helper_via: str | None = None


def element_of(value):
    if isinstance(value, Taint):
        if value.kind == "list":
            return Taint(value.slot, "array")
        if value.kind == "array":
            return replace(value, maybe_scalar=True)
        return None
    if isinstance(value, TupleVal):
        return next((v for v in map(element_of_tuple_item, value.items) if v is not None), None)
    if isinstance(value, IterVal):
        return value.element
    return None


def element_of_tuple_item(item):
    return item if isinstance(item, Taint) else None


def merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for key, value in b.items():
        if value is not None and out.get(key) is None:
            out[key] = value
    return out


class KernelAnalysis:
    def __init__(self, index: ModuleIndex, kernel: str, depth: int = 0,
                 helper_cache: dict | None = None) -> None:
        self.index = index
        self.kernel = kernel
        self.depth = depth
        self.events: list[Event] = []
        self._seen: set[tuple] = set()
        self.helper_cache = helper_cache if helper_cache is not None else {}

    # -- entry points ------------------------------------------------------------------------
    def run(self, func: cst.FunctionDef, state: dict) -> list[Event]:
        self.block(suite_statements(func.body), state)
        return self.events

    def emit(self, event: Event) -> None:
        key = (event.kind, id(event.node), event.slot, event.output)
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
        elif isinstance(small, (cst.Expr, cst.Return)):
            if small.value is not None:
                self.eval(small.value, state)
        elif isinstance(small, cst.Raise):
            if small.exc is not None:
                self.eval(small.exc, state)
        elif isinstance(small, cst.Assert):
            self.eval(small.test, state)
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
            item = element_of(value) if isinstance(value, Taint) else None
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
                self._eval_slice(el, state)
        if isinstance(base, Taint) and base.kind in ("array", "var", "tensor"):
            self.write(base, self._via(target.value, state), node)

    def _via(self, expr, state: dict) -> str | None:
        name = root_name(expr)
        return name if name is not None and isinstance(state.get(name), Taint) else None

    def write(self, taint: Taint, via: str | None, node) -> None:
        self.emit(Event("write", taint.slot, via, node, self.kernel))

    # -- expressions -------------------------------------------------------------------------
    def _eval_slice(self, el, state: dict) -> bool:
        """Evaluates a subscript element; True when it is a slice (gives a view)."""
        inner = el.slice
        if isinstance(inner, cst.Slice):
            for part in (inner.lower, inner.upper, inner.step):
                if part is not None:
                    self.eval(part, state)
            return True
        value = inner.value
        self.eval(value, state)
        return isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None")

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
            base = self.eval(expr.value, state)
            has_slice = False
            for el in expr.slice:
                has_slice = self._eval_slice(el, state) or has_slice
            if isinstance(base, Taint):
                if base.kind == "list":
                    return Taint(base.slot, "array")
                if base.kind == "array":
                    return replace(base, maybe_scalar=not has_slice)
            if isinstance(base, TupleVal) and len(expr.slice) == 1:
                idx = expr.slice[0].slice
                if isinstance(idx, cst.Index) and isinstance(idx.value, cst.Integer):
                    i = int(idx.value.value, 0)
                    if -len(base.items) <= i < len(base.items):
                        return base.items[i]
            return None
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
            return body if body is not None else orelse
        if isinstance(expr, cst.NamedExpr):
            value = self.eval(expr.value, state)
            self.bind(expr.target, value, state)
            return value
        if isinstance(expr, cst.BinaryOperation):
            self.eval(expr.left, state)
            self.eval(expr.right, state)
            return None
        if isinstance(expr, cst.UnaryOperation):
            self.eval(expr.expression, state)
            return None
        if isinstance(expr, cst.Comparison):
            self.eval(expr.left, state)
            for target in expr.comparisons:
                self.eval(target.comparator, state)
            return None
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
        return None  # literals, lambdas: nothing to track

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
            if base.kind == "array" and attr in VIEW_ATTRS:
                return replace(base, maybe_scalar=False)
            if base.kind == "tensor" and attr in TENSOR_DATA_ATTRS:
                return Taint(base.slot, "array")
            if base.kind == "var" and attr not in META_ATTRS:
                return base
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
                return self._ctx_call(method, call, values)
            if receiver is XP:
                return self._module_call(method, call, values, state)
            if isinstance(func.value, cst.Attribute) and self.eval(func.value.value, state) is XP:
                inner = func.value.attr.value
                if method == "at" or (inner == "random" and method in ("shuffle",)):
                    self._arg0_write(call, values, state)  # np.add.at(x, ...), np.random.shuffle(x)
                return None
            if isinstance(receiver, Taint):
                return self._method_call(receiver, method, func, call, state)
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
                return IterVal(TupleVal((None, element_of(values[0]))))
            if name == "zip":
                return IterVal(TupleVal(tuple(element_of(v) for v in values)))
            if name in self.index.functions:
                self._helper(name, call, values, state)
        else:
            self.eval(func, state)
        return None

    def _ctx_call(self, method: str, call: cst.Call, values: list):
        if method in INPUT_CALLS:
            slot = self.index.slot(call.args[0].value) if call.args else "?"
            return Taint(slot, INPUT_CALLS[method])
        if method == "set_output" and len(call.args) >= 2:
            value = values[1]
            name = self.index.slot(call.args[0].value)
            for taint in _taints(value):
                self.emit(Event("output", taint.slot, self._via_plain(call.args[1].value), call,
                                self.kernel, output=name))
        return None

    @staticmethod
    def _via_plain(expr) -> str | None:
        return expr.value if isinstance(expr, cst.Name) else None

    def _module_call(self, name: str, call: cst.Call, values: list, state: dict):
        first = values[0] if values else None
        if name in WRITE_FUNCS:
            self._arg0_write(call, values, state)
            return None
        if name in VIEW_FUNCS:
            return replace(first, maybe_scalar=False) if isinstance(first, Taint) \
                and first.kind == "array" else None
        if name == "array":
            copy = keyword(call, "copy")
            if copy is not None and is_false(copy.value) and isinstance(first, Taint):
                return first
            return None
        if name in SPLIT_FUNCS and isinstance(first, Taint) and first.kind == "array":
            return Taint(first.slot, "list")
        if name == "get_array_module":
            return XP
        return None

    def _arg0_write(self, call: cst.Call, values: list, state: dict) -> None:
        if call.args and call.args[0].keyword is None:
            for taint in _taints(values[0]):
                if taint.kind != "list":
                    self.write(taint, self._via(call.args[0].value, state), call)

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
            return replace(receiver, maybe_scalar=False) if inplace is not None and is_true(inplace) \
                else None
        if method == "astype":
            copy = keyword(call, "copy")
            if copy is not None and is_false(copy.value):
                return replace(receiver, maybe_scalar=False)
            return None
        if method in VIEW_METHODS:
            if receiver.kind in ("tensor", "var") and method not in ("reshape", "ravel", "view",
                                                                     "transpose", "squeeze"):
                return Taint(receiver.slot, "var")
            return replace(receiver, maybe_scalar=False)
        return None

    def _helper(self, name: str, call: cst.Call, values: list, state: dict) -> None:
        """Follow inputs passed to a function defined in the same module."""
        if self.depth >= MAX_HELPER_DEPTH:
            return
        func = self.index.functions[name]
        names = params(func)
        bound: dict = {}
        for i, (arg, value) in enumerate(zip(call.args, values)):
            if arg.star:
                return
            if value is None:
                continue
            if arg.keyword is not None:
                bound[arg.keyword.value] = value
            elif i < len(names):
                bound[names[i]] = value
        bound = {k: v for k, v in bound.items() if k in names and (isinstance(v, Taint) or v is CTX)}
        if not any(isinstance(v, Taint) for v in bound.values()):
            return
        key = (name, tuple(sorted((k, repr(v)) for k, v in bound.items())))
        if key not in self.helper_cache:
            self.helper_cache[key] = None  # recursion guard
            sub = KernelAnalysis(self.index, name, self.depth + 1, self.helper_cache)
            self.helper_cache[key] = [e for e in sub.run(func, dict(bound)) if e.kind == "write"]
        for event in self.helper_cache[key] or ():
            self.emit(Event("write", event.slot, self._helper_via(call, state), call, self.kernel,
                            helper=name, helper_line_node=event.helper_line_node or event.node,
                            helper_via=event.helper_via or event.via))

    def _helper_via(self, call: cst.Call, state: dict) -> str | None:
        for arg in call.args:
            via = self._via(arg.value, state) if isinstance(arg.value, cst.Name) else None
            if via:
                return via
        return None


def _taints(value) -> list[Taint]:
    if isinstance(value, Taint):
        return [value]
    if isinstance(value, TupleVal):
        return [v for v in value.items if isinstance(v, Taint)]
    return []


def analyse_kernels(index: ModuleIndex) -> list[tuple[Kernel, list[Event]]]:
    out = []
    cache: dict = {}
    for kernel in index.kernels:
        state = {kernel.ctx: CTX} if kernel.ctx else {}
        out.append((kernel, KernelAnalysis(index, kernel.name, 0, cache).run(kernel.func, state)))
    return out
