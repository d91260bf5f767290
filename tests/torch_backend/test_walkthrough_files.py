"""benchmarks/torch_walkthrough.py times docs/torch.md's walkthrough with the files as the
page shows them: the two code blocks are found, compile, and are the walkthrough's (the op
file registers the op the test file names; the test file does not import the op file)."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.no_torch_needed


def _walkthrough():
    spec = importlib.util.spec_from_file_location(
        "torch_walkthrough", ROOT / "benchmarks" / "torch_walkthrough.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_two_files_come_from_the_page_and_compile():
    files = _walkthrough().walkthrough_files()
    assert set(files) == {"mylib_ops.py", "my_tests/test_scaled_softplus.py"}
    for path, text in files.items():
        compile(text, path, "exec")
    assert '@torch.library.custom_op("mylib::scaled_softplus"' in files["mylib_ops.py"]
    test = files["my_tests/test_scaled_softplus.py"]
    assert 'self.op_type = "mylib::scaled_softplus"' in test
    assert not re.search(r"^\s*(import|from)\s+mylib_ops\b", test, re.M)


def test_a_page_without_a_file_names_the_missing_one(tmp_path):
    doc = tmp_path / "torch.md"
    doc.write_text("```python\n# mylib_ops.py: registers it\nimport torch\n```\n")
    with pytest.raises(SystemExit, match="my_tests/test_scaled_softplus.py"):
        _walkthrough().walkthrough_files(doc)
