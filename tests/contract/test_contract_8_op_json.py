"""The public contract, section 8. op description JSON."""
from __future__ import annotations

import json

from contract_helpers import ATTR_TYPES, json_stdout, run_opkit


ALL_ATTRS_OP = '''
from opkit import OpMaker, OperatorWithKernel, register_operator, register_kernel

TYPES = %r

class Maker(OpMaker):
    def make(self):
        self.add_input("X", "x")
        self.add_input("Y", "y").as_dispensable().as_duplicable()
        self.add_output("Out", "out").as_intermediate()
        self.add_output("XShape", "shape").as_extra()
        for name in TYPES:
            self.add_attr("req_" + name, name, "required")
        self.add_attr("with_default", "float", "has one", default=0.5)
        self.add_attr("flag", bool, "has one", default=True)
        self.add_comment("every attr type")

class Op(OperatorWithKernel):
    def infer_shape(self, ctx):
        ctx.set_output_dim("Out", ctx.get_input_dim("X"))

register_operator("contract_all_attrs", Op, Maker)

@register_kernel("contract_all_attrs")
def kernel(ctx):
    ctx.set_output("Out", ctx.input("X"))
''' % (sorted(ATTR_TYPES),)


def test_8_dump_format(tmp_path):
    op_file = tmp_path / "contract_all_attrs_op.py"
    op_file.write_text(ALL_ATTRS_OP)
    p = run_opkit("dump", "--ops", op_file, "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    descs = json_stdout(p)
    assert descs["clip"]["Attrs"]["min"]["type"] == 1
    desc = descs["contract_all_attrs"]
    assert set(desc) >= {"Inputs", "Outputs", "Attrs"}
    var_keys = {"duplicable", "dispensable", "intermediate", "extra", "quant"}
    for section in ("Inputs", "Outputs"):
        for flags in desc[section].values():
            assert var_keys <= set(flags) and all(isinstance(v, bool) for v in flags.values())
    assert desc["Inputs"]["X"] == dict.fromkeys(var_keys, False)
    assert desc["Inputs"]["Y"]["dispensable"] and desc["Inputs"]["Y"]["duplicable"]
    assert desc["Outputs"]["Out"]["intermediate"] and desc["Outputs"]["XShape"]["extra"]
    for name, type_id in ATTR_TYPES.items():
        attr = desc["Attrs"]["req_" + name]
        assert {"type", "generated", "default_value", "extra", "quant"} <= set(attr)
        assert attr["type"] == type_id and attr["default_value"] is None, name
    assert desc["Attrs"]["with_default"]["default_value"] == 0.5
    assert desc["Attrs"]["flag"] == {"type": 6, "generated": False, "default_value": True,
                                     "extra": False, "quant": False}


def test_8_compat_reads_paddle_format_and_ignores_unknown_keys(tmp_path):
    old = {"clip": {"Inputs": {"X": {"duplicable": False, "dispensable": False,
                                     "intermediate": False, "extra": False, "quant": False}},
                    "Outputs": {"Out": {"duplicable": False, "dispensable": False,
                                        "intermediate": False, "extra": False,
                                        "quant": False}},
                    "Attrs": {"min": {"type": 1, "generated": False, "default_value": None,
                                      "extra": False, "quant": False}},
                    "comment": "an unknown key"}}
    new = json.loads(json.dumps(old))
    new["clip"]["Attrs"]["min"]["some_future_key"] = 1
    new["clip"]["Inputs"]["X"]["another"] = "x"
    (tmp_path / "old.json").write_text(json.dumps(old))
    (tmp_path / "new.json").write_text(json.dumps(new))
    p = run_opkit("compat", "old.json", "new.json", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0 and json_stdout(p)["breaking"] == []
