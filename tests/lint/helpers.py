"""Shared helpers for the lint tests."""
from __future__ import annotations

import textwrap

from checkers.lint.config import build_config
from checkers.lint.engine import lint_source

HEAD = ("import numpy as np\n"
        "from opkit import register_kernel, register_operator, enforce, errors\n\n")


def lint(code: str, path: str = "example.py", *, dedent: bool = True, fix: bool = False, **table):
    """Findings for `code` as if it were the file `path` (config keys as keyword args)."""
    if dedent:
        code = textwrap.dedent(code)
    config = build_config({k.replace("_", "-"): v for k, v in table.items()}, None, no_cache=True)
    return lint_source(path, code.encode("utf-8"), config, fix=fix)


def codes(code: str, path: str = "example.py", **table) -> list[str]:
    return [f.rule for f in lint(code, path, **table).findings]


def kernel(body: str, op: str = "k", extra: str = "") -> str:
    """A module with one registered kernel whose body is `body` (dedented)."""
    body = textwrap.indent(textwrap.dedent(body).strip("\n"), "    ")
    return HEAD + textwrap.dedent(extra) + f"\n@register_kernel({op!r})\ndef k(ctx):\n{body}\n"


def rules_of(code: str, rule: str, **table) -> list:
    return [f for f in lint(code, dedent=False, **table).findings if f.rule == rule]
