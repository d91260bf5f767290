"""The public contract, section 9. machine-readable output."""
from __future__ import annotations

import json

import pytest

import opkit

from contract_helpers import NOTE_RULES, RULES, json_stdout, run_opkit, write_clip_project


CHECKS = ("output", "grad", "dtypes", "mutation", "aliasing", "determinism", "lod",
          "no_need_buffer", "inplace", "places", "fuzz",
          # the input variants (harness issue 11)
          "layout", "empty", "extremal", "kinks", "repeated_input", "infer_shape",
          # state, process and precision checks (verdicts issue 12)
          "ownership", "attrs", "state", "precision",
          # declared parallel signatures (issue 28)
          "sbp",
          # second-order gradients, every output's gradient, random ops (issue 23)
          "double_grad", "grad_outputs", "distribution",
          # the declared contract explored (issue 23)
          "explore",
          # execution modes (issue 24)
          "declared_inputs", "concurrency", "sparse", "plan",
          # the laws every op obeys (issue 36)
          "describe", "every_grad", "refusals", "coincidences", "trace",
          # a kernel must not be able to tell it is being tested (issue 48)
          "indistinguishable", "honest_error", "clean_process")


def test_9_rule_codes_and_names():
    from checkers.lint.catalog import RULES as catalog

    assert {code: name for code, (name, _) in catalog.items()} == {**RULES, **NOTE_RULES}


def test_9_check_names():
    from harness.checks.catalog import check_names

    assert set(CHECKS) - {"fuzz"} <= set(check_names())


def test_9_test_json(tmp_path):
    op_file, tests = write_clip_project(tmp_path)
    p = run_opkit("test", "--ops", op_file, "--tests", tests, "contract_clip", "--fuzz", "2",
                  "--format", "json", cwd=tmp_path, timeout=1800)
    doc = json_stdout(p)
    assert p.returncode == 0, json.dumps(doc, indent=1)[:4000]
    assert list(doc["ops"][0])[:3] == ["op", "status", "checks"] and len(doc["ops"]) == 1
    op = doc["ops"][0]
    assert op["op"] == "contract_clip" and op["status"] == "pass"
    names = set()
    for c in op["checks"]:
        assert {"check", "status", "place", "dtype", "case", "message"} <= set(c)
        assert c["status"] in ("pass", "fail", "skip")
        names.add(c["check"])
    assert names <= set(CHECKS), names - set(CHECKS)
    assert {"output", "grad", "dtypes", "mutation", "aliasing", "determinism", "lod",
            "places", "fuzz"} <= names
    assert any(c["case"] == "TestContractClipOp" for c in op["checks"])
    assert any(c["check"] == "lod" and c["status"] == "pass" for c in op["checks"])
    if not opkit.cuda_device_count():
        places = [c for c in op["checks"] if c["check"] == "places"]
        assert places and all(c["status"] == "skip" and c["message"] for c in places)


def test_9_compat_json(tmp_path):
    var = {"duplicable": False, "dispensable": False, "intermediate": False, "extra": False,
           "quant": False}

    def attr(type_id, default):
        return {"type": type_id, "generated": False, "default_value": default, "extra": False,
                "quant": False}

    old = {"gone": {"Inputs": {}, "Outputs": {}, "Attrs": {}},
           "fc": {"Inputs": {"X": var, "W": var}, "Outputs": {"Out": var, "Tmp": var},
                  "Attrs": {"use_mkldnn": attr(6, False), "axis": attr(0, 1),
                            "scale": attr(1, 1.0), "flagged": attr(6, False)}}}
    new = {"fc": {"Inputs": {"X": {**var, "duplicable": True}, "Bias": var,
                             "Opt": {**var, "dispensable": True}},
                  "Outputs": {"Out": {**var, "intermediate": True}, "Extra": var,
                              "OptOut": {**var, "dispensable": True}},
                  "Attrs": {"axis": attr(0, 2), "scale": attr(4, [1.0]),
                            "flagged": {**attr(6, False), "extra": True},
                            "new_req": attr(0, None), "new_opt": attr(0, 3)}},
           "born": {"Inputs": {}, "Outputs": {}, "Attrs": {}}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    p = run_opkit("compat", "old.json", "new.json", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1
    doc = json_stdout(p)
    assert set(doc) >= {"breaking", "notes"}
    for e in doc["breaking"]:
        assert {"op", "kind", "name", "old", "new", "message"} <= set(e), e
    for e in doc["notes"]:
        assert {"op", "kind", "name", "message"} <= set(e), e
    breaking = {(e["op"], e["kind"], e["name"]) for e in doc["breaking"]}
    assert {("gone", "op-deleted", "gone"), ("fc", "input-deleted", "W"),
            ("fc", "output-deleted", "Tmp"), ("fc", "attr-deleted", "use_mkldnn"),
            ("fc", "input-added-required", "Bias"), ("fc", "output-added-required", "Extra"),
            ("fc", "attr-added-no-default", "new_req"), ("fc", "attr-type-changed", "scale"),
            ("fc", "attr-default-changed", "axis"), ("fc", "input-flag-changed", "X"),
            ("fc", "output-flag-changed", "Out")} <= {
                (op, kind, name if op != "gone" else "gone") for op, kind, name in breaking}
    fields = {(e["kind"], e["name"]): e.get("field") for e in doc["breaking"]
              if e["kind"].endswith("-flag-changed")}
    assert fields[("input-flag-changed", "X")] == "duplicable"
    assert fields[("output-flag-changed", "Out")] == "intermediate"
    gone = next(e for e in doc["breaking"] if e["kind"] == "attr-deleted")
    assert gone["new"] is None and gone["old"]["type"] == 6
    notes = {(e["op"], e["kind"], e["name"]) for e in doc["notes"]}
    assert {("fc", "input-added", "Opt"), ("fc", "output-added", "OptOut"),
            ("fc", "attr-added", "new_opt")} <= notes
    assert any(kind == "op-added" and op == "born" for op, kind, _ in notes)
    all_kinds = {e["kind"] for e in doc["breaking"]} | {e["kind"] for e in doc["notes"]}
    assert "attr-flag-changed" in all_kinds


def test_9_compat_kind_names():
    from checkers.compat.kinds import BREAKING_KINDS, NOTE_KINDS

    assert set(BREAKING_KINDS) == {
        "op-deleted", "input-deleted", "output-deleted", "attr-deleted",
        "input-added-required", "output-added-required", "attr-added-no-default",
        "attr-type-changed", "attr-default-changed", "input-flag-changed",
        "output-flag-changed", "attr-flag-changed"}
    assert set(NOTE_KINDS) == {"input-added", "output-added", "attr-added", "op-added"}


@pytest.mark.parametrize("args", [("ops",), ("dump",)])
def test_9_json_stdout_only(args):
    p = run_opkit(*args, "--format", "json")
    assert p.returncode == 0
    json_stdout(p)
