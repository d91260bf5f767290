"""OPK003: float32 and float64 kernels per op and place."""
from __future__ import annotations

from .helpers import rules_of

H = "import numpy as np\nfrom opkit import register_kernel, OpKernel\nFLOATS = ('float32', 'float64')\n"


def found(body: str) -> list:
    return rules_of(H + body, "OPK003")


def test_defaults_are_both_floats_on_cpu():
    assert found("@register_kernel('a')\ndef a(ctx):\n    pass\n") == []


def test_single_string_and_constant_and_numpy_names():
    assert found("@register_kernel('a', dtypes='float64')\ndef a(ctx):\n    pass\n")
    assert not found("@register_kernel('a', 'CPU', FLOATS)\ndef a(ctx):\n    pass\n")
    assert not found("@register_kernel('a', dtypes=(np.float32, np.float64))\ndef a(ctx):\n    pass\n")
    assert not found("@register_kernel('a', dtypes=FLOATS + ('float16',))\ndef a(ctx):\n    pass\n")


def test_per_place():
    code = ("@register_kernel('a', place=('CPU', 'GPU'), dtypes='float32')\ndef a(ctx):\n    pass\n"
            "@register_kernel('a', place='CPU', dtypes='float64')\ndef b(ctx):\n    pass\n")
    (finding,) = found(code)
    assert "GPU" in finding.message and "float64" in finding.message


def test_grad_ops_and_class_kernels():
    code = ("@register_kernel('a_grad', dtypes=['float32'])\nclass AGrad(OpKernel):\n"
            "    def compute(self, ctx):\n        pass\n")
    (finding,) = found(code)
    assert "'a_grad'" in finding.message


def test_unresolvable_registrations_are_not_guessed():
    assert found("for dt in FLOATS[:1]:\n    register_kernel('a', dtypes=dt)(print)\n") == []
    assert found("register_kernel('a', dtypes=make_dtypes())(print)\n") == []
    # a loop over a literal tuple is unrolled (tests/lint/test_blind_forms.py): resolved
    assert len(found("for op in ('a', 'b'):\n    register_kernel(op, dtypes='float32')(print)\n")) == 2
    assert found("for op in OPS:\n    register_kernel(op, dtypes='float32')(print)\n") == []
    assert found("def setup():\n    register_kernel('a', dtypes='float32')(print)\n") == []
    # a constant assigned twice is not trusted
    assert found("D = 'float32'\nD = ('float32', 'float64')\n"
                 "@register_kernel('a', dtypes=D)\ndef a(ctx):\n    pass\n") == []


def test_alias_import():
    code = ("from opkit import register_kernel as rk\n@rk('a', dtypes='float32')\ndef a(ctx):\n    pass\n")
    assert found(code)
