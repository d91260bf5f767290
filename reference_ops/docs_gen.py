"""Generate docs/ops.md from the op registry: every built-in op with its inputs, outputs,
attrs (with defaults), formula (the OpMaker's `add_comment`), kernels by place and dtype,
and its gradient and buffer declarations.

    python -m reference_ops.docs_gen            # rewrite docs/ops.md
    python -m reference_ops.docs_gen --check    # exit 1 when docs/ops.md is stale

Only the ops registered by the `reference_ops` package (its `<op>_op.py` files and the
dedicated GPU kernels of `reference_ops.gpu`) are listed, so the page does not depend on
which other modules a process happened to import.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys

REFRESH_COMMAND = "python -m reference_ops.docs_gen"
DOC_PATH = pathlib.Path(__file__).resolve().parents[1] / "docs" / "ops.md"

__all__ = ["render", "main", "DOC_PATH", "REFRESH_COMMAND"]


def _load_builtin_ops():
    import reference_ops
    import reference_ops.gpu  # noqa: F401 - dedicated GPU kernels (no cupy needed)

    reference_ops.load_all_ops()
    return pathlib.Path(reference_ops.__file__).resolve().parent


def _is_builtin(source: str, root: pathlib.Path) -> bool:
    path = source.rsplit(":", 1)[0]
    try:
        return pathlib.Path(path).resolve().is_relative_to(root)
    except (OSError, ValueError):
        return False


def _cell(text) -> str:
    text = " ".join(str(text).split())
    return text.replace("|", "\\|") or " "


def _fmt_default(attr) -> str:
    if not attr.has_default:
        return "required"
    value = attr.default
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, float):
        return f"`{value!r}`"
    if isinstance(value, (list, tuple)):
        return "`[" + ", ".join(repr(v) for v in value) + "]`"
    return f"`{value!r}`"


def _flags(vp) -> str:
    flags = [name for name in ("duplicable", "dispensable", "intermediate", "extra")
             if getattr(vp, name, False)]
    return ", ".join(flags)


def _vars_table(title: str, items) -> list[str]:
    if not items:
        return [f"**{title}:** none", ""]
    lines = [f"**{title}:**", "", "| name | flags | description |", "| --- | --- | --- |"]
    lines += [f"| `{v.name}` | {_cell(_flags(v))} | {_cell(v.comment)} |" for v in items]
    return lines + [""]


def _attrs_table(attrs) -> list[str]:
    attrs = [a for a in attrs if not a.generated]
    if not attrs:
        return ["**Attributes:** none", ""]
    lines = ["**Attributes:**", "", "| name | type | default | description |",
             "| --- | --- | --- | --- |"]
    lines += [f"| `{a.name}` | {a.type}{' (extra)' if a.extra else ''} | "
              f"{_cell(_fmt_default(a))} | {_cell(a.comment)} |" for a in attrs]
    return lines + [""]


def _kernels(info) -> list[str]:
    places = info.kernel_places()
    if not places:
        base = info.op_class.__mro__[1].__name__ if len(info.op_class.__mro__) > 1 else ""
        return [f"**Kernels:** none ({info.op_class.__name__}, an `{base}` that runs itself)",
                ""]
    lines = ["**Kernels:**", "", "| place | dtypes |", "| --- | --- |"]
    lines += [f"| {place} | {', '.join(dtypes)} |" for place, dtypes in places.items()]
    return lines + [""]


def _extras(info, registered) -> list[str]:
    lines = []
    maker = info.grad_maker
    if maker is None:
        lines.append("- Gradient: none")
    else:
        grad = f"{info.type}_grad"
        name = getattr(maker, "__name__", type(maker).__name__)
        lines.append(f"- Gradient: `{name}`" + (f" (grad op `{grad}`)" if grad in registered
                                                   else ""))
    if info.inplace:
        lines.append("- In-place: " + ", ".join(f"`{i}` -> `{o}`"
                                               for i, o in sorted(info.inplace.items())))
    if info.no_need_buffer:
        lines.append("- No need buffer: " + ", ".join(f"`{n}`" for n in info.no_need_buffer))
    return lines + [""]


def render() -> str:
    """The text of docs/ops.md for the ops registered now."""
    from opkit.registry import all_op_types, op_info

    root = _load_builtin_ops()
    types = [t for t in all_op_types() if _is_builtin(op_info(t).source, root)]
    forward = [t for t in types if not t.endswith("_grad")]
    grad_only = [t for t in types if t.endswith("_grad")]
    out = ["# Operators", "",
           f"Generated from the op registry by `{REFRESH_COMMAND}`; do not edit by hand "
           "(tests/test_docs_ops.py fails when this page is stale).", "",
           f"{len(forward)} forward ops, {len(grad_only)} grad ops.", ""]
    out += [", ".join(f"[`{t}`](#{t})" for t in forward), ""]
    for t in forward + grad_only:
        info = op_info(t)
        proto = info.proto
        out += [f"## {t}", ""]
        if proto is None:
            out += ["(no OpMaker: slots are named by the grad maker)", ""]
        else:
            comment = proto.comment.strip()
            out += [comment if comment else "(no description)", ""]
            out += _vars_table("Inputs", proto.inputs)
            out += _vars_table("Outputs", proto.outputs)
            out += _attrs_table(proto.attrs)
        out += _kernels(info)
        out += _extras(info, set(types))
    return "\n".join(out).rstrip() + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m reference_ops.docs_gen", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--check", action="store_true",
                        help="exit 1 (writing nothing) when the page is stale")
    parser.add_argument("--output", default=str(DOC_PATH), help="where to write the page")
    args = parser.parse_args(argv)
    text = render()
    path = pathlib.Path(args.output)
    current = path.read_text(encoding="utf-8") if path.exists() else None
    if args.check:
        if current != text:
            print(f"{path} is stale; refresh it with: {REFRESH_COMMAND}", file=sys.stderr)
            return 1
        return 0
    if current != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".md.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
