"""docs/harness.md's checks table lists every check a report shows; the docs describe the
report as it is (a line per passing op); the tutorial says what attrs a grad op gets."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _section(text, heading):
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start:end if end > 0 else None]


def test_checks_table_lists_every_check():
    from harness.checks.catalog import check_names

    table = _section((ROOT / "docs" / "harness.md").read_text(encoding="utf-8"),
                     "## Checks (")
    listed = set()
    for line in table.splitlines():
        if line.startswith("| `"):
            listed |= set(re.findall(r"`([a-z_]+)`", line.split("|")[1]))
    missing = [c for c in check_names() + ["fuzz"] if c not in listed]
    assert not missing, f"docs/harness.md's checks table lacks {missing}"


def test_checks_table_links_resolve():
    text = (ROOT / "docs" / "harness.md").read_text(encoding="utf-8")
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", text, flags=re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        anchors.add(slug)
    for link in re.findall(r"\]\(#([^)]+)\)", _section(text, "## Checks (")):
        assert link in anchors, link


def test_docs_do_not_promise_a_table_per_op():
    for doc in ("README.md", "docs/harness.md"):
        assert "a table per op" not in (ROOT / doc).read_text(encoding="utf-8"), doc


def test_tutorial_says_grad_ops_get_the_forward_attrs():
    text = (ROOT / "docs" / "tutorial.md").read_text(encoding="utf-8")
    assert re.search(r"grad op gets the forward op's attrs", text)
    assert "set_attr" in text


def test_grad_op_really_gets_the_forward_attrs():
    from opkit.framework.grad_maker import GradOpMaker

    class Maker(GradOpMaker):
        def apply(self):
            return [self.new_grad_op("x_grad")]

    maker = Maker("x", {"X": ["x"]}, {"Out": ["out"]}, {"alpha": 0.5})
    assert maker.apply()[0].attrs == {"alpha": 0.5}
