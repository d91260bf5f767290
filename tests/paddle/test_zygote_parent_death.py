"""`python -m opkit_paddle.compat.measure --per-file` reads each file's pytest process to
EOF: a zygote (harness.executing.zygote, forked by the pytest plugin) that outlives a pytest process
killed by a signal would hold the captured stdout open and hang the measurement. The zygote
closes the parent's end of its pipe, so it reads EOF when its parent dies, and exits."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent("""
    import os, signal, sys
    from harness.executing.zygote import Zygote

    class Dummy:
        pass

    z = Zygote.start([Dummy])
    assert z is not None, "cannot fork here"
    with open(sys.argv[1], "w") as f:
        f.write(str(z.process.pid))
    os.kill(os.getpid(), signal.SIGKILL)     # the parent dies without closing anything
""")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # a zombie (not yet reaped by init) counts as gone
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_the_zygote_exits_with_its_killed_parent_and_releases_stdout(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    pid_file = tmp_path / "zygote.pid"
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT, str(pid_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
                            cwd=ROOT)
    try:
        proc.wait(timeout=600)         # the parent killed itself (however slow its start)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise AssertionError("the script did not run to its kill") from None
    try:
        proc.communicate(timeout=120)  # EOF only once every holder of stdout exited
    except subprocess.TimeoutExpired:
        pid = int(pid_file.read_text())
        if _alive(pid):
            os.kill(pid, 9)       # the orphan zygote: its stdout end goes with it
        proc.communicate()
        raise AssertionError("the zygote outlived its killed parent and held its stdout "
                             "open") from None
    assert proc.returncode == -9
    # stdout reaches EOF while the zygote is still exiting (its descriptors close first):
    # it must be gone soon after, however loaded the machine
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 60
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"the zygote {pid} is still alive 60 s after its stdout closed"


def test_a_per_file_measure_child_whose_parent_is_gone_ends_at_once(tmp_path):
    """`measure --per-file` starts one child per file with `--parent PID`: the child dies with
    the measure process (harness.processes.forking.die_with_parent), and one started after its parent
    died ends before it runs anything."""
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    out = tmp_path / "out.json"
    p = subprocess.run([sys.executable, "-m", "opkit_paddle.compat.measure",
                        str(tmp_path / "test_x.py"), "--json", str(out),
                        f"--parent={gone.pid}"], cwd=ROOT, capture_output=True, text=True,
                       timeout=1800)
    assert p.returncode == 1, p.stdout + p.stderr
    assert not out.exists()

