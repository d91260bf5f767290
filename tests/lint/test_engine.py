"""The engine: robustness, suppression, selection, never importing the code."""
from __future__ import annotations

import sys

from checkers.lint.config import build_config
from checkers.lint.engine import lint_source
from .helpers import kernel, lint

BAD_KERNEL = kernel("x = ctx.input('X')\nx[0] = 1\nenforce(x)")


def run(data: bytes, path: str = "f.py"):
    return lint_source(path, data, build_config({}, None, no_cache=True)).findings


def test_syntax_error_is_opk000_at_its_line():
    (finding,) = run(b"x = 1\ndef f(:\n    pass\n")
    assert (finding.rule, finding.name, finding.line) == ("OPK000", "syntax-error", 2)


def test_empty_and_whitespace_files():
    assert run(b"") == []
    assert run(b"\n\n   \n") == []
    assert run(b"\xef\xbb\xbfx = 1\n") == []  # BOM


def test_undecodable_bytes_name_the_encoding_problem():
    (finding,) = run(b"x = 1\ny = '\xff\xfe'\n")
    assert finding.rule == "OPK000" and "utf-8" in finding.message and finding.line == 2
    (finding,) = run(b"# -*- coding: no-such-codec -*-\nx = 1\n")
    assert finding.rule == "OPK000"
    assert run("# -*- coding: latin-1 -*-\nx = 'é'\n".encode("latin-1")) == []


def test_null_bytes_and_deep_nesting_do_not_crash():
    assert run(b"x = 1\0\n")[0].rule == "OPK000"
    for src in ["x = " + "(" * 3000 + "1" + ")" * 3000, "x = " + "[" * 5000 + "]" * 5000,
                "x = " + "+".join(["a"] * 20000), "x = a" + ".b" * 20000,
                "x = " + "f(" * 3000 + ")" * 3000,
                "".join(" " * i + "if x:\n" for i in range(120)) + " " * 120 + "pass"]:
        findings = run((src + "\nenforce(x)\n").encode())
        assert all(f.rule == "OPK000" for f in findings)


def test_deep_but_valid_code_is_analysed_without_crash():
    body = "x = ctx.input('X')\n" + "y = " + "+".join(["x"] * 1500) + "\n"
    findings = lint(kernel(body), dedent=False).findings
    assert all(f.rule != "OPK000" for f in findings) or findings[0].message.startswith("code too deeply")


def test_very_long_file():
    code = BAD_KERNEL + "".join(f"def f{i}(a):\n    return a + {i}\n" for i in range(5000))
    findings = lint(code, dedent=False).findings
    assert {f.rule for f in findings} == {"OPK001", "OPK002"}


def test_suppression_comments():
    base = kernel("x = ctx.input('X')\nx[0] = 1{c}\nenforce(x){d}")
    assert {f.rule for f in lint(base.format(c="", d=""), dedent=False).findings} == {"OPK001", "OPK002"}
    assert {f.rule for f in lint(base.format(c="  # opkit: ignore[OPK001]", d=""), dedent=False).findings} \
        == {"OPK002"}
    assert lint(base.format(c="  # opkit: ignore", d="  # opkit: ignore[OPK002, OPK004]"),
                dedent=False).findings == []
    # a rule's name works like its code
    assert {f.rule for f in lint(base.format(c="  # opkit: ignore[input-mutation]", d=""),
                                 dedent=False).findings} == {"OPK002"}
    # another code on the line does not suppress, and a string is not a comment
    assert lint(base.format(c="  # opkit: ignore[OPK004]", d=""), dedent=False).findings
    assert lint(base.format(c="; s = '# opkit: ignore'", d=""), dedent=False).findings


def test_select_and_ignore():
    def found(**kw):
        config = build_config({}, None, no_cache=True, **kw)
        return {f.rule for f in lint_source("f.py", BAD_KERNEL.encode(), config).findings}

    assert found() == {"OPK001", "OPK002"}
    assert found(select=["OPK001"]) == {"OPK001"}
    assert found(ignore=["OPK001"]) == {"OPK002"}
    assert found(select=["input-mutation"]) == {"OPK001"}
    assert found(select=["OPK00"]) == {"OPK001", "OPK002"}


def test_linting_never_imports_the_code(tmp_path):
    marker = tmp_path / "marker"
    code = (f"open({str(marker)!r}, 'w').write('imported')\nimport numpy as np\n"
            "from opkit import register_kernel\n@register_kernel('k')\ndef k(ctx):\n"
            "    ctx.input('X')[0] = 1\n")
    modules = set(sys.modules)
    findings = lint(code, "side_effect_op.py", dedent=False).findings
    assert [f.rule for f in findings] == ["OPK001"]
    assert not marker.exists()
    assert "side_effect_op" not in set(sys.modules) - modules


def test_internal_rule_errors_become_findings(monkeypatch):
    from checkers.lint.rules.input_mutation import InputMutation

    def boom(self, ctx):
        raise KeyError("boom")
        yield

    monkeypatch.setattr(InputMutation, "check", boom)
    findings = lint(BAD_KERNEL, dedent=False).findings
    assert any(f.rule == "OPK000" and "internal error in OPK001" in f.message for f in findings)
