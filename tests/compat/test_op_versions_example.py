"""examples/op_versions/demo.py: the three changes are reported as documented."""
import importlib.util
import json
import re
from pathlib import Path

DEMO = Path(__file__).resolve().parents[2] / "examples" / "op_versions" / "demo.py"


def _demo():
    spec = importlib.util.spec_from_file_location("op_versions_demo", DEMO)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_NUMBER = r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?"


def _assert_quotes(quoted, message):
    """`quoted` appears in `message` word for word, each number in it equal to 1e-3."""
    words = re.split(_NUMBER, quoted)
    pattern = f"({_NUMBER})".join(re.escape(w) for w in words)
    found = re.search(pattern, message)
    assert found, (quoted, message)
    for doc_value, real in zip(re.findall(_NUMBER, quoted), found.groups()):
        assert abs(float(doc_value) - float(real)) <= 1e-3, (quoted, message)


def _kinds(entries):
    return sorted((e["op"], e["kind"], e.get("change")) for e in entries)


def test_example_reports_each_change(tmp_path):
    results = _demo().run(tmp_path, fmt="json", echo=False)
    reports = {title: (code, json.loads(out)) for title, (code, out) in results.items()}

    code, a = reports["a. documented new attr"]
    assert code == 0 and a["breaking"] == []
    assert _kinds(a["notes"]) == [("", "program-checked", None),
                                  ("rescale", "documented", "attr-added")]

    code, b = reports["b. undocumented default change"]
    assert code == 1
    assert _kinds(b["breaking"]) == [("rescale", "attr-default-changed", None),
                                     ("rescale", "behavior-changed", None)]
    assert _kinds(b["notes"]) == [("rescale", "undocumented-change", "attr-default-changed")]
    changed = next(e for e in b["breaking"] if e["kind"] == "behavior-changed")
    assert changed["var"] == "price" and changed["old"] != changed["new"]
    # docs/compat.md ("A worked example") quotes this message: it must be the real one
    doc = (DEMO.parents[2] / "docs" / "compat.md").read_text(encoding="utf-8")
    example = doc.split("(the model predates the attr, so it now rounds: `", 1)[1]
    quoted, differ = example.split("`", 1)[0].split(" ...; ")
    # the doc rounds the float32 values (their last digits vary with CPU and BLAS): the
    # words must match exactly, each number to 1e-3
    _assert_quotes(quoted, changed["message"])
    _assert_quotes(differ, changed["message"])

    code, c = reports["c. deleted attr with an upgrader"]
    assert code == 0 and c["breaking"] == []
    assert _kinds(c["notes"]) == [("", "program-checked", None),
                                  ("rescale", "documented", "attr-added"),
                                  ("rescale", "documented", "attr-deleted")]
    checked = next(e for e in c["notes"] if e["kind"] == "program-checked")
    assert "upgraded rescale 0->1" in checked["message"] and "reproduces" in checked["message"]

    code, c2 = reports["c'. the same deletion without the upgrader"]
    assert code == 1
    assert _kinds(c2["breaking"]) == [("rescale", "program-incompatible", None)]
