"""`denpex watch` on real corpus logs written by real processes while it runs: growth, rotation, truncation,
new per-rank files, --until-exit, --on-finding, Ctrl-C, bad input. Timeouts are generous; the assertions are
about what is printed and reported, not how fast."""

from __future__ import annotations

import gzip
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import CORPUS, REPO

KEYERROR = CORPUS / "generated" / "gen-dist-rank2-keyerror" / "log.txt"
KEYERROR_RANKS = CORPUS / "generated" / "gen-dist-rank2-keyerror-logdir" / "ranks"
WARNING_ONLY = CORPUS / "generated" / "gen-dynamo-graph-breaks-item-nonfatal" / "log.txt"
DECISIVE = "[rank2]: KeyError: 'sample_02_00003'"
DENPEX = [sys.executable, "-m", "denpex"]
TIMEOUT = 120

# Copies a log line by line, flushing each; waits for the file GO (if named) before writing past the line
# that holds STOP, so the test can see the watch report the finding while the log is still incomplete.
WRITER = r"""
import os, sys, time
src, dst, stop, go = sys.argv[1:5]
lines = open(src, "rb").read().splitlines(keepends=True)
with open(dst, "ab") as out:
    for line in lines:
        out.write(line)
        out.flush()
        time.sleep(0.01)
        if stop and stop.encode() in line:
            while not os.path.exists(go):
                time.sleep(0.05)
"""


def _watch(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([*DENPEX, "watch", *args], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _writer(src: Path, dst: Path, stop: str = "", go: Path | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(src), str(dst), stop, str(go or "")])


def _diagnosed(path: Path) -> dict:
    done = subprocess.run([*DENPEX, "diagnose", str(path), "--format", "json"], cwd=REPO, capture_output=True,
                          text=True, timeout=TIMEOUT)
    return json.loads(done.stdout)


def _root(report: dict) -> tuple:
    root = report["root_cause"]
    return (report["verdict"], root["id"], root["rank"], root["evidence"]["line"], root["evidence"]["text"])


def _read_stderr_until(proc: subprocess.Popen[str], needle: str, timeout: float = TIMEOUT) -> list[str]:
    """Lines of the watch's stderr up to the first that holds `needle` (the watch keeps running)."""
    assert proc.stderr is not None
    seen: list[str] = []
    sel = selectors.DefaultSelector()
    sel.register(proc.stderr, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if sel.select(timeout=1.0):
            line = proc.stderr.readline()
            if not line:
                break
            seen.append(line)
            if needle in line:
                return seen
    raise AssertionError(f"{needle!r} never printed; stderr so far: {seen}")


def test_finding_while_the_log_grows_and_final_report_equals_diagnose(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.touch()
    go = tmp_path / "go"
    watch = _watch(str(log), "--idle", "2", "--format", "json")
    writer = _writer(KEYERROR, log, stop=DECISIVE, go=go)
    try:
        seen = _read_stderr_until(watch, "finding:")
        # the finding came while the writer was held after the decisive line: the log is not complete yet
        assert log.stat().st_size < KEYERROR.stat().st_size
        assert writer.poll() is None
        assert "finding: rank 2: uncaught-user-exception" in seen[-1] and DECISIVE in seen[-1]
        go.touch()
        writer.wait(TIMEOUT)
        out, err = watch.communicate(timeout=TIMEOUT)
    finally:
        go.touch()
        writer.kill()
        watch.kill()
    assert watch.returncode == 1, err
    report = json.loads(out)
    assert log.read_bytes() == KEYERROR.read_bytes()
    want = _diagnosed(log)
    assert _root(report) == _root(want)
    assert report["root_cause"]["evidence"]["text"] == DECISIVE
    assert report["lines_read"] == want["lines_read"]
    assert report["findings"] == want["findings"]


def _first_finding_then(tmp_path: Path, change: str) -> tuple[dict, str, Path]:
    """A warning-only log is watched; once its finding is printed the log is rotated or truncated and the
    KeyError log written in its place."""
    log = tmp_path / "train.log"
    log.write_bytes(WARNING_ONLY.read_bytes())
    watch = _watch(str(log), "--idle", "2", "--format", "json")
    try:
        seen = _read_stderr_until(watch, "finding:")
        assert "graph-break-item" in seen[-1]
        if change == "rotate":
            log.rename(tmp_path / "train.log.1")
            log.write_bytes(b"")
        else:
            with open(log, "r+b") as handle:
                handle.truncate(0)
        writer = _writer(KEYERROR, log)
        writer.wait(TIMEOUT)
        out, err = watch.communicate(timeout=TIMEOUT)
    finally:
        watch.kill()
    assert watch.returncode == 1, err
    return json.loads(out), "".join(seen) + err, log


def test_rotation_reads_the_new_file_and_updates_the_root_cause(tmp_path: Path) -> None:
    report, err, log = _first_finding_then(tmp_path, "rotate")
    assert "train.log was replaced (rotated)" in err
    assert "update: root cause now uncaught-user-exception on rank 2 (was graph-break-item on rank ?)" in err
    assert _root(report) == _root(_diagnosed(log))
    assert report["lines_read"] == len(WARNING_ONLY.read_bytes().splitlines()) + len(KEYERROR.read_bytes().splitlines())
    assert any(f["id"] == "graph-break-item" for f in report["findings"])  # the rotated-away lines count
    assert any("rotated or truncated" in note for note in report["notes"])


def test_truncation_reads_the_file_again_from_its_start(tmp_path: Path) -> None:
    report, err, log = _first_finding_then(tmp_path, "truncate")
    assert "train.log was truncated" in err
    assert "update: root cause now uncaught-user-exception on rank 2" in err
    assert _root(report) == _root(_diagnosed(log))


def test_new_rank_files_appearing_in_a_watched_folder(tmp_path: Path) -> None:
    ranks = tmp_path / "ranks"
    ranks.mkdir()
    (ranks / ".hidden").write_text("not a log\n")
    watch = _watch(str(ranks), "--idle", "2", "--format", "json")
    try:
        time.sleep(0.5)  # some files appear after the watch started, some later still
        writers = []
        for source in sorted(KEYERROR_RANKS.iterdir()):
            writers.append(_writer(source, ranks / source.name))
            time.sleep(0.1)
        for writer in writers:
            writer.wait(TIMEOUT)
        out, err = watch.communicate(timeout=TIMEOUT)
    finally:
        watch.kill()
    assert watch.returncode == 1, err
    assert "ranks/rank2_stderr.log appeared; following it" in err
    # earlier files can point elsewhere first (a rank that stopped logging); rank 2's KeyError settles it
    assert ("finding: rank 2: uncaught-user-exception" in err
            or "update: root cause now uncaught-user-exception on rank 2" in err)
    report = json.loads(out)
    want = _diagnosed(ranks)
    assert _root(report)[:3] == _root(want)[:3] == ("failure", "uncaught-user-exception", 2)
    assert report["root_cause"]["evidence"]["file"] == want["root_cause"]["evidence"]["file"]
    assert report["root_cause"]["evidence"]["line"] == want["root_cause"]["evidence"]["line"]
    assert sorted(report["inputs"]) == sorted(want["inputs"])


def test_until_exit_reads_what_is_left_including_a_last_line_without_newline(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    body = KEYERROR.read_bytes().rstrip(b"\n")
    log.touch()
    job = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "data = open(sys.argv[1], 'rb').read()\n"
        "out = open(sys.argv[2], 'ab')\n"
        "time.sleep(1)\n"
        "out.write(data); out.flush(); time.sleep(0.5)\n"
    ), "/dev/stdin", str(log)], stdin=subprocess.PIPE)
    assert job.stdin is not None
    job.stdin.write(body)
    job.stdin.close()
    watch = _watch(str(log), "--until-exit", str(job.pid), "--format", "json")
    try:
        out, err = watch.communicate(timeout=TIMEOUT)
    finally:
        job.kill()
        watch.kill()
    assert watch.returncode == 1, err
    report = json.loads(out)
    assert report["lines_read"] == _diagnosed(log)["lines_read"] == len(body.splitlines())
    assert _root(report) == _root(_diagnosed(log))


def test_on_finding_gets_the_report_as_json_and_its_failure_does_not_stop_the_watch(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(KEYERROR.read_bytes())
    got = tmp_path / "got.json"
    hook = f"{sys.executable} -c \"import sys; open(sys.argv[1], 'w').write(sys.stdin.read())\" {got}"
    done = subprocess.run([*DENPEX, "watch", str(log), "--idle", "1", "--format", "json", "--on-finding", hook],
                          cwd=REPO, capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 1, done.stderr
    sent = json.loads(got.read_text())
    assert _root(sent) == _root(json.loads(done.stdout))

    failing = subprocess.run([*DENPEX, "watch", str(log), "--idle", "1", "--on-finding", "false"], cwd=REPO,
                             capture_output=True, text=True, timeout=TIMEOUT)
    assert failing.returncode == 1
    assert "--on-finding: false exited with status 1" in failing.stderr
    assert "finding: rank 2" in failing.stdout and "KeyError" in failing.stdout  # the report still came

    missing = subprocess.run([*DENPEX, "watch", str(log), "--idle", "1", "--format", "json",
                              "--on-finding", "no-such-command-denpex-test"], cwd=REPO, capture_output=True,
                             text=True, timeout=TIMEOUT)
    assert missing.returncode == 1
    assert "--on-finding: no-such-command-denpex-test: command not found" in missing.stderr
    assert json.loads(missing.stdout)["root_cause"]["id"] == "uncaught-user-exception"


def test_ctrl_c_ends_the_watch_with_the_final_report(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(KEYERROR.read_bytes())
    watch = _watch(str(log), "--format", "markdown")
    try:
        _read_stderr_until(watch, "finding:")
        watch.send_signal(signal.SIGINT)
        out, err = watch.communicate(timeout=TIMEOUT)
    finally:
        watch.kill()
    assert watch.returncode == 1, err
    assert "Traceback" not in err
    assert "uncaught-user-exception" in out and "KeyError" in out


def test_control_characters_in_the_log_never_reach_the_terminal(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    hostile = KEYERROR.read_bytes().replace(b"KeyError: 'sample_02_00003'",
                                            b"KeyError: 'sample\x07\x08\xc2\x9b2J'")
    log.write_bytes(hostile)
    done = subprocess.run([*DENPEX, "watch", str(log), "--idle", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 1, done.stderr
    assert "finding: rank 2" in done.stdout
    assert not any(c in done.stdout for c in "\x07\x08\x9b\x1b")
    assert "sample\\x07\\x08\\x9b2J" in done.stdout.splitlines()[0]


def test_a_missing_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope" / "train.log"
    done = subprocess.run([*DENPEX, "watch", str(missing), "--idle", "1"], cwd=REPO, capture_output=True,
                          text=True, timeout=TIMEOUT)
    assert done.returncode == 2
    assert done.stderr == f"denpex: error: no such file or directory: {missing}\n"
    assert done.stdout == ""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    done = subprocess.run([*DENPEX, "watch", str(fifo), "--idle", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not a regular file or folder" in done.stderr
    packed = tmp_path / "train.log.gz"
    packed.write_bytes(gzip.compress(KEYERROR.read_bytes()))
    done = subprocess.run([*DENPEX, "watch", str(packed), "--idle", "1"], cwd=REPO, capture_output=True, text=True,
                          timeout=TIMEOUT)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "a compressed file does not grow" in done.stderr


def test_a_root_cause_resting_on_silence_waits_for_the_files_to_settle():
    # while per-rank files still grow, the rank that looks silent may be writing its traceback: a decision that
    # rests on silence is held until every file has been idle a while; one on a rank's own line is shown at once
    from denpex.live.watch import SILENCE_SETTLE_S, ready_to_show
    from denpex.model import Evidence, Finding, Role

    def root(kind: str) -> Finding:
        return Finding(entry_id="rank-died-silently", category="mem.host_oom", title="t", role=Role.CAUSE,
                       fatal=True, evidence=Evidence("r2.log", 3, "step 3", 2, None, 3), rank_evidence=kind)

    assert not ready_to_show(root("silent"), idle_for=0.2)
    assert ready_to_show(root("silent"), idle_for=SILENCE_SETTLE_S + 0.1)
    assert not ready_to_show(root("absent_from_timeouts"), idle_for=0.0)
    assert ready_to_show(root("own_output"), idle_for=0.0)
