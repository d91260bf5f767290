"""docs/tutorial.md lists every infer_shape `ctx` call with its real signature (an error
message suggests `set_output_dtype`: a user must find it documented)."""
from __future__ import annotations

import inspect
import re
from pathlib import Path

from opkit.framework.context import (CompileTimeInferShapeContext, InferShapeContext,
                                     RuntimeInferShapeContext)

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "tutorial.md"


def _public(cls) -> dict:
    return {n: f for n, f in inspect.getmembers(cls, inspect.isfunction) if not n.startswith("_")}


def _call(name, fn) -> str:
    params = list(inspect.signature(fn).parameters.values())[1:]
    text = ", ".join(p.name + ("" if p.default is inspect.Parameter.empty else f"={p.default!r}")
                     for p in params)
    return f"`ctx.{name}({text})`"


def test_every_infer_shape_ctx_call_is_documented_with_its_signature():
    doc = TUTORIAL.read_text()
    both = set(_public(CompileTimeInferShapeContext)) & set(_public(RuntimeInferShapeContext))
    calls = {n: getattr(CompileTimeInferShapeContext, n) for n in both}
    assert "set_output_dtype" in calls and set(_public(InferShapeContext)) <= set(calls)
    documented = set(re.findall(r"`ctx\.(\w+)\(", doc))
    for name, fn in sorted(calls.items()):
        assert _call(name, fn) in doc, f"docs/tutorial.md lacks {_call(name, fn)}"
    assert documented <= set(calls) | {"input", "set_output", "xp", "attr"}, documented - set(calls)
