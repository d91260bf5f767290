"""OPK001 input-mutation, for C++ kernels: const_cast of an input, writes through it."""
from __future__ import annotations

from checkers.lint.cpp.base import CppRule, Report, cpp_example
from checkers.lint.cpp.parse import qualified_parts, text, walk

# ExecutionContext / InferShapeContext accessors that hand out inputs
INPUT_ACCESSORS = {"Input", "MultiInput", "InputVar", "MultiInputVar"}
# element and pointer accessors that keep pointing into an input
ELEMENT_ACCESSORS = {"at", "front", "back", "get", "get_ptr", "Get", "value", "GetMutable"}
DATA_ACCESSORS = {"data", "Data"}
# methods that change a tensor
WRITE_METHODS = {"mutable_data", "Resize", "ShareDataWith", "ShareBufferWith", "set_lod",
                 "mutable_lod", "clear", "set_layout", "ResizeAndAllocate", "mutable_value",
                 "mutable_rows", "set_rows", "set_height", "set_meta", "ShareInplaceVersionCounterWith",
                 "ShareDataNoCheckWith", "set_type", "set_offset"}
# the tensor types of phi kernels' `const T&` / `const T*` input parameters
TENSOR_TYPES = {"DenseTensor", "SelectedRows", "SparseCooTensor", "SparseCsrTensor", "Tensor",
                "LoDTensor", "TensorArray", "LoDTensorArray", "StringTensor"}


class CppInputMutation(CppRule):
    code = "OPK001"
    name = "input-mutation"
    summary = ("a C++ kernel `const_cast`s an input (or its data pointer) or calls a writing "
               "method on it")
    triggers = (b"const_cast", b"Input")
    rationale = (
        "Paddle's note: an op must not write to its inputs (another op may read the same "
        "variable; the executor reuses and shares buffers). Inputs are what `ctx.Input<T>`, "
        "`ctx.MultiInput<T>` and `ctx.InputVar` return, and a phi kernel's `const DenseTensor&` "
        "(`SelectedRows`, sparse tensors, `const std::vector<const DenseTensor*>&`) parameters. "
        "They are followed through local aliases (`auto* y = x;`, `const Tensor& t = *x;`, "
        "range-for over a multi-input, `ins[i]`, `x->data<T>()` pointers) in the function body. "
        "Reported: `const_cast` of an input, an element of one, or its data pointer; and "
        "`mutable_data`, `Resize`, `ShareDataWith`, `set_lod` and the other writing methods "
        "called on one. `const_cast` of anything else (the scope, an output, a string) is not "
        "an input write. Aliases are tracked by name within one function, in source order; "
        "an input handed to another function is not followed. A by-value copy (`Tensor t = "
        "*x;`, `DenseTensor tmp = x;`) is a tensor of its own (its dims and LoD are its own), so "
        "calls on it are not reported, `mutable_data` included, although that may hand back the "
        "buffer it shares with the input."
    )
    VALID = [
        cpp_example(
            'template <typename T>\n'
            'class ClipKernel : public framework::OpKernel<T> {\n'
            ' public:\n'
            '  void Compute(const framework::ExecutionContext& ctx) const override {\n'
            '    auto* x = ctx.Input<framework::Tensor>("X");\n'
            '    auto* out = ctx.Output<framework::Tensor>("Out");\n'
            '    T* out_data = out->mutable_data<T>(ctx.GetPlace());\n'
            '    auto* out_ptr = const_cast<T*>(out->data<T>());\n'
            '    auto& scope = const_cast<framework::Scope&>(ctx.scope());\n'
            '    out->Resize(x->dims());\n'
            '  }\n'
            '};\n'),
        # a name reused for an output is no longer the input
        cpp_example(
            'void Compute(const framework::ExecutionContext& ctx) {\n'
            '  auto* t = ctx.Input<Tensor>("X");\n'
            '  t = ctx.Output<Tensor>("Out");\n'
            '  const_cast<Tensor*>(t)->Resize({1});\n'
            '}\n'),
        cpp_example(
            'void ReluKernel(const Context& dev_ctx, const DenseTensor& x, DenseTensor* out) {\n'
            '  DenseTensor tmp = x;\n'
            '  dev_ctx.template Alloc<T>(out);\n'
            '  out->Resize(x.dims());\n'
            '}\n'),
    ]
    INVALID = [
        cpp_example(
            'void Compute(const framework::ExecutionContext& ctx) const override {\n'
            '  auto* x = ctx.Input<framework::LoDTensor>("X");\n'
            '  auto* in = const_cast<framework::LoDTensor*>(x);\n'
            '  in->Resize(framework::make_ddim({-1, 1}));\n'
            '}\n', line=3),
        cpp_example(
            'void Compute(const framework::ExecutionContext& ctx) const override {\n'
            '  const Tensor& ids = *ctx.Input<Tensor>("Ids");\n'
            '  const int64_t* ids_data = ids.data<int64_t>();\n'
            '  int64_t* p = const_cast<int64_t*>(ids_data);\n'
            '}\n', line=4),
        cpp_example(
            'void Compute(const framework::ExecutionContext& ctx) const override {\n'
            '  auto ins = ctx.MultiInput<Tensor>("X");\n'
            '  for (auto* in : ins) {\n'
            '    const_cast<Tensor*>(in)->mutable_data<T>(ctx.GetPlace());\n'
            '  }\n'
            '  const_cast<Tensor*>(ins[0])->Resize({2});\n'
            '}\n', line=(4, 6)),
        cpp_example(
            'void ReluKernel(const Context& dev_ctx, const DenseTensor& x, DenseTensor* out) {\n'
            '  const_cast<DenseTensor&>(x).Resize({x.numel()});\n'
            '}\n', line=2),
        # reassigned on one branch only: after the branch it may still be the input
        cpp_example(
            'void Compute(const framework::ExecutionContext& ctx) const override {\n'
            '  auto* cache_var = ctx.InputVar("Cache");\n'
            '  if (!cache_var) {\n'
            '    cache_var = scope->Var(name);\n'
            '  }\n'
            '  auto* cache = const_cast<framework::Variable*>(cache_var)->GetMutable<Cache>();\n'
            '}\n', line=6),
    ]

    def check(self, cpp):
        for func in cpp.nodes.get("func", []):
            if any(a.type == "function_definition" for a in _ancestors(func)):
                continue  # nested (a local class's method): walked with its outer function
            yield from _Function(func).reports()


def _ancestors(node):
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def _declarator_kind(declarator) -> str:
    """'ptr' for `*x`, 'ref' for `&x` / `&&x`, 'plain' for `x`."""
    if declarator is not None and declarator.type == "init_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return "plain"
    if declarator.type == "pointer_declarator":
        return "ptr"
    if declarator.type == "reference_declarator":
        return "ref"
    return "plain"


def _declared_name(declarator) -> str | None:
    node = declarator
    while node is not None and node.type in ("pointer_declarator", "reference_declarator",
                                             "init_declarator"):
        kids = [c for c in node.named_children if c.type not in ("type_qualifier",)]
        if not kids:
            return None
        node = node.child_by_field_name("declarator") or kids[-1]
    return text(node) if node is not None and node.type == "identifier" else None


def _block(node):
    """The innermost block (`{...}`) around `node`."""
    node = node.parent
    while node is not None and node.type != "compound_statement":
        node = node.parent
    return node


def _method(call):
    """(object node, method name) of `obj.m(...)` / `obj->m<T>(...)`, else (None, None)."""
    func = call.child_by_field_name("function")
    if func is None or func.type != "field_expression":
        return None, None
    field = func.child_by_field_name("field")
    parts = qualified_parts(field) if field is not None else []
    return func.child_by_field_name("argument"), (parts[-1] if parts else None)


class _Function:
    """One function body, in source order. An input is (where it came from, kind): kind 'ptr'
    (a `const Tensor*`), 'obj' (a `const Tensor&`) or 'list' (a vector of input pointers).
    A by-value copy (`Tensor t = *x;`) has its own dims and LoD and is not followed."""

    def __init__(self, func) -> None:
        self.func = func
        self.inputs: dict[str, tuple] = {}  # name -> (source, kind)
        self.data: dict[str, str] = {}  # data pointers of inputs -> source
        self.declared: dict[str, str] = {}  # local name -> declarator kind
        self.blocks: dict[str, object] = {}  # input name -> the block it was bound in

    def reports(self):
        declarator = self.func.child_by_field_name("declarator")
        if declarator is not None:
            self._parameters(declarator)
        body = self.func.child_by_field_name("body")
        if body is None:
            return
        for node in walk(body):
            kind = node.type
            if kind == "init_declarator":
                self._bind(_declared_name(node), node.child_by_field_name("value"),
                           _declarator_kind(node))
            elif kind == "declaration":
                for decl in node.children_by_field_name("declarator"):
                    if decl.type != "init_declarator":  # `Tensor t;`: a new, unrelated name
                        self._bind(_declared_name(decl), None, _declarator_kind(decl))
            elif kind == "assignment_expression":
                left = node.child_by_field_name("left")
                if left is not None and left.type == "identifier":
                    name = text(left)
                    if name in self.inputs and _block(node) != self.blocks.get(name):
                        # `if (!x) x = other;`: x may still be the input after the branch
                        continue
                    self._bind(name, node.child_by_field_name("right"),
                               self.declared.get(name, "unknown"), declare=False)
            elif kind == "for_range_loop":
                decl = node.child_by_field_name("declarator")
                right = self._input_of(node.child_by_field_name("right"))
                name = _declared_name(decl)
                if name:
                    self.inputs.pop(name, None)
                    self.data.pop(name, None)
                    if right is not None and right[1] == "list":
                        self.inputs[name] = (right[0], "ptr")
            elif kind == "call_expression":
                report = self._call(node)
                if report is not None:
                    yield report

    def _parameters(self, declarator) -> None:
        for sub in walk(declarator):
            if sub.type != "parameter_declaration":
                continue
            if not any(c.type == "type_qualifier" and text(c) == "const" for c in sub.children):
                continue
            tensor = self._tensor_type(sub.child_by_field_name("type"))
            decl = sub.child_by_field_name("declarator")
            if tensor is None or decl is None or decl.type not in ("reference_declarator",
                                                                   "pointer_declarator"):
                continue
            name = _declared_name(decl)
            if name:
                kind = "list" if tensor[1] else ("obj" if decl.type == "reference_declarator" else "ptr")
                self.inputs[name] = (f"the const {tensor[0]} parameter '{name}'", kind)

    @staticmethod
    def _tensor_type(type_node):
        """(type name, is a vector of const tensor pointers) of a const tensor parameter."""
        if type_node is None:
            return None
        parts = qualified_parts(type_node)
        if parts and parts[-1] in TENSOR_TYPES:
            return parts[-1], False
        if parts and parts[-1] == "vector":  # std::vector<const DenseTensor*>
            for sub in walk(type_node):
                if sub.type == "template_argument_list":
                    arg = sub.named_children[0] if sub.named_child_count else None
                    inner = qualified_parts(arg) if arg is not None else []
                    if inner and inner[-1] in TENSOR_TYPES and any(
                            c.type == "type_qualifier" and text(c) == "const" for c in arg.children):
                        return f"vector<const {inner[-1]}*>", True
                    break
        return None

    def _bind(self, name, value, declarator: str, declare: bool = True) -> None:
        if not name:
            return
        if declare:
            self.declared[name] = declarator
        self.inputs.pop(name, None)
        self.data.pop(name, None)
        if value is None:
            return
        found = self._input_of(value)
        if found is not None:
            source, kind = found
            # a pointer copied is the same input; an object copied by value is a new tensor
            if (kind in ("ptr", "list") and declarator in ("ptr", "plain", "unknown")) or \
                    (kind in ("obj", "list") and declarator == "ref"):
                self.inputs[name] = found
                self.blocks[name] = _block(value)
            return
        source = self._data_of(value)
        if source is not None:
            self.data[name] = source

    def _input_of(self, node):
        """(source, kind) when the expression `node` is an input, else None."""
        while node is not None and node.type == "parenthesized_expression" and node.named_child_count:
            node = node.named_children[0]
        if node is None:
            return None
        if node.type == "identifier":
            return self.inputs.get(text(node))
        if node.type == "pointer_expression":
            inner = self._input_of(node.child_by_field_name("argument"))
            if inner is None:
                return None
            op = node.child_by_field_name("operator")
            if op is not None and text(op) == "*" and inner[1] == "ptr":
                return inner[0], "obj"
            if op is not None and text(op) == "&" and inner[1] == "obj":
                return inner[0], "ptr"
            return None
        if node.type == "subscript_expression":
            inner = self._input_of(node.child_by_field_name("argument"))
            return (inner[0], "ptr") if inner is not None and inner[1] == "list" else None
        if node.type == "call_expression":
            obj, method = _method(node)
            if method in ("Input", "InputVar"):
                return f"ctx.{method}(...)", "ptr"
            if method in ("MultiInput", "MultiInputVar"):
                return f"ctx.{method}(...)", "list"
            if obj is None or method not in ELEMENT_ACCESSORS:
                return None
            inner = self._input_of(obj)
            if inner is None:
                return None
            if inner[1] == "list" and method in ("at", "front", "back"):
                return inner[0], "ptr"
            if method in ("get_ptr", "GetMutable"):
                return inner[0], "ptr"
            if method in ("get", "Get", "value"):
                return inner[0], "obj"
        return None

    def _data_of(self, node) -> str | None:
        while node is not None and node.type == "parenthesized_expression" and node.named_child_count:
            node = node.named_children[0]
        if node is None:
            return None
        if node.type == "identifier":
            return self.data.get(text(node))
        if node.type == "binary_expression":  # x->data<T>() + offset
            return self._data_of(node.child_by_field_name("left"))
        if node.type == "call_expression":
            obj, method = _method(node)
            if method in DATA_ACCESSORS and obj is not None:
                found = self._input_of(obj)
                return f"the data of {found[0]}" if found else None
        return None

    def _call(self, call):
        func = call.child_by_field_name("function")
        if func is not None and func.type == "template_function" and \
                text(func.child_by_field_name("name")) == "const_cast":
            args = call.child_by_field_name("arguments")
            arg = args.named_children[0] if args is not None and args.named_child_count else None
            if arg is None:
                return None
            found = self._input_of(arg)
            source = found[0] if found is not None else self._data_of(arg)
            if source is not None:
                return Report(call, f"const_cast of an input ({source}: {text(arg)}) makes it "
                                    "writable; a kernel must not write to its inputs")
            return None
        obj, method = _method(call)
        if method in WRITE_METHODS and obj is not None:
            found = self._input_of(obj)
            if found is not None and found[1] in ("ptr", "obj"):
                return Report(call, f"{method}() on an input ({found[0]}: {text(obj)}); a kernel "
                                    "must not write to its inputs")
        return None
