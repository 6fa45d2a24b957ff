"""`denpex run` passes SIGINT, SIGTERM, SIGHUP and SIGQUIT on to its command exactly once (#14 item 14).

Sent to denpex's pid alone (`kill -INT`), a signal must reach the command; typed on a terminal (Ctrl-C), the
terminal already sends it to the command, and a second copy would make it skip its cleanup. Both are run for
real: a subprocess for the first, a pseudo-terminal for the second.
"""

from __future__ import annotations

import contextlib
import os
import pty
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO

# The command counts each signal it gets, says so, and leaves a second later (so a second copy would show).
CHILD = """
import signal, sys, time
got = []
def on(signum, frame):
    got.append(time.monotonic())
    print(f"child got {signal.Signals(signum).name} #{len(got)}", flush=True)
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
    signal.signal(s, on)
print("child started", flush=True)
for i in range(1200):
    if got and time.monotonic() - got[0] > 1.5:
        sys.exit(3)
    print(f"step {i}", flush=True)
    time.sleep(0.05)
"""


def wait_for(path: Path, text: str, limit: float = 120) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.1)
    raise AssertionError(f"{text!r} never appeared in {path}")


@pytest.mark.parametrize("name", ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"])
def test_a_signal_sent_to_denpex_alone_reaches_the_command_once(tmp_path, name):
    log = tmp_path / "run.log"
    proc = subprocess.Popen([sys.executable, "-m", "denpex", "run", "--log", os.fspath(log), "--",
                             sys.executable, "-c", CHILD], cwd=REPO, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(log, "step 3")
        proc.send_signal(getattr(signal, name))
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    text = log.read_text()
    assert f"child got {name} #1" in text and "#2" not in text, text[-500:]
    assert "child started" in text and "step 3" in text  # the partial log is kept
    assert proc.returncode == 3, (proc.returncode, err.decode()[-500:])
    assert b"Traceback" not in err


def test_ctrl_c_on_a_terminal_reaches_the_command_once(tmp_path):
    log = tmp_path / "run.log"
    pid, master = pty.fork()
    if pid == 0:  # pragma: no cover - the child: denpex on a terminal, in its foreground group
        os.chdir(REPO)
        os.execv(sys.executable, [sys.executable, "-m", "denpex", "run", "--log", os.fspath(log), "--",
                                  sys.executable, "-c", CHILD])
    try:
        wait_for(log, "step 3")
        os.write(master, b"\x03")  # the terminal sends SIGINT to denpex and the command alike
        deadline = time.monotonic() + 120
        status = None
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError):
                os.read(master, 65536)  # keep the terminal drained
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
        assert status is not None and os.WIFEXITED(status), "denpex did not finish"
    finally:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass
        os.close(master)
    text = log.read_text()
    assert "child got SIGINT #1" in text and "#2" not in text, text[-500:]
    assert os.waitstatus_to_exitcode(status) == 3


def test_the_log_keeps_up_with_a_command_that_is_still_running(tmp_path):
    """`tail -f` on `denpex run --log` sees each line as it comes, not when a buffer fills or the command ends."""
    log = tmp_path / "run.log"
    child = "import sys, time\nprint('ready', flush=True)\nsys.stdin.read()\n"  # then waits until killed
    proc = subprocess.Popen([sys.executable, "-m", "denpex", "run", "--log", os.fspath(log), "--",
                             sys.executable, "-c", child], cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(log, "ready")  # the 6-byte line alone is on disk while the command still runs
        assert proc.poll() is None
    finally:
        proc.kill()
        proc.communicate(timeout=120)
