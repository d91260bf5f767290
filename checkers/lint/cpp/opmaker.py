"""OPK008 missing-op-comment and OPK007 slot-naming, for C++ `OpProtoAndCheckerMaker`s."""
from __future__ import annotations

import re

from checkers.lint.cpp.base import CppRule, Report, cpp_example
from checkers.lint.cpp.parse import qualified_parts, string_value, text, walk

# the naming conventions of checkers/lint/rules/slot_naming.py (OPK007), applied to the
# names' string values (that module imports libcst, which the C++ path does not load)
UPPER_CAMEL = re.compile(r"[A-Z][A-Za-z0-9]*\Z")
SNAKE = re.compile(r"_*[a-z][a-z0-9]*(_[a-z0-9]+)*\Z")
MAKER_BASES = {"OpProtoAndCheckerMaker"}


def makers(cpp, methods: bool = False):
    """(class node, class name, [Make() bodies]) of each class deriving directly from
    `framework::OpProtoAndCheckerMaker`; bodies defined in the class or out of it
    (`void FooOpMaker::Make() {...}`) in the same file. With `methods`, the bodies of all its
    member functions."""
    outside = None
    for cls in cpp.nodes.get("cls", []):
        name = cls.child_by_field_name("name")
        bases = [c for c in cls.children if c.type == "base_class_clause"]
        if name is None or not bases or not any(
                leaf.type == "type_identifier" and text(leaf) in MAKER_BASES for leaf in walk(bases[0])):
            continue
        if outside is None:
            outside = _out_of_class_bodies(cpp)
        class_name = text(name)
        bodies = []
        body = cls.child_by_field_name("body")
        if body is not None:
            for member in body.named_children:
                if member.type == "function_definition" and (methods or _function_name(member) == ["Make"]):
                    bodies.append(member.child_by_field_name("body"))
        bodies += [body for method, body in outside.get(class_name, []) if methods or method == "Make"]
        yield cls, class_name, [b for b in bodies if b is not None]


def _function_name(func) -> list[str]:
    declarator = func.child_by_field_name("declarator")
    while declarator is not None and declarator.type != "function_declarator":
        declarator = declarator.child_by_field_name("declarator")
    if declarator is None:
        return []
    return qualified_parts(declarator.child_by_field_name("declarator"))


def _out_of_class_bodies(cpp) -> dict:
    out: dict = {}
    for func in cpp.nodes.get("func", []):
        if func.parent is None or func.parent.type not in ("translation_unit", "declaration_list"):
            continue
        parts = _function_name(func)
        if len(parts) >= 2:
            out.setdefault(parts[-2], []).append((parts[-1], func.child_by_field_name("body")))
    return out


def calls_named(body, names):
    """(method name, call node, argument nodes) of `AddX(...)` / `AddAttr<T>(...)` calls
    (with or without `this->`) in `body`."""
    for node in walk(body):
        if node.type != "call_expression":
            continue
        func = node.child_by_field_name("function")
        if func is None:
            continue
        if func.type == "field_expression":
            if text(func.child_by_field_name("argument")) != "this":
                continue
            func = func.child_by_field_name("field")
        parts = qualified_parts(func) if func.type in ("identifier", "template_function",
                                                       "field_identifier", "template_method") else []
        if len(parts) == 1 and parts[0] in names:
            args = node.child_by_field_name("arguments")
            yield parts[0], node, [c for c in args.named_children if c.type != "comment"] if args else []


class CppMissingOpComment(CppRule):
    code = "OPK008"
    name = "missing-op-comment"
    summary = "an `OpProtoAndCheckerMaker` whose `Make()` has no `AddComment`, or an empty one"
    triggers = (b"OpProtoAndCheckerMaker",)
    rationale = (
        "`AddComment(...)` is the op's documentation (Paddle's API docs are generated from "
        "it). A class deriving directly from `framework::OpProtoAndCheckerMaker` none of whose "
        "member functions (in the class or defined out of it in the same file) calls "
        "`AddComment` is reported, and so is an `AddComment` with an empty or blank literal. A "
        "comment held in a variable is trusted; a maker that calls a plain function other than "
        "its `Add*` calls (an inherited `AddOpComment()`), one deriving from another maker "
        "class, or one whose `Make()` is not in the file, is not judged."
    )
    VALID = [
        cpp_example(
            'class ClipOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n'
            '  void Make() override {\n'
            '    AddInput("X", "Tensor, the input of clip op.");\n'
            '    AddComment(R"DOC(\nClip Operator.\n\n$$out = min(max(x, min), max)$$\n)DOC");\n'
            '  }\n'
            '};\n'),
        cpp_example(
            'class FooOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n  void Make() override;\n};\n'
            'void FooOpMaker::Make() {\n  AddOutput("Out", "out");\n  AddComment(kFooDoc);\n}\n'),
        # not a direct maker: its Make is elsewhere
        cpp_example('class ReduceSumOpMaker : public ops::ReduceOpMaker {};\n'),
        # Make() is declared here and defined in another file
        cpp_example(
            'class Conv2DOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n  void Make() final;\n protected:\n  virtual void Apply() {}\n};\n',
            path="conv_op.h"),
        # the comment is added by a helper of the class
        cpp_example(
            'class ElementwiseOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n'
            '  void Make() final {\n    AddInput("X", "x");\n    AddOpComment();\n  }\n'
            ' protected:\n'
            '  virtual void AddOpComment() { AddComment(GetCommentExamples()); }\n'
            '};\n'),
    ]
    INVALID = [
        cpp_example(
            'class ClipOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n'
            '  void Make() override {\n'
            '    AddInput("X", "Tensor, the input of clip op.");\n'
            '  }\n'
            '};\n', line=1),
        cpp_example(
            'class ClipOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n'
            '  void Make() override {\n'
            '    AddComment(R"DOC(\n  )DOC");\n'
            '  }\n'
            '};\n', line=4),
    ]

    def check(self, cpp):
        defined = {name for _, name, bodies in makers(cpp) if bodies}
        for cls, name, bodies in makers(cpp, methods=True):
            if name not in defined:
                continue  # Make() is defined in another file
            comments = [(call, args) for body in bodies
                        for _, call, args in calls_named(body, {"AddComment"})]
            if not comments and not _calls_unknown(bodies):
                yield Report(cls, f"OpMaker '{name}' has no AddComment(...)")
            for call, args in comments:
                value = string_value(args[0]) if args else ""
                if value is not None and not value.strip():
                    yield Report(call, f"OpMaker '{name}' has an empty AddComment(...)")


def _calls_unknown(bodies) -> bool:
    """Whether the maker calls a plain function other than its Add*/PADDLE_* calls (say an
    inherited `AddOpComment()`), which may add the comment out of the linter's sight."""
    for body in bodies:
        for node in walk(body):
            if node.type != "call_expression":
                continue
            func = node.child_by_field_name("function")
            if func is not None and func.type == "identifier":
                name = text(func)
                if not name.startswith(("Add", "PADDLE_")):
                    return True
    return False


class CppSlotNaming(CppRule):
    code = "OPK007"
    name = "slot-naming"
    summary = ("`AddInput`/`AddOutput` names not UpperCamelCase, or `AddAttr` names not "
               "snake_case, in an OpMaker")
    triggers = (b"OpProtoAndCheckerMaker",)
    rationale = (
        "Paddle's naming convention for op protos: input and output slots are UpperCamelCase "
        "(`X`, `Out`, `SavedMean`; all-caps allowed, no underscores), attributes snake_case "
        "(`use_cudnn`, `x_num_col_dims`). Only string literals given to `AddInput`, "
        "`AddOutput` and `AddAttr<T>` in the `Make()` of a direct `OpProtoAndCheckerMaker` "
        "subclass are checked; names built at run time (`framework::GradVarName(\"X\")`) are "
        "not. Attributes whose name starts with `@` (Paddle's internal ones) are skipped."
    )
    VALID = [
        cpp_example(
            'class FcOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n'
            '  void Make() override {\n'
            '    AddInput("Input", "input");\n    AddInput("W", "weights");\n'
            '    AddOutput("Out", "out");\n'
            '    AddAttr<int>("in_num_col_dims", "dims").SetDefault(1);\n'
            '    AddAttr<bool>("use_mkldnn", "mkldnn").SetDefault(false);\n'
            '    AddComment("FC operator.");\n'
            '  }\n'
            '};\n'),
    ]
    INVALID = [
        cpp_example(
            'class FcOpMaker : public framework::OpProtoAndCheckerMaker {\n'
            ' public:\n'
            '  void Make() override {\n'
            '    AddInput("input_x", "input");\n'
            '    AddAttr<int>("inNumColDims", "dims").SetDefault(1);\n'
            '    AddComment("FC operator.");\n'
            '  }\n'
            '};\n', line=(4, 5)),
    ]

    def check(self, cpp):
        for _, name, bodies in makers(cpp):
            for body in bodies:
                for kind, call, args in calls_named(body, {"AddInput", "AddOutput", "AddAttr"}):
                    slot = string_value(args[0]) if args else None
                    if not slot or slot.startswith("@"):
                        continue
                    if kind == "AddAttr":
                        if not SNAKE.match(slot):
                            yield Report(call, f"attribute '{slot}' of {name} is not snake_case")
                    elif not UPPER_CAMEL.match(slot):
                        what = "input" if kind == "AddInput" else "output"
                        yield Report(call, f"{what} slot '{slot}' of {name} is not UpperCamelCase")
