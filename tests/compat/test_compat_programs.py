"""`opkit compat --programs DIR`: behavior-changed, program-incompatible, upgraders checked."""
import json

import numpy as np
import pytest

from checkers.compat import CompatReport, DescError
from checkers.compat.programs import check_programs, op_fits_desc
from opkit import OpVersionDesc, errors

from version_helpers import V1, dump, make_release, registry_with, save_model


def _rename(d):
    d["attrs"]["factor"] = d["attrs"].pop("scale")
    return d


RENAMED = [("rename", OpVersionDesc().delete_attr("scale", "renamed")
            .new_attr("factor", "was scale", 2.0))]
V2_UPGRADER = make_release({"factor": 2.0}, lambda x, a: x * a["factor"],
                           [RENAMED[0] + (_rename,)])
V2_NO_UPGRADER = make_release({"factor": 2.0}, lambda x, a: x * a["factor"],
                              [RENAMED[0] + (None,)])
V2_BAD_UPGRADER = make_release({"factor": 2.0}, lambda x, a: x * a["factor"],
                               [RENAMED[0] + (lambda d: d,)])
SAME_SIG_NEW_NUMBERS = make_release({"scale": 2.0}, lambda x, a: x * a["scale"] + 1e-3)
BUGFIX = make_release({"scale": 2.0}, lambda x, a: x * a["scale"] + 1e-3, [
    ("off-by-one fixed", OpVersionDesc().bugfix_with_behavior_changed("adds 1e-3 now"), None)])
TINY_DRIFT = make_release({"scale": 2.0}, lambda x, a: x * a["scale"] * (1 + 1e-12))


def check(tmp_path, release, with_sample=True):
    save_model(tmp_path / "models" / "m1", sample=with_sample)
    new = dump(release)
    report = CompatReport()
    with registry_with(release):
        check_programs(report, new, tmp_path / "models")
    return report


def kinds(entries):
    return [(e["op"], e["kind"]) for e in entries]


def test_unchanged_release_replays_clean(tmp_path):
    r = check(tmp_path, V1)
    assert r.breaking == [] and kinds(r.notes) == [("", "program-checked")]
    assert "reproduces its 2 saved values" in r.notes[0]["message"]


def test_tiny_float_drift_within_harness_tolerance_is_not_a_change(tmp_path):
    r = check(tmp_path, TINY_DRIFT)
    assert r.breaking == []


def test_same_signature_new_numbers_is_behavior_changed(tmp_path):
    r = check(tmp_path, SAME_SIG_NEW_NUMBERS)
    (b,) = r.breaking
    assert (b["op"], b["kind"], b["var"]) == ("vprobe", "behavior-changed", "out")
    assert b["new"] == pytest.approx(b["old"] + 1e-3)
    assert "no checkpoint of 'vprobe' after version 0" in b["message"]


def test_kernel_that_now_fails_at_run_time_is_program_incompatible(tmp_path):
    """Not what the replay was designed for: the new kernel returns float32 from a float64
    run, which the framework refuses; the model no longer runs, and the op is named."""
    r = check(tmp_path, make_release({"scale": 2.0}, lambda x, a: x * a["scale"],
                                     out_dtype="float32"))
    (b,) = r.breaking
    assert (b["op"], b["kind"]) == ("vprobe", "program-incompatible")
    assert "running its sample failed" in b["message"] and "float32" in b["message"]


def test_bugfix_checkpoint_makes_it_a_note(tmp_path):
    r = check(tmp_path, BUGFIX)
    assert r.breaking == []
    (n,) = r.notes
    assert n["kind"] == "behavior-changed" and "off-by-one fixed" in n["message"]


def test_upgrader_output_fitting_new_desc_is_compatible(tmp_path):
    r = check(tmp_path, V2_UPGRADER)
    assert r.breaking == []
    assert "upgraded vprobe 0->1" in r.notes[0]["message"]


@pytest.mark.parametrize("release", [V2_NO_UPGRADER, V2_BAD_UPGRADER])
def test_missing_or_wrong_upgrader_is_program_incompatible(tmp_path, release):
    r = check(tmp_path, release)
    (b,) = r.breaking
    assert b["kind"] == "program-incompatible" and b["op"] == "vprobe"
    assert "attr 'scale' is not in the new description" in b["message"]


def test_newer_program_than_registry_is_program_incompatible(tmp_path):
    save_model(tmp_path / "models" / "m", release=V2_UPGRADER, attrs={"factor": 2.0})
    new = dump(V1)
    report = CompatReport()
    with registry_with(V1):
        check_programs(report, new, tmp_path / "models")
    (b,) = report.breaking
    assert b["kind"] == "program-incompatible" and b["op"] == "vprobe"
    assert "version 1" in b["message"] and "version 0" in b["message"]


def test_no_sample_is_a_note(tmp_path):
    r = check(tmp_path, SAME_SIG_NEW_NUMBERS, with_sample=False)
    assert r.breaking == [] and "no sample" in r.notes[0]["message"]


def test_op_fits_desc_twins():
    desc = {"Inputs": {"X": {"dispensable": False, "extra": False}},
            "Outputs": {"Out": {"dispensable": False, "extra": False}},
            "Attrs": {"a": {"default_value": None, "extra": False},
                      "b": {"default_value": 1, "extra": False}}}
    good = {"type": "t", "inputs": {"X": ["x"]}, "outputs": {"Out": ["o"]}, "attrs": {"a": 1}}
    assert op_fits_desc(good, desc) == []
    bad = {"type": "t", "inputs": {"Y": ["x"]}, "outputs": {"Out": ["o"]}, "attrs": {"c": 1}}
    assert op_fits_desc(bad, desc) == [
        "input slot 'Y' is not in the new description", "required input 'X' is missing",
        "attr 'c' is not in the new description",
        "attr 'a' has no default and the program has no value"]
    assert op_fits_desc(good, None) == ["op 't' is not in the new op descriptions"]


def test_bad_programs_dir_is_unreadable_input(tmp_path):
    with pytest.raises(DescError, match="no such directory"):
        check_programs(CompatReport(), {}, tmp_path / "nope")
    with pytest.raises(DescError, match="no saved model"):
        check_programs(CompatReport(), {}, tmp_path)
    save_model(tmp_path / "m")
    (tmp_path / "m" / "__sample__.npz").write_bytes(b"PK\x03\x04 truncated")
    with registry_with(V1), pytest.raises(DescError, match=r"__sample__.npz: not a valid"):
        check_programs(CompatReport(), dump(V1), tmp_path)


def test_cli_programs_exit_codes_and_json(tmp_path, capsys):
    from opkit.cli.main import main

    save_model(tmp_path / "models" / "m")
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps(dump(V1)))
    new.write_text(json.dumps(dump(SAME_SIG_NEW_NUMBERS)))
    with registry_with(SAME_SIG_NEW_NUMBERS):
        code = main(["compat", str(old), str(new), "--programs", str(tmp_path / "models"),
                     "--format", "json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 1 and kinds(out["breaking"]) == [("vprobe", "behavior-changed")]
    (tmp_path / "models" / "m" / "__model__.json").write_text("{", encoding="utf-8")
    with registry_with(SAME_SIG_NEW_NUMBERS):
        code = main(["compat", str(old), str(new), "--programs", str(tmp_path / "models"),
                     "--format", "json"])
    captured = capsys.readouterr()
    assert code == 2 and "__model__.json: not valid JSON" in captured.err
    # with --format json, stdout holds a JSON document naming the error
    doc = json.loads(captured.out)
    assert doc["exit_code"] == 2 and "__model__.json: not valid JSON" in doc["error"]


def test_behavior_changed_localizes_the_first_changed_op(tmp_path):
    """A change in an op upstream of vprobe is blamed on that op, not on vprobe."""
    save_model(tmp_path / "models" / "m")
    sample_dir = tmp_path / "models" / "m"
    import opkit.io

    params = opkit.io.read_npz(sample_dir / "__params__.npz")
    np.savez(sample_dir / "__params__.npz", w=params["w"] * 1.5)   # mul's inputs change
    new = dump(V1)
    report = CompatReport()
    with registry_with(V1):
        check_programs(report, new, tmp_path / "models")
    (b,) = report.breaking
    assert b["op"] == "mul" and b["var"] == "h"


def test_registry_not_matching_new_is_unreadable_input(tmp_path):
    """Replaying with the old op library while NEW describes another release is a usage
    mistake (exit 2), not a verdict on the models."""
    save_model(tmp_path / "m")
    with registry_with(V1), pytest.raises(DescError, match=r"registry.*op 'vprobe'.*--ops"):
        check_programs(CompatReport(), dump(V2_UPGRADER), tmp_path)
    with registry_with(V1), pytest.raises(DescError, match=r"version 0 in the registry but 1"):
        check_programs(CompatReport(), dump(make_release(
            {"scale": 2.0}, lambda x, a: x, [("n", OpVersionDesc().bugfix_with_behavior_changed(
                "b"), None)])), tmp_path)


def test_lod_sample_feed_is_refused(tmp_path):
    with pytest.raises(errors.InvalidArgument, match="sample_feed\\['x'\\] must be an array"):
        with registry_with(V1):
            import opkit
            import opkit.io
            from version_helpers import build_program

            prog, out = build_program()
            scope = opkit.Scope()
            scope.var("w").get_tensor().set(np.ones((3, 2)))
            opkit.io.save_inference_model(str(tmp_path), ["x"], [out],
                                          opkit.Executor(opkit.CPUPlace()), prog, scope=scope,
                                          sample_feed={"x": (np.ones((3, 3)), [[1, 2]])})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_no_false_alarm_on_builtin_ops(tmp_path, seed):
    """An MLP of built-in ops, saved and replayed with the same registry: only notes."""
    import opkit
    import opkit.io
    from checkers.compat import loads_op_descs
    from opkit.op_desc import dumps_op_descs

    rng = np.random.default_rng(seed)
    main, startup = opkit.Program(), opkit.Program()
    startup.random_seed = seed
    with opkit.program_guard(main, startup):
        x = opkit.layers.data("x", shape=[5], dtype="float32")
        h = opkit.layers.fc(x, size=8, act="relu")
        h = opkit.layers.clip(opkit.layers.scale(h, scale=0.5, bias=0.1), -1.0, 1.0)
        out = opkit.layers.softmax(opkit.layers.fc(h, size=3))
    scope = opkit.Scope()
    exe = opkit.Executor(opkit.CPUPlace())
    exe.run(startup, scope=scope)
    opkit.io.save_inference_model(str(tmp_path / "mlp"), ["x"], [out], exe, main, scope=scope,
                                  sample_feed={"x": rng.normal(size=(6, 5)).astype("float32")})
    report = CompatReport()
    check_programs(report, loads_op_descs(dumps_op_descs(), "dump"), tmp_path)
    assert report.breaking == []
    assert [n["kind"] for n in report.notes] == ["program-checked"]


def test_first_difference_twins():
    from checkers.compat.programs import _first_difference as diff

    a = np.array([1.0, 2.0, np.nan], dtype="float32")
    assert diff(a, a.copy()) is None                       # NaN equals NaN
    assert diff(a, a * (1 + 1e-7)) is None                 # within float32 tolerance
    text, old, new = diff(a, np.array([1.0, 2.001, np.nan], dtype="float32"))
    assert text.startswith("at [1] saved 2.0") and old == 2.0 and new != 2.0
    assert "dtype changed from float32 to float64" in diff(a, a.astype("float64"))[0]
    assert "shape changed from [3] to [1, 3]" in diff(a, a[None])[0]
    assert diff(np.array([1, 2]), np.array([1, 3]))[0].startswith("at [1] saved 2, now 3")


def _check_with_old(tmp_path, release):
    save_model(tmp_path / "models" / "m1")
    old, new = dump(V1), dump(release)
    report = CompatReport()
    with registry_with(release):
        check_programs(report, new, tmp_path / "models", "new.json", old)
    return report


def test_upgrader_is_checked_on_an_op_as_old_describes_it(tmp_path):
    r = _check_with_old(tmp_path, V2_UPGRADER)
    assert r.breaking == []
    r = _check_with_old(tmp_path, V2_BAD_UPGRADER)
    synth = [b for b in r.breaking if b["name"] == "vprobe (as OLD describes it)"]
    (b,) = synth
    assert b["kind"] == "program-incompatible" and "upgrader of version 1" in b["message"]
    assert "attr 'scale' is not in the new description" in b["message"]


def test_upgrader_that_raises_on_old_op_is_named(tmp_path):
    def needs_attr(d):
        d["attrs"]["factor"] = d["attrs"].pop("missing")
        return d

    rel = make_release({"factor": 2.0}, lambda x, a: x * a["factor"],
                       [RENAMED[0] + (needs_attr,)])
    r = _check_with_old(tmp_path, rel)
    assert any(b["name"] == "vprobe (as OLD describes it)" and "fails" in b["message"]
               for b in r.breaking)


def test_synthesized_op_uses_defaults_and_placeholders():
    from checkers.compat.programs import synthesized_op

    desc = {"Inputs": {"X": {"extra": False}, "Cfg": {"extra": True}},
            "Outputs": {"Out": {"extra": False}},
            "Attrs": {"a": {"type": 0, "default_value": None, "extra": False},
                      "b": {"type": 1, "default_value": 0.5, "extra": False},
                      "use_x": {"type": 6, "default_value": False, "extra": True}}}
    assert synthesized_op("t", desc) == {"type": "t", "inputs": {"X": ["x_0"]},
                                         "outputs": {"Out": ["out_0"]},
                                         "attrs": {"a": 0, "b": 0.5}}
