"""The public contract, section 1. packages."""
from __future__ import annotations

from pathlib import Path

import opkit


def test_1_packages_import():
    import checkers  # noqa: F401
    import harness
    import reference_ops  # noqa: F401

    assert isinstance(opkit.__version__, str)
    for sub in ("layers", "optimizer", "registry", "errors"):
        assert getattr(opkit, sub).__name__ == f"opkit.{sub}"
    assert hasattr(harness, "OpTest")


def test_1_reference_ops_one_forward_op_per_file():
    from opkit.registry import all_op_types, op_info

    folder = Path(__import__("reference_ops").__file__).parent
    files = {p.stem for p in folder.glob("*_op.py")}
    forward = [t for t in all_op_types() if not t.endswith("_grad")]
    for op_type in forward:
        source = op_info(op_type).source.split(":")[0]
        if Path(source).parent == folder:
            assert Path(source).name == f"{op_type}_op.py", (op_type, source)
    assert files <= {f"{t}_op" for t in forward}, files - {f"{t}_op" for t in forward}


def test_1_without_cuda_gpu_is_reported_not_raised():
    assert isinstance(opkit.is_compiled_with_cuda(), bool)
    assert isinstance(opkit.cuda_device_count(), int) and opkit.cuda_device_count() >= 0
