"""What a module declares at its top level: imports, constants, functions, classes,
operator and kernel registrations. Built from the module's statements, never by
importing it."""
from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from checkers.lint.astutil import (UNRESOLVED, argument, dotted, has_star, params, string_value,
                                   terminal_name)

ARRAY_MODULES = {"numpy", "cupy"}
DEFAULT_PLACES = ("CPU",)
DEFAULT_DTYPES = ("float32", "float64")


@dataclass
class KernelRegistration:
    call: cst.Call
    op: object  # str or UNRESOLVED
    places: object  # tuple[str] or UNRESOLVED
    dtypes: object  # tuple[str] or UNRESOLVED
    target: str | None  # name of the registered function/class, when known


@dataclass
class OperatorRegistration:
    call: cst.Call
    op: object
    inplace: object  # dict[str, set[str]] (input -> outputs), or UNRESOLVED


@dataclass
class Kernel:
    name: str  # "relu_kernel" or "ReluKernel.compute"
    func: cst.FunctionDef
    ctx: str | None
    ops: list = field(default_factory=list)  # resolved op types (str) or UNRESOLVED


class CallCollector:
    """One walk over the whole module: every call, with whether it sits in a def or loop."""

    def __init__(self, module: cst.Module) -> None:
        from checkers.lint.astutil import walk

        self.calls: list[tuple[cst.Call, bool]] = []
        self.raises: list[cst.Raise] = []
        for node, dynamic in walk(module):
            kind = type(node)
            if kind is cst.Call:
                self.calls.append((node, dynamic))
            elif kind is cst.Raise:
                self.raises.append(node)


class ModuleIndex:
    def __init__(self, module: cst.Module, collector: CallCollector | None = None) -> None:
        self.module = module
        self.array_modules: set[str] = set()  # local names bound to numpy / cupy
        self.from_imports: dict[str, str] = {}  # local name -> "module.name"
        self.import_levels: dict[str, int] = {}  # local name -> dots of a relative import
        self.module_imports: dict[str, str] = {}  # `import pkg.mod as m`: "m" -> "pkg.mod"
        self._const_nodes: dict[str, object] = {}
        self.functions: dict[str, cst.FunctionDef] = {}
        self.classes: dict[str, cst.ClassDef] = {}
        self._scan(module.body)
        self._resolving: set[str] = set()
        self._env: dict = {}  # names bound while unrolling a registration loop or helper
        self.kernel_regs: list[KernelRegistration] = []
        self.operator_regs: list[OperatorRegistration] = []
        self.unresolved_kernel_ops = False
        self.kernels: list[Kernel] = []
        self._collect_registrations(collector)

    # -- names -------------------------------------------------------------------------------
    def canonical(self, name: str | None) -> str | None:
        """The imported name behind a local alias (`rk` -> `register_kernel`)."""
        if name is None:
            return None
        origin = self.from_imports.get(name)
        return origin.rsplit(".", 1)[-1] if origin else name

    def call_kind(self, call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Name):
            return self.canonical(func.value)
        if isinstance(func, cst.Attribute):
            return func.attr.value
        return None

    def code(self, node) -> str:
        return self.module.code_for_node(node)

    # -- top level ---------------------------------------------------------------------------
    def _bind(self, name: str, value) -> None:
        self._const_nodes[name] = UNRESOLVED if name in self._const_nodes else value

    def _scan(self, statements, nested: bool = False) -> None:
        for stmt in statements:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    self._scan_small(small, nested)
            elif isinstance(stmt, cst.FunctionDef):
                self.functions[stmt.name.value] = stmt
                self._bind(stmt.name.value, UNRESOLVED)
            elif isinstance(stmt, cst.ClassDef):
                self.classes[stmt.name.value] = stmt
                self._bind(stmt.name.value, UNRESOLVED)
            elif isinstance(stmt, (cst.If, cst.Try, cst.With)):
                # imports under `try:`/`if TYPE_CHECKING:` still count; constants there do not
                for block in _blocks(stmt):
                    self._scan(block, nested=True)
            elif isinstance(stmt, (cst.For, cst.While)):
                for block in _blocks(stmt):
                    self._scan(block, nested=True)
                if isinstance(stmt, cst.For):
                    for name in _target_names(stmt.target):
                        self._bind(name, UNRESOLVED)

    def _scan_small(self, small, nested: bool) -> None:
        if isinstance(small, cst.Import):
            for alias in small.names:
                full = dotted(alias.name) or ""
                local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) \
                    else full.split(".")[0]
                if full in ARRAY_MODULES:
                    self.array_modules.add(local)
                elif alias.asname is not None and full.split(".")[0] not in ("opkit", "cupy"):
                    self.module_imports[local] = full
        elif isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
            module = dotted(small.module) if small.module else ""
            for alias in small.names:
                name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name)
                local = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) \
                    else name
                self.from_imports[local] = f"{module}.{name}"
                if small.relative:
                    self.import_levels[local] = len(small.relative)
                if module == "" and name in ARRAY_MODULES:
                    self.array_modules.add(local)
        elif isinstance(small, cst.Assign):
            for target in small.targets:
                names = _target_names(target.target)
                for name in names:
                    single = isinstance(target.target, cst.Name) and not nested
                    self._bind(name, small.value if single else UNRESOLVED)
        elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
            self._bind(small.target.value, small.value if small.value is not None and not nested
                       else UNRESOLVED)
        elif isinstance(small, cst.AugAssign):
            for name in _target_names(small.target):
                self._const_nodes[name] = UNRESOLVED

    # -- constants ---------------------------------------------------------------------------
    def strings(self, expr) -> object:
        """A str or a tuple of str for a literal/constant expression, else UNRESOLVED."""
        if expr is None:
            return UNRESOLVED
        text = string_value(expr)
        if text is not None:
            return text
        if isinstance(expr, cst.Name):
            node = self._env.get(expr.value) or self._const_nodes.get(expr.value, UNRESOLVED)
            if node is UNRESOLVED or expr.value in self._resolving:
                return UNRESOLVED
            self._resolving.add(expr.value)
            try:
                return self.strings(node)
            finally:
                self._resolving.discard(expr.value)
        if isinstance(expr, (cst.Tuple, cst.List)):
            out: list[str] = []
            for el in expr.elements:
                value = self.strings(el.value)
                if value is UNRESOLVED:
                    return UNRESOLVED
                if isinstance(el, cst.StarredElement) or isinstance(value, tuple):
                    if not isinstance(value, tuple):
                        return UNRESOLVED
                    out.extend(value)
                else:
                    out.append(value)
            return tuple(out)
        if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
            left, right = self.strings(expr.left), self.strings(expr.right)
            if isinstance(left, tuple) and isinstance(right, tuple):
                return left + right
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            return UNRESOLVED
        if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) \
                and expr.value.value in self.array_modules:
            return expr.attr.value  # np.float32 -> "float32"
        if isinstance(expr, cst.Call) and self.call_kind(expr) == "grad_var_name":
            inner = self.strings(argument(expr, 0, "var_name"))
            return inner + "@GRAD" if isinstance(inner, str) else UNRESOLVED
        return UNRESOLVED

    def string_tuple(self, expr, default) -> object:
        if expr is None:
            return tuple(default)
        value = self.strings(expr)
        if isinstance(value, str):
            return (value,)
        return value

    def slot(self, expr) -> str:
        """A slot name for messages: the literal, or the source text."""
        value = self.strings(expr)
        return value if isinstance(value, str) else self.code(expr)

    def inplace_map(self, expr) -> object:
        if expr is None or (isinstance(expr, cst.Name) and expr.value == "None"):
            return {}
        if isinstance(expr, cst.Name):
            node = self._const_nodes.get(expr.value, UNRESOLVED)
            return UNRESOLVED if node is UNRESOLVED else self.inplace_map(node)
        pairs = []
        if isinstance(expr, cst.Dict):
            for el in expr.elements:
                if not isinstance(el, cst.DictElement):
                    return UNRESOLVED
                pairs.append((el.key, el.value))
        elif isinstance(expr, (cst.List, cst.Tuple)):
            for el in expr.elements:
                if not isinstance(el.value, (cst.Tuple, cst.List)) or len(el.value.elements) != 2:
                    return UNRESOLVED
                pairs.append((el.value.elements[0].value, el.value.elements[1].value))
        else:
            return UNRESOLVED
        out: dict[str, set[str]] = {}
        for key, value in pairs:
            k, v = self.strings(key), self.string_tuple(value, ())
            if not isinstance(k, str) or v is UNRESOLVED:
                return UNRESOLVED
            out.setdefault(k, set()).update(v)
        return out

    # -- registrations -----------------------------------------------------------------------
    def _kernel_reg(self, call: cst.Call, target: str | None, dynamic: bool) -> None:
        if has_star(call):
            op = places = dtypes = UNRESOLVED
        else:
            op = self.strings(argument(call, 0, "op_type"))
            if not isinstance(op, str):
                op = UNRESOLVED
            places = self.string_tuple(argument(call, 1, "place"), DEFAULT_PLACES)
            dtypes = self.string_tuple(argument(call, 2, "dtypes"), DEFAULT_DTYPES)
        if dynamic:
            places = dtypes = UNRESOLVED
        if op is UNRESOLVED:
            self.unresolved_kernel_ops = True
        self.kernel_regs.append(KernelRegistration(call, op, places, dtypes, target))

    def _collect_registrations(self, collector: CallCollector | None) -> None:
        seen: set[int] = set()
        targets: dict[str, list] = {}
        for stmt in self.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                for dec in stmt.decorators:
                    call = dec.decorator
                    if isinstance(call, cst.Call) and self.call_kind(call) == "register_kernel":
                        seen.add(id(call))
                        self._kernel_reg(call, stmt.name.value, dynamic=False)
            elif isinstance(stmt, (cst.SimpleStatementLine, cst.For)):
                self._unroll([stmt], {}, seen, 0)
        for call, dynamic in (collector.calls if collector else []):
            kind = self.call_kind(call)
            if kind == "register_kernel" and id(call) not in seen:
                self._kernel_reg(call, None, dynamic=True)
            elif kind == "register_operator":
                op = self.strings(argument(call, 0, "op_type"))
                if dynamic or has_star(call) or not isinstance(op, str):
                    op = UNRESOLVED
                inplace = self.inplace_map(argument(call, 99, "inplace"))
                self.operator_regs.append(OperatorRegistration(call, op, inplace))
        for reg in self.kernel_regs:
            if reg.target:
                targets.setdefault(reg.target, []).append(reg.op)
        for name, ops in targets.items():
            func, ctx = None, None
            if name in self.functions:
                func = self.functions[name]
                names = params(func)
                ctx = names[0] if names else None
                label = name
            elif name in self.classes:
                func = _method(self.classes[name], "compute")
                names = params(func) if func else []
                ctx = names[1] if len(names) > 1 else None
                label = f"{name}.compute"
            if func is not None:
                self.kernels.append(Kernel(label, func, ctx, ops))

    def _unroll(self, statements, env: dict, seen: set, depth: int) -> None:
        """Registrations the linter can compute: `register_kernel("op", ...)(target)` at the top
        level, in a loop over a literal tuple/list (`for dt in ("float32", "float64"):`), and
        in a helper of the module called at the top level with literal arguments."""
        for stmt in statements:
            if isinstance(stmt, cst.For):
                items = self._literal_items(stmt.iter, env)
                if items is None:
                    continue
                for item in items:
                    inner = self._bind_target(stmt.target, item, env)
                    if inner is not None:
                        self._unroll(suite_statements_of(stmt.body), inner, seen, depth)
                continue
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                value = getattr(small, "value", None)
                if not isinstance(value, cst.Call):
                    continue
                if isinstance(value.func, cst.Call) and self.call_kind(value.func) == "register_kernel":
                    # register_kernel("op", ...)(target)
                    seen.add(id(value.func))
                    arg = value.args[0].value if value.args else None
                    while isinstance(arg, cst.Name) and isinstance(env.get(arg.value), cst.Name) \
                            and env[arg.value] is not arg:
                        arg = env[arg.value]
                    target = arg.value if isinstance(arg, cst.Name) else None
                    saved, self._env = self._env, env
                    try:
                        self._kernel_reg(value.func, target, dynamic=False)
                    finally:
                        self._env = saved
                elif isinstance(value.func, cst.Name) and value.func.value in self.functions \
                        and depth < 3 and not has_star(value):
                    func = self.functions[value.func.value]
                    if "register_kernel" not in self.code(func.body):
                        continue
                    inner = self._bind_call(func, value, env)
                    if inner is not None:
                        self._unroll(suite_statements_of(func.body), inner, seen, depth + 1)

    def _literal_items(self, expr, env: dict):
        if isinstance(expr, cst.Name):
            node = env.get(expr.value) or self._const_nodes.get(expr.value, UNRESOLVED)
            if node is UNRESOLVED or node is expr:
                return None
            return self._literal_items(node, env)
        if isinstance(expr, (cst.Tuple, cst.List)) and \
                not any(isinstance(el, cst.StarredElement) for el in expr.elements):
            return [el.value for el in expr.elements]
        return None

    def _bind_target(self, target, item, env: dict):
        if isinstance(target, cst.Name):
            return {**env, target.value: item}
        if isinstance(target, (cst.Tuple, cst.List)) and isinstance(item, (cst.Tuple, cst.List)) \
                and len(target.elements) == len(item.elements):
            out = env
            for t, i in zip(target.elements, item.elements):
                out = self._bind_target(t.value, i.value, out)
                if out is None:
                    return None
            return out
        return None

    @staticmethod
    def _bind_call(func: cst.FunctionDef, call: cst.Call, env: dict):
        """Parameters of a registration helper bound to the call's argument expressions."""
        p = func.params
        if p.star_arg is not None and isinstance(p.star_arg, cst.Param) or p.star_kwarg is not None:
            return None
        positional = [x for x in (*p.posonly_params, *p.params)]
        by_name = {x.name.value: x for x in (*positional, *p.kwonly_params)}
        out: dict = {}
        for x in by_name.values():
            if x.default is not None:
                out[x.name.value] = x.default
        for i, arg in enumerate(call.args):
            value = arg.value
            if isinstance(value, cst.Name) and value.value in env:
                value = env[value.value]
            if arg.keyword is None:
                if i >= len(positional):
                    return None
                out[positional[i].name.value] = value
            elif arg.keyword.value in by_name:
                out[arg.keyword.value] = value
            else:
                return None
        return out if len(out) == len(by_name) else None

    def inplace_for(self, op) -> object:
        """input -> outputs declared inplace for `op` in this module (UNRESOLVED if unknown)."""
        if op is UNRESOLVED:
            return UNRESOLVED
        found: dict[str, set[str]] = {}
        for reg in self.operator_regs:
            if reg.op is UNRESOLVED:
                return UNRESOLVED
            if reg.op == op:
                if reg.inplace is UNRESOLVED:
                    return UNRESOLVED
                for k, v in reg.inplace.items():
                    found.setdefault(k, set()).update(v)
        return found

    # -- classes -----------------------------------------------------------------------------
    def is_maker(self, cls: cst.ClassDef, _depth: int = 0) -> bool:
        """An `OpMaker` subclass (not a GradOpMaker), directly or through local classes."""
        for base in cls.bases:
            name = terminal_name(base.value) if isinstance(base.value, (cst.Name, cst.Attribute)) else None
            name = self.canonical(name) if isinstance(base.value, cst.Name) else name
            if not name:
                continue
            if name.endswith("OpMaker") and not name.endswith("GradOpMaker"):
                return True
            if name in self.classes and _depth < 10 and self.is_maker(self.classes[name], _depth + 1):
                return True
        return False


def _method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    for stmt in cls.body.body if isinstance(cls.body, cst.IndentedBlock) else ():
        if isinstance(stmt, cst.FunctionDef) and stmt.name.value == name:
            return stmt
    return None


def method(cls: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    return _method(cls, name)


def suite_statements_of(body):
    from checkers.lint.astutil import suite_statements

    return suite_statements(body)


def _blocks(stmt):
    from checkers.lint.astutil import suite_statements

    out = [suite_statements(stmt.body)]
    orelse = getattr(stmt, "orelse", None)
    while orelse is not None:
        out.append(suite_statements(orelse.body))
        orelse = getattr(orelse, "orelse", None)
    for handler in getattr(stmt, "handlers", ()):
        out.append(suite_statements(handler.body))
    final = getattr(stmt, "finalbody", None)
    if final is not None:
        out.append(suite_statements(final.body))
    return out


def _target_names(target) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _target_names(el.value)]
    if isinstance(target, cst.StarredElement):
        return _target_names(target.value)
    return []
