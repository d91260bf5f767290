"""`trace` judges only what the op's own run leaves: the run works in a private working and
temp directory (another process writing into the user's folder, a second `opkit test` there,
is not the op), a file the op itself leaves is still found, and the private folder is
removed also when the run raises."""
from __future__ import annotations

import subprocess
import sys
import tempfile

import pytest

from harness_test_helpers import make_case


@pytest.fixture
def folders(tmp_path, monkeypatch):
    work, temp = tmp_path / "work", tmp_path / "temp"
    work.mkdir()
    temp.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    return work, temp


def _trace(monkeypatch, second_call):
    """The trace check on relu, the second (judged) run followed by second_call()."""
    import reference_ops  # noqa: F401
    import harness.checks.laws.trace as trace
    from harness.backend.context import CheckContext
    from harness.checks.catalog import get_check

    real = trace._caller

    def caller(case, combo):
        call, calls = real(case, combo), []

        def wrapped():
            call()
            calls.append(1)
            if len(calls) == 2:
                second_call()
        return wrapped

    monkeypatch.setattr(trace, "_caller", caller)
    return get_check("trace")(make_case("relu"), CheckContext(places=("CPU",)))


def test_another_process_writing_in_the_folder_is_not_the_op(monkeypatch, folders):
    work, _ = folders

    def other_process():     # what a second `opkit test` in the same folder does meanwhile
        subprocess.run([sys.executable, "-c", "open('opkit-trace-other', 'w').close()"],
                       cwd=work, check=True)

    results = _trace(monkeypatch, other_process)
    assert (work / "opkit-trace-other").exists()
    assert [r.status for r in results] == ["pass"], [(r.status, r.message) for r in results]


def test_a_file_the_op_leaves_is_found(monkeypatch, folders):
    results = _trace(monkeypatch, lambda: open("left-by-the-op.txt", "w").close())
    assert [r.status for r in results] == ["fail"], [(r.status, r.message) for r in results]
    assert "new file(s) left in the working directory: left-by-the-op.txt" in results[0].message


def test_the_private_folder_goes_when_the_run_raises(monkeypatch, folders):
    work, temp = folders

    def boom():
        raise RuntimeError("the second run fails")

    results = _trace(monkeypatch, boom)
    assert [r.status for r in results] == ["skip"], [(r.status, r.message) for r in results]
    assert list(temp.iterdir()) == [] and list(work.iterdir()) == []
