"""`opkit dump` and `opkit.op_desc`: the registry as section-8 JSON, checked by compat."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from checkers.compat import compare, loads_op_descs
from opkit import OpMaker, OperatorWithKernel, register_operator, registry
from opkit.cli.main import main
from opkit.op_desc import dump_op_descs, dumps_op_descs

ROOT = Path(__file__).resolve().parents[2]


class ProbeOp(OperatorWithKernel):
    def infer_shape(self, ctx):
        pass


class ProbeV1(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_input("Bias", "(Tensor) optional bias.").as_dispensable()
        self.add_input("Old", "(Tensor) going away.")
        self.add_output("Out", "(Tensor) output.")
        self.add_output("Mask", "(Tensor) for the grad op.").as_intermediate()
        self.add_attr("alpha", "float", "(float) scale.").set_default(1.0)
        self.add_attr("eps", "float", "(float) epsilon.").set_default(1e-3)
        self.add_attr("axis", "int", "(int) axis.").set_default(-1)
        self.add_attr("mode", "string", "(string) mode.").set_default("a")
        self.add_attr("shape", "ints", "(ints) shape.")
        self.add_attr("use_mkldnn", "bool", "(bool) runtime only.").set_default(False).as_extra()
        self.add_comment("Probe op for the compat tests.")


class ProbeV2(OpMaker):
    def make(self):
        self.add_input("X", "(Tensor) input.")
        self.add_input("Bias", "(Tensor) optional bias.").as_dispensable()
        self.add_input("Scale", "(Tensor) new, optional.").as_dispensable()   # input-added
        # "Old" deleted                                                       # input-deleted
        self.add_output("Out", "(Tensor) output.").as_duplicable()            # output-flag-changed
        self.add_output("Mask", "(Tensor) for the grad op.").as_intermediate()
        self.add_attr("alpha", "float", "(float) scale.").set_default(2.0)   # default changed
        self.add_attr("eps", "float", "(float) epsilon.").set_default(0.001)  # same value
        self.add_attr("axis", "long", "(long) axis.").set_default(-1)        # type changed
        self.add_attr("mode", "string", "(string) mode.").set_default("a")
        self.add_attr("shape", "ints", "(ints) shape.").set_default([1])     # default given
        self.add_attr("k", "int", "(int) new and required.")                 # added, no default
        # "use_mkldnn" (extra) deleted                                        # note
        self.add_comment("Probe op for the compat tests.")


def dump_with(maker) -> str:
    with registry.scratch():
        register_operator("compat_probe", ProbeOp, maker)
        register_operator("compat_probe_grad", ProbeOp)   # no maker: not dumped
        return dumps_op_descs()


def test_dump_shape_of_one_op():
    desc = json.loads(dump_with(ProbeV1))
    assert "compat_probe" in desc and "compat_probe_grad" not in desc
    probe = desc["compat_probe"]
    assert list(probe) == ["Attrs", "Inputs", "OpVersion", "Outputs"]
    assert probe["OpVersion"] == {"version": 0, "checkpoints": []}
    assert probe["Inputs"]["Bias"] == {"dispensable": True, "duplicable": False, "extra": False,
                                       "intermediate": False, "quant": False}
    assert probe["Outputs"]["Mask"]["intermediate"] is True
    assert probe["Attrs"]["axis"] == {"default_value": -1, "extra": False, "generated": False,
                                      "quant": False, "type": 0}
    assert probe["Attrs"]["shape"]["default_value"] is None and probe["Attrs"]["shape"]["type"] == 3
    assert probe["Attrs"]["use_mkldnn"]["extra"] is True
    assert probe["Attrs"]["eps"]["type"] == 1


def test_dump_is_byte_identical_and_compatible_with_itself():
    first, second = dump_with(ProbeV1), dump_with(ProbeV1)
    assert first == second
    assert list(json.loads(first)) == sorted(json.loads(first))
    same = compare(loads_op_descs(first), loads_op_descs(second))
    assert same.breaking == [] and same.notes == []


def test_changed_maker_gives_exactly_those_changes():
    old, new = loads_op_descs(dump_with(ProbeV1)), loads_op_descs(dump_with(ProbeV2))
    report = compare(old, new)
    got_breaking = {(e["kind"], e["name"], e.get("field")) for e in report.breaking}
    got_notes = {(e["kind"], e["name"], e.get("field")) for e in report.notes}
    assert got_breaking == {
        ("input-deleted", "Old", None),
        ("output-flag-changed", "Out", "duplicable"),
        ("attr-default-changed", "alpha", None),
        ("attr-type-changed", "axis", None),
        ("attr-added-no-default", "k", None),
    }
    assert got_notes == {
        ("input-added", "Scale", None),
        ("attr-default-changed", "shape", None),
        ("attr-deleted", "use_mkldnn", None),
    }
    assert all(e["op"] == "compat_probe" for e in report.breaking + report.notes)


def test_whole_registry_dump_is_valid_and_stable():
    descs = dump_op_descs()
    assert descs, "no ops registered"
    text = dumps_op_descs(descs)
    assert text == dumps_op_descs()
    loaded = loads_op_descs(text, "dump")
    assert set(loaded) == set(descs)
    for op_type in registry.all_op_types():
        has_proto = registry.op_info(op_type).proto is not None
        assert (op_type in descs) == has_proto, op_type


def test_cli_dump_stdout_and_file_agree(tmp_path, capsys):
    assert main(["dump"]) == 0
    out = capsys.readouterr().out
    target = tmp_path / "ops.json"
    assert main(["dump", "-o", str(target)]) == 0
    assert target.read_text() == out
    assert capsys.readouterr().out == ""
    assert main(["compat", str(target), str(target)]) == 0


def test_cli_dump_to_missing_directory(tmp_path, capsys):
    target = tmp_path / "missing" / "ops.json"
    assert main(["dump", "-o", str(target)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(target) in err and "does not exist" in err


def test_cli_dump_to_a_directory(tmp_path, capsys):
    assert main(["dump", "-o", str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


def test_cli_dump_bad_ops_module(capsys):
    assert main(["dump", "--ops", "no_such_module_xyz"]) == 2
    assert "no_such_module_xyz" in capsys.readouterr().err


def _opkit(*args, cwd):
    return subprocess.run([sys.executable, "-m", "opkit.cli.main", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=1800)


def test_dump_in_two_processes_is_byte_identical_with_ops_path(tmp_path):
    ops = tmp_path / "probe_ext_op.py"
    ops.write_text(
        "from opkit import OpMaker, OperatorWithKernel, register_operator\n"
        "class M(OpMaker):\n"
        "    def make(self):\n"
        "        self.add_input('X', 'x')\n"
        "        self.add_output('Out', 'out')\n"
        "        self.add_attr('scale', 'float', 's').set_default(0.1)\n"
        "        self.add_comment('probe')\n"
        "class Op(OperatorWithKernel):\n"
        "    def infer_shape(self, ctx):\n"
        "        pass\n"
        "register_operator('compat_ext_probe', Op, M)\n")
    a, b = (_opkit("dump", "--ops", str(ops), "-o", str(tmp_path / f"{n}.json"), cwd=ROOT)
            for n in "ab")
    assert a.returncode == 0 and b.returncode == 0, a.stderr + b.stderr
    text = (tmp_path / "a.json").read_bytes()
    assert text == (tmp_path / "b.json").read_bytes()
    assert json.loads(text)["compat_ext_probe"]["Attrs"]["scale"]["default_value"] == 0.1


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_dump_accepts_format(fmt, capsys):
    assert main(["dump", "--format", fmt]) == 0
    json.loads(capsys.readouterr().out)
