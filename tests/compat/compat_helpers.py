"""Small builders for op-description dicts (API.md section 8)."""
from __future__ import annotations

import copy
import json


def var(**flags) -> dict:
    out = {"duplicable": False, "dispensable": False, "intermediate": False,
           "extra": False, "quant": False}
    out.update(flags)
    return out


def attr(type_id: int, default=None, **flags) -> dict:
    out = {"type": type_id, "generated": False, "default_value": default,
           "extra": False, "quant": False}
    out.update(flags)
    return out


def op(inputs=None, outputs=None, attrs=None) -> dict:
    return {"Inputs": dict(inputs or {}), "Outputs": dict(outputs or {}),
            "Attrs": dict(attrs or {})}


def clip() -> dict:
    return {"clip": op({"X": var(), "Min": var(dispensable=True)},
                       {"Out": var(), "Mask": var(intermediate=True)},
                       {"min": attr(1, None), "max": attr(1, None),
                        "eps": attr(1, 0.0010000000474974513),
                        "use_mkldnn": attr(6, False, extra=True)})}


def write(path, data) -> str:
    path.write_text(json.dumps(data))
    return str(path)


def changed(base: dict, fn) -> dict:
    new = copy.deepcopy(base)
    fn(new)
    return new
