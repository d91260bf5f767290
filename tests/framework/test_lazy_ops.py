"""The built-in ops load on demand: a lookup of one op type imports that op's module only;
anything that needs every op (all_op_types, scratch, an unknown name) loads them all."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import reference_ops
from opkit.registry import all_op_types, op_info

ROOT = Path(__file__).resolve().parents[2]


def _fresh(code: str) -> dict:
    """Run `code` in a fresh interpreter; it prints one JSON value."""
    env = dict(os.environ, OPKIT_NO_GPU="1", PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                       text=True, env=env, timeout=1800, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_a_lookup_imports_the_op_module_only_and_all_op_types_loads_everything():
    seen = _fresh("""
        import json, sys
        from opkit.registry import op_info, all_op_types
        op_info("square_grad")
        lazy = sorted(m for m in sys.modules if m.endswith("_op") and "reference_ops" in m)
        n = len(all_op_types())
        full = sorted(m for m in sys.modules if m.endswith("_op") and "reference_ops" in m)
        print(json.dumps({"lazy": lazy, "n": n, "full": len(full)}))
    """)
    assert seen["lazy"] == ["reference_ops.square_op"]
    folder = Path(reference_ops.__file__).parent  # (this process may hold tests' own ops)
    builtin = [t for t in all_op_types()
               if Path(op_info(t).source.split(":")[0]).parent == folder]
    assert seen["n"] == len(builtin)
    assert seen["full"] == len(reference_ops.OP_MODULES)


def test_an_unknown_name_loads_everything_and_still_suggests_close_names():
    seen = _fresh("""
        import json, sys
        from opkit import errors
        from opkit.registry import has_op, op_info
        try:
            op_info("elementwise_ad")
        except errors.NotFound as exc:
            message = str(exc)
        loaded = sum(m.endswith("_op") and "reference_ops" in m for m in sys.modules)
        print(json.dumps({"message": message, "loaded": loaded,
                          "has": has_op("no_such_op_anywhere")}))
    """)
    assert "elementwise_add" in seen["message"]
    assert seen["loaded"] == len(reference_ops.OP_MODULES) and seen["has"] is False


def test_every_builtin_op_type_is_found_in_the_module_named_after_it():
    for op_type in all_op_types():
        source = op_info(op_type).source.split(":")[0]
        if Path(source).parent != Path(reference_ops.__file__).parent:
            continue
        module = reference_ops.op_module(op_type)
        assert module is not None, op_type
        assert module.rsplit(".", 1)[1] == Path(source).stem, (op_type, source)


def test_the_gpu_dedicated_list_is_the_gpu_packages():
    import reference_ops.gpu as gpu

    all_op_types()
    assert set(gpu.REGISTERED) | set(gpu.SKIPPED) == set(reference_ops.GPU_DEDICATED)
