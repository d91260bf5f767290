"""CI gate: opkit's own packages lint clean (what `opkit lint` asks of every op author)."""
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_project_packages_lint_clean():
    done = subprocess.run(
        [sys.executable, "-m", "opkit", "lint", "--format", "json", "--no-cache",
         "opkit", "checkers", "harness", "reference_ops"],
        cwd=ROOT, capture_output=True, text=True, timeout=1800)
    findings = json.loads(done.stdout or "[]")
    assert done.returncode == 0 and findings == [], "\n".join(
        f"{f['path']}:{f['line']}: {f['rule']} {f['message']}" for f in findings) or done.stderr
