"""docs/ops.md is generated from the op registry: fail when it is stale."""
import difflib

from reference_ops import docs_gen


def test_docs_ops_md_is_up_to_date():
    expected = docs_gen.render()
    current = docs_gen.DOC_PATH.read_text(encoding="utf-8") if docs_gen.DOC_PATH.exists() \
        else ""
    if current != expected:
        diff = "".join(list(difflib.unified_diff(
            current.splitlines(True), expected.splitlines(True), "docs/ops.md (committed)",
            "docs/ops.md (from the registry)", n=1))[:60])
        raise AssertionError(f"docs/ops.md is stale; refresh it with: "
                             f"{docs_gen.REFRESH_COMMAND}\n{diff}")


def test_every_builtin_op_is_documented_with_kernels_and_formula():
    text = docs_gen.render()
    for op in ("lookup_table", "top_k", "while", "increment", "less_than", "array_write",
               "array_read", "sgd", "sum"):
        assert f"\n## {op}\n" in text
    section = text.split("\n## top_k\n", 1)[1].split("\n## ", 1)[0]
    assert "$$" in section                           # the formula from add_comment
    assert "| CPU | float32, float64 |" in section
    assert "| `k` | int | `1` |" in section           # attrs with their defaults
    section = text.split("\n## while\n", 1)[1].split("\n## ", 1)[0]
    assert "**Kernels:** none" in section


def test_check_mode_reports_stale_page(tmp_path, capsys):
    stale = tmp_path / "ops.md"
    stale.write_text("old\n", encoding="utf-8")
    assert docs_gen.main(["--check", "--output", str(stale)]) == 1
    assert docs_gen.REFRESH_COMMAND in capsys.readouterr().err
    assert docs_gen.main(["--output", str(stale)]) == 0
    assert docs_gen.main(["--check", "--output", str(stale)]) == 0
