"""Helpers shared by the harness tests (a uniquely named module: `from conftest import`
would depend on which tests folder's conftest Python finds first)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BROKEN = ROOT / "tests" / "broken_ops"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def load_op_files(folder: Path, tag: str) -> None:
    """Execute every *_op.py of `folder` (registering its ops) under fresh module names."""
    for path in sorted(folder.glob("*_op.py")):
        name = f"_opkit_test_{tag}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)


def make_case(op_type, x=None, attrs=None, reference=None, grad=True, name=None, lod=None,
              shape=(4, 5), seed=7):
    from harness.backend.case import Case

    if x is None:
        x = np.random.default_rng(seed).uniform(-1, 1, shape)
    inputs = {"X": (x, lod) if lod else x}
    outputs = reference(x) if reference else {}
    if lod and outputs:
        outputs = {k: (v, lod) for k, v in outputs.items()}
    return Case(name or f"Test_{op_type}", op_type, inputs, attrs or {}, outputs,
                grad_inputs=["X"] if grad else [], grad_outputs=["Out"] if grad else [])
