"""OPK006 op-file-layout, OPK007 slot-naming, OPK008 missing-op-comment."""
from __future__ import annotations

from .helpers import codes, rules_of, lint

R = "from opkit import register_operator\n"


def test_layout_only_for_op_files():
    code = R + "register_operator('gelu', object)\n"
    assert codes(code, "relu_op.py") == ["OPK006"]
    assert codes(code, "gelu_op.py") == []
    assert codes(code, "ops.py") == []
    assert codes(R + "register_operator('relu', object)\nregister_operator('relu_grad', object)\n"
                 "register_operator('relu_grad_grad', object)\n", "relu_op.py") == []
    # op types with underscores, from a constant
    assert codes(R + "OP = 'fill_constant'\nregister_operator(OP, object)\n", "fill_constant_op.py") == []


def test_layout_two_forward_ops():
    findings = lint(R + "register_operator('relu', object)\nregister_operator('relu6', object)\n",
                    "reference_ops/relu_op.py").findings
    assert [f.message.split("'")[1] for f in findings] == ["relu6"]


M = "from opkit import OpMaker\n\nclass FooOpMaker(OpMaker):\n    def make(self):\n"


def maker(*lines: str) -> str:
    return M + "".join(f"        {line}\n" for line in lines)


def test_slot_naming():
    ok = maker("self.add_input('X', '')", "self.add_input('LR', '')", "self.add_output('MaxIndex', '')",
               "self.add_attr('use_cudnn', 'bool', '')", "self.add_attr('x_num_col_dims', 'int', '')",
               "self.add_comment('Foo.')")
    assert rules_of(ok, "OPK007") == []
    bad = maker("self.add_input('x', '')", "self.add_input('Input_X', '')", "self.add_output('Out@GRAD', '')",
                "self.add_attr('useCudnn', 'bool', '')", "self.add_attr('Axis', 'int', '')",
                "self.add_comment('Foo.')")
    found = rules_of(bad, "OPK007")
    assert len(found) == 5
    assert "'useCudnn' is not snake_case (e.g. 'use_cudnn')" in found[3].message


def test_slot_naming_only_in_makers_and_inherited_makers():
    code = ("from opkit import OpMaker\n\nclass Base(OpMaker):\n    pass\n\nclass Foo(Base):\n"
            "    def make(self):\n        self.add_input('bad_name', '')\n        self.add_comment('x')\n\n"
            "class NotAMaker:\n    def make(self):\n        self.add_input('bad_name', '')\n")
    assert len(rules_of(code, "OPK007")) == 1


def test_missing_op_comment():
    assert rules_of(maker("self.add_input('X', '')"), "OPK008")
    assert rules_of(maker("self.add_comment('')"), "OPK008")
    assert rules_of(maker("self.add_comment()"), "OPK008")
    assert rules_of(maker("self.add_comment(DOC)"), "OPK008") == []
    assert rules_of(maker("super().make()"), "OPK008") == []
    grad = "from opkit import GradOpMaker\n\nclass G(GradOpMaker):\n    def apply(self):\n        pass\n"
    assert rules_of(grad, "OPK008") == []
