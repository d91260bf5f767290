"""A durations file that cannot be written (--durations, [tool.opkit] durations) is a usage
error before any check runs: one line, exit 2, never a traceback after the run."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from harness_test_helpers import ROOT


def run(args, cwd=ROOT):
    env = dict(os.environ, NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "opkit", "test", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=1800, env=env)


def test_missing_folder_is_a_usage_error(tmp_path):
    missing = tmp_path / "nosuch" / "d.json"
    p = run(["relu", "--checks", "output", "--record-durations", "--durations", missing])
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "nosuch" in lines[0] and "does not exist" in lines[0], lines
    assert not missing.parent.exists()


def test_missing_folder_with_json_prints_the_error_document(tmp_path):
    missing = tmp_path / "nosuch" / "d.json"
    p = run(["relu", "--checks", "output", "--record-durations", "--durations", missing,
             "--format", "json"])
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    assert doc["exit_code"] == 2 and "does not exist" in doc["error"]


def test_project_setting_is_checked_too(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        '[tool.opkit]\ndurations = "nosuch/d.json"\n', encoding="utf-8")
    p = run(["relu", "--checks", "output", "--record-durations"], cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "[tool.opkit] durations" in p.stderr and "Traceback" not in p.stderr


def test_writable_path_still_records(tmp_path):
    target = tmp_path / "d.json"
    p = run(["relu", "--checks", "output", "--record-durations", "--durations", target])
    assert p.returncode == 0, p.stderr
    assert "relu" in json.loads(target.read_text())["durations"]


def test_pytest_plugin_checks_it_before_collecting(tmp_path):
    missing = tmp_path / "nosuch" / "d.json"
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-q",
                        "--opkit-record-durations", f"--opkit-durations={missing}",
                        "tests/broken_ops/test_nonexistent_file_is_fine.py"],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 4, p.stdout + p.stderr     # pytest's usage-error code
    assert "does not exist" in p.stderr and "Traceback" not in p.stderr


def test_pytest_plugin_refuses_to_shard_by_a_durations_file_that_is_not_there(tmp_path):
    """`--opkit-shard` balanced by `--opkit-durations FILE` when FILE does not exist: a usage
    error, not a silent split by count (the CLI's --durations says the same: exit 2)."""
    missing = tmp_path / "d.json"
    p = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-q",
                        "--opkit-shard=1/2", f"--opkit-durations={missing}",
                        "tests/broken_ops/test_nonexistent_file_is_fine.py"],
                       cwd=ROOT, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 4, p.stdout + p.stderr
    assert str(missing) in p.stderr and "does not exist" in p.stderr
    assert "Traceback" not in p.stderr
