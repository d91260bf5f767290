# Adapted from PaddlePaddle tools/print_op_desc.py (Apache-2.0). Not part of opkit:
# run it with paddlepaddle installed (see README.md) to regenerate the dumps here.
import json
try:
    import paddle.base.framework as framework
    from paddle.base import core
except ImportError:
    import paddle.fluid.framework as framework
    from paddle.fluid import core

def vars_info(protos):
    out = {}
    for v in protos:
        out[str(v.name)] = {"duplicable": v.duplicable, "dispensable": v.dispensable,
                            "intermediate": v.intermediate, "extra": v.extra, "quant": v.quant}
    return out

def attrs_info(op_proto):
    defaults = core.get_op_attrs_default_value(op_proto.type.encode())
    out = {}
    for a in op_proto.attrs:
        n = str(a.name)
        out[n] = {"type": a.type, "generated": a.generated,
                  "default_value": defaults[n] if n in defaults else None,
                  "extra": a.extra, "quant": a.quant}
    return out

res = {}
for p in framework.get_all_op_protos():
    res[str(p.type)] = {"Inputs": vars_info(p.inputs), "Outputs": vars_info(p.outputs), "Attrs": attrs_info(p)}
print(json.dumps(res))
