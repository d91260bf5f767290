"""Op versions: registration, the dump's OpVersion key, upgraders in Program JSON."""
import json

import numpy as np
import pytest

import opkit
from opkit import OpVersionDesc, errors, register_op_version
from opkit.framework import op_version

from version_helpers import V1, build_program, make_release, registry_with


def test_version_is_the_number_of_checkpoints_and_methods_chain():
    with op_version.scratch():
        assert op_version.op_version("vprobe_none") == 0
        desc = OpVersionDesc()
        assert desc.new_attr("a", "new a", 1) is desc
        desc.modify_attr("b", "b doubles", 2.0).delete_attr("c", "gone").new_input(
            "Y", "a tensor").new_output("Z", "a mask").bugfix_with_behavior_changed("fixed")
        reg = register_op_version("vprobe_x")
        assert reg.add_checkpoint("one", desc) is reg
        reg.add_checkpoint("two", OpVersionDesc().new_attr("d", "d", None))
        assert op_version.op_version("vprobe_x") == 2
        info = op_version.version_info("vprobe_x")
        assert info["version"] == 2
        assert [c["type"] for c in info["checkpoints"][0]["changes"]] == list(
            op_version.CHANGE_TYPES)
        assert info["checkpoints"][0]["changes"][0] == {"type": "new_attr", "name": "a",
                                                        "remark": "new a", "default": 1}
        assert info["checkpoints"][1]["upgrader"] is False
    assert op_version.op_version("vprobe_x") == 0     # scratch restored


@pytest.mark.parametrize("call, text", [
    (lambda: register_op_version(""), "op type"),
    (lambda: OpVersionDesc().new_attr("a", "  ", 1), "remark"),
    (lambda: register_op_version("vprobe_y").add_checkpoint("", None), "note"),
    (lambda: register_op_version("vprobe_y").add_checkpoint("n", {"a": 1}), "OpVersionDesc"),
    (lambda: register_op_version("vprobe_y").add_checkpoint("n", None, upgrader=3), "callable"),
])
def test_bad_registration_is_a_clear_error(call, text):
    with op_version.scratch(), pytest.raises(errors.InvalidArgument, match=text):
        call()


def test_dump_carries_op_version_key():
    from opkit.op_desc import dump_op_descs

    rel = make_release({"scale": 2.0}, lambda x, a: x,
                       [("n1", OpVersionDesc().new_attr("scale", "s", 2.0), lambda d: d)])
    with registry_with(rel):
        descs = dump_op_descs()
    v = descs["vprobe"]["OpVersion"]
    assert v["version"] == 1 and v["checkpoints"][0]["upgrader"] is True
    assert v["checkpoints"][0]["note"] == "n1"
    assert descs["mul"]["OpVersion"] == {"version": 0, "checkpoints": []}


def _rename(d):
    d["attrs"]["factor"] = d["attrs"].pop("scale")
    return d


def _double(d):
    d["attrs"]["factor"] = d["attrs"]["factor"] * 2
    d["attrs"]["half"] = 1
    return d


V2 = make_release({"factor": 1.0}, lambda x, a: x * a["factor"],
                  [("rename", OpVersionDesc().delete_attr("scale", "renamed")
                    .new_attr("factor", "was scale", 1.0), _rename)])
V3 = make_release({"factor": 1.0, "half": 0}, lambda x, a: x * a["factor"] / (2 if a["half"] else 1),
                  list(V2[2]) + [("halve", OpVersionDesc().new_attr("half", "h", 0), _double)])


def _program_json(release, attrs):
    with registry_with(release):
        prog, _ = build_program(attrs)
        return prog.to_json()


def test_to_json_records_versions_and_from_json_upgrades_in_order():
    text = _program_json(V1, {"scale": 3.0})
    assert json.loads(text)["op_version_map"] == {"mul": 0, "vprobe": 0}
    with registry_with(V3):
        prog = opkit.Program.from_json(text)
        op = prog.global_block().ops[1]
        # rename first (scale 3 -> factor 3), then double (factor 6, half on): order matters
        assert op.attrs["factor"] == 6.0 and op.attrs["half"] == 1
        assert json.loads(prog.to_json())["op_version_map"]["vprobe"] == 2
        w = np.arange(6.0).reshape(3, 2)
        scope = opkit.Scope()
        scope.var("w").get_tensor().set(w)
        x = np.ones((2, 3))
        (out,) = opkit.Executor(opkit.CPUPlace()).run(prog, feed={"x": x}, fetch_list=["out"],
                                                      scope=scope)
        np.testing.assert_allclose(out, (x @ w) * 3.0)   # same numbers as v1 with scale 3


def test_program_from_a_middle_version_runs_only_later_upgraders():
    text = _program_json(V2, {"factor": 5.0})
    with registry_with(V3):
        op = opkit.Program.from_json(text).global_block().ops[1]
    assert op.attrs["factor"] == 10.0 and op.attrs["half"] == 1


def test_newer_program_is_refused_naming_op_and_versions():
    text = _program_json(V3, {})
    with registry_with(V1), pytest.raises(errors.Unimplemented) as info:
        opkit.Program.from_json(text)
    msg = str(info.value)
    assert "op 'vprobe'" in msg and "version 2" in msg and "version 0" in msg


def test_failing_upgrader_is_named():
    def broken(d):
        raise KeyError("nope")

    rel = make_release({"factor": 1.0}, lambda x, a: x,
                       [("break", OpVersionDesc().new_attr("factor", "f", 1.0), broken)])
    text = _program_json(V1, {})
    with registry_with(rel), pytest.raises(errors.InvalidArgument,
                                           match=r"vprobe.*checkpoint 1 \('break'\) failed"):
        opkit.Program.from_json(text)


def test_clone_does_not_upgrade_again():
    with registry_with(V3):
        prog, _ = build_program({"factor": 2.0, "half": 0})
        assert prog.clone().global_block().ops[1].attrs["factor"] == 2.0
