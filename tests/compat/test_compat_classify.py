"""Every kind, on both sides: when it breaks and when it is only a note."""
from __future__ import annotations

import pytest

from checkers.compat import BREAKING_KINDS, compare, same_value
from compat_helpers import attr, changed, clip, op, var


def findings(old, new):
    r = compare(old, new)
    return ([(e["kind"], e["op"], e["name"], e.get("field")) for e in r.breaking],
            [(e["kind"], e["op"], e["name"], e.get("field")) for e in r.notes], r)


def one(old, new, breaking: bool):
    b, n, r = findings(old, new)
    assert len(b) + len(n) == 1, (b, n)
    assert bool(b) == breaking, (b, n)
    return (r.breaking or r.notes)[0]


def test_identical_is_empty():
    b, n, r = findings(clip(), clip())
    assert b == [] and n == [] and r.ok


def test_empty_dumps():
    assert findings({}, {})[:2] == ([], [])


# ------------------------------------------------------------------ ops
def test_op_deleted_breaks():
    e = one(clip(), {}, True)
    assert e["kind"] == "op-deleted" and e["op"] == "clip" and e["new"] is None
    assert e["old"] == clip()["clip"]
    assert "op 'clip' deleted" in e["message"]


def test_op_added_is_note():
    e = one({}, clip(), False)
    assert e["kind"] == "op-added" and e["old"] is None


# ------------------------------------------------------------------ slots
@pytest.mark.parametrize("section,what,name", [("Inputs", "input", "X"),
                                               ("Outputs", "output", "Out")])
def test_slot_deleted_breaks(section, what, name):
    new = changed(clip(), lambda d: d["clip"][section].pop(name))
    e = one(clip(), new, True)
    assert e["kind"] == f"{what}-deleted" and e["name"] == name
    assert e["message"] == f"{what} '{name}' of op 'clip' deleted"


@pytest.mark.parametrize("section,what", [("Inputs", "input"), ("Outputs", "output")])
def test_extra_slot_deleted_is_note(section, what):
    old = changed(clip(), lambda d: d["clip"][section].update(Dbg=var(extra=True)))
    e = one(old, clip(), False)
    assert e["kind"] == f"{what}-deleted" and "extra" in e["message"]


@pytest.mark.parametrize("section,what", [("Inputs", "input"), ("Outputs", "output")])
def test_slot_added_required_breaks(section, what):
    new = changed(clip(), lambda d: d["clip"][section].update(Y=var()))
    e = one(clip(), new, True)
    assert e["kind"] == f"{what}-added-required" and e["name"] == "Y"
    assert e["old"] is None and e["new"] == var()


@pytest.mark.parametrize("section,what", [("Inputs", "input"), ("Outputs", "output")])
def test_slot_added_dispensable_is_note(section, what):
    new = changed(clip(), lambda d: d["clip"][section].update(Y=var(dispensable=True)))
    e = one(clip(), new, False)
    assert e["kind"] == f"{what}-added"


def test_duplicable_only_addition_still_breaks():
    # Paddle's first check_op_desc.py looked at `duplicable` here; the rule is dispensable.
    new = changed(clip(), lambda d: d["clip"]["Inputs"].update(Y=var(duplicable=True)))
    assert one(clip(), new, True)["kind"] == "input-added-required"


# ------------------------------------------------------------------ slot flags
def _flag(section, name, **flags):
    return lambda d: d["clip"][section][name].update(flags)


@pytest.mark.parametrize("section,what", [("Inputs", "input"), ("Outputs", "output")])
def test_dispensable_tightened_breaks_relaxed_is_note(section, what):
    base = changed(clip(), lambda d: d["clip"][section].update(S=var(dispensable=True)))
    tight = changed(base, _flag(section, "S", dispensable=False))
    e = one(base, tight, True)
    assert (e["kind"], e["field"], e["old"], e["new"]) == (f"{what}-flag-changed",
                                                           "dispensable", True, False)
    assert "dispensable changed from true to false" in e["message"]
    e = one(tight, base, False)
    assert (e["kind"], e["field"]) == (f"{what}-flag-changed", "dispensable")
    assert "relaxed" in e["message"]


@pytest.mark.parametrize("flag", ["duplicable", "intermediate", "quant"])
@pytest.mark.parametrize("section,what,name", [("Inputs", "input", "X"),
                                               ("Outputs", "output", "Out")])
def test_duplicable_intermediate_quant_break_both_ways(flag, section, what, name):
    on = changed(clip(), _flag(section, name, **{flag: True}))
    for old, new in ((clip(), on), (on, clip())):
        e = one(old, new, True)
        assert (e["kind"], e["field"]) == (f"{what}-flag-changed", flag)


@pytest.mark.parametrize("section,what", [("Inputs", "input"), ("Outputs", "output")])
def test_slot_extra_flag(section, what):
    plain = changed(clip(), lambda d: d["clip"][section].update(S=var()))
    extra = changed(clip(), lambda d: d["clip"][section].update(S=var(extra=True)))
    # becomes extra: models that carry it still load -> note
    assert one(plain, extra, False)["field"] == "extra"
    # stops being extra and is required: models saved before lack it -> breaks
    assert one(extra, plain, True)["field"] == "extra"
    # stops being extra but is dispensable -> note
    disp_extra = changed(clip(), lambda d: d["clip"][section].update(
        S=var(extra=True, dispensable=True)))
    disp = changed(clip(), lambda d: d["clip"][section].update(S=var(dispensable=True)))
    assert one(disp_extra, disp, False)["field"] == "extra"


def test_changes_of_an_extra_slot_are_notes():
    old = changed(clip(), lambda d: d["clip"]["Outputs"].update(Dbg=var(extra=True)))
    new = changed(old, _flag("Outputs", "Dbg", duplicable=True, dispensable=True))
    b, n, _ = findings(old, new)
    assert b == []
    assert sorted(x[3] for x in n) == ["dispensable", "duplicable"]


# ------------------------------------------------------------------ attrs
def test_attr_deleted_breaks():
    new = changed(clip(), lambda d: d["clip"]["Attrs"].pop("min"))
    e = one(clip(), new, True)
    assert (e["kind"], e["name"], e["new"]) == ("attr-deleted", "min", None)
    assert e["old"]["type"] == 1


def test_extra_attr_deleted_is_note():
    new = changed(clip(), lambda d: d["clip"]["Attrs"].pop("use_mkldnn"))
    e = one(clip(), new, False)
    assert e["kind"] == "attr-deleted" and "extra" in e["message"]


def test_attr_added_without_default_breaks():
    new = changed(clip(), lambda d: d["clip"]["Attrs"].update(axis=attr(0, None)))
    e = one(clip(), new, True)
    assert e["kind"] == "attr-added-no-default"
    assert e["message"].startswith("attr 'axis' (int) of op 'clip' added without a default")


def test_extra_attr_added_without_default_still_breaks():
    new = changed(clip(), lambda d: d["clip"]["Attrs"].update(k=attr(0, None, extra=True)))
    assert one(clip(), new, True)["kind"] == "attr-added-no-default"


def test_attr_added_with_default_is_note():
    new = changed(clip(), lambda d: d["clip"]["Attrs"].update(axis=attr(0, -1)))
    e = one(clip(), new, False)
    assert e["kind"] == "attr-added" and "default -1" in e["message"]
    # a falsy default is still a default
    new = changed(clip(), lambda d: d["clip"]["Attrs"].update(flag=attr(6, False)))
    assert one(clip(), new, False)["kind"] == "attr-added"


def test_attr_type_changed_breaks():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["min"].update(type=0))
    e = one(clip(), new, True)
    assert e["kind"] == "attr-type-changed"
    assert e["message"] == "attr 'min' of op 'clip': type changed from float to int"
    assert (e["old"], e["new"]) == ("float", "int")


def test_extra_attr_type_changed_is_note():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["use_mkldnn"].update(type=0, default_value=0))
    b, n, _ = findings(clip(), new)
    assert b == [] and [x[0] for x in n] == ["attr-type-changed", "attr-default-changed"]


def test_type_change_with_equal_default_reports_only_type():
    old = {"o": op(attrs={"a": attr(0, 1)})}
    new = {"o": op(attrs={"a": attr(1, 1.0)})}
    b, n, _ = findings(old, new)
    assert b == [("attr-type-changed", "o", "a", None)] and n == []


def test_default_changed_breaks():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["eps"].update(default_value=0.01))
    e = one(clip(), new, True)
    assert e["kind"] == "attr-default-changed"
    assert e["message"] == "attr 'eps' of op 'clip': default changed from 0.001 to 0.01"
    assert (e["old"], e["new"]) == (0.0010000000474974513, 0.01)


def test_default_removed_breaks():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["eps"].update(default_value=None))
    e = one(clip(), new, True)
    assert e["kind"] == "attr-default-changed" and "now required" in e["message"]


def test_default_given_to_required_attr_is_note():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["min"].update(default_value=-1.0))
    e = one(clip(), new, False)
    assert e["kind"] == "attr-default-changed"
    assert "given to a formerly required attr" in e["message"]


def test_extra_attr_default_changed_is_note():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["use_mkldnn"].update(default_value=True))
    assert one(clip(), new, False)["kind"] == "attr-default-changed"


def test_float32_round_trip_is_not_a_change():
    # Paddle prints float32 defaults in double precision; opkit writes the Python float.
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["eps"].update(default_value=0.001))
    assert findings(clip(), new)[:2] == ([], [])


def test_float64_attrs_compare_exactly():
    old = {"o": op(attrs={"a": attr(15, 0.001)})}
    new = {"o": op(attrs={"a": attr(15, 0.0010000000474974513)})}
    assert findings(old, new)[0] == [("attr-default-changed", "o", "a", None)]


def test_int_and_float_spelling_of_the_same_number():
    old = {"o": op(attrs={"a": attr(1, 1), "b": attr(0, 2), "c": attr(4, [1, 2])})}
    new = {"o": op(attrs={"a": attr(1, 1.0), "b": attr(0, 2.0), "c": attr(4, [1.0, 2.0])})}
    assert findings(old, new)[:2] == ([], [])


def test_bool_is_not_an_int():
    old = {"o": op(attrs={"a": attr(0, 1)})}
    new = {"o": op(attrs={"a": attr(0, True)})}
    assert findings(old, new)[0] == [("attr-default-changed", "o", "a", None)]


@pytest.mark.parametrize("a,b,f32,same", [
    (None, None, False, True), (None, 0, False, False), (0, None, False, False),
    (1, 1.0, False, True), (1, 1.0, True, True), (True, 1, False, False),
    (False, False, False, True), (0.1, 0.10000000149011612, True, True),
    (0.1, 0.10000000149011612, False, False), (0.1, 0.2, True, False),
    (float("nan"), float("nan"), False, True), (float("inf"), float("inf"), True, True),
    (1e300, 1e300, True, True), (1e300, 2e300, True, False),
    ([1, 2], [1, 2, 3], False, False), ([0.1], [0.10000000149011612], True, True),
    ("a", "a", False, True), ("1", 1, False, False), ([], [], False, True),
    ({"a": 1}, {"a": 1.0}, False, True),
])
def test_same_value(a, b, f32, same):
    assert same_value(a, b, f32) is same


# ------------------------------------------------------------------ attr flags
def test_generated_flag_change_is_note_both_ways():
    on = changed(clip(), lambda d: d["clip"]["Attrs"]["eps"].update(generated=True))
    for old, new in ((clip(), on), (on, clip())):
        e = one(old, new, False)
        assert (e["kind"], e["field"]) == ("attr-flag-changed", "generated")


def test_attr_quant_flag_change_breaks_both_ways():
    on = changed(clip(), lambda d: d["clip"]["Attrs"]["eps"].update(quant=True))
    for old, new in ((clip(), on), (on, clip())):
        e = one(old, new, True)
        assert (e["kind"], e["field"]) == ("attr-flag-changed", "quant")


def test_attr_extra_flag():
    # becomes extra -> note
    on = changed(clip(), lambda d: d["clip"]["Attrs"]["eps"].update(extra=True))
    assert one(clip(), on, False)["field"] == "extra"
    # stops being extra, has a default -> note
    off = changed(clip(), lambda d: d["clip"]["Attrs"]["use_mkldnn"].update(extra=False))
    assert one(clip(), off, False)["field"] == "extra"
    # stops being extra, no default -> breaks (saved models have no value for it)
    req = {"o": op(attrs={"a": attr(0, None, extra=True)})}
    req2 = {"o": op(attrs={"a": attr(0, None)})}
    assert one(req, req2, True)["field"] == "extra"


def test_quant_flag_change_of_extra_attr_is_note():
    new = changed(clip(), lambda d: d["clip"]["Attrs"]["use_mkldnn"].update(quant=True))
    assert one(clip(), new, False)["field"] == "quant"


# ------------------------------------------------------------------ shape of the result
def test_entry_keys_and_order():
    new = changed(clip(), lambda d: (d["clip"]["Attrs"].pop("min"),
                                     d["clip"]["Inputs"]["X"].update(duplicable=True),
                                     d["clip"]["Attrs"].update(k=attr(2, "x"))))
    new["abs"] = op({"X": var()}, {"Out": var()})
    r = compare(clip(), new)
    assert [e["kind"] for e in r.breaking] == ["input-flag-changed", "attr-deleted"]
    assert [e["kind"] for e in r.notes] == ["op-added", "attr-added"]
    for e in r.breaking + r.notes:
        assert {"op", "kind", "name", "old", "new", "message"} <= set(e)
    assert list(r.breaking[0]) == ["op", "kind", "name", "field", "old", "new", "message"]
    assert set(r.to_json()) == {"breaking", "notes", "allowed"}


def test_every_breaking_kind_is_produced_somewhere():
    """The test-suite covers all kinds of API.md section 9 (guard against a dead kind)."""
    base = changed(clip(), lambda d: d["clip"]["Inputs"]["Min"].update(dispensable=True))
    new = changed(base, lambda d: (
        d["clip"]["Inputs"].pop("X"), d["clip"]["Outputs"].pop("Mask"),
        d["clip"]["Attrs"].pop("max"), d["clip"]["Inputs"].update(Y=var()),
        d["clip"]["Outputs"].update(Z=var()), d["clip"]["Attrs"].update(k=attr(0)),
        d["clip"]["Attrs"]["min"].update(type=0),
        d["clip"]["Attrs"]["eps"].update(default_value=1.0, quant=True),
        d["clip"]["Inputs"]["Min"].update(dispensable=False),
        d["clip"]["Outputs"]["Out"].update(duplicable=True)))
    base["gone"] = op()
    kinds = {e["kind"] for e in compare(base, new).breaking}
    assert kinds == set(BREAKING_KINDS)
