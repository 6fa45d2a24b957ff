"""Run a command, stream its output to the terminal and a log file, and diagnose it line by line while it runs.

The command's stdout and stderr stay separate on the terminal (bytes are passed through as they arrive, so
progress bars keep working) and are interleaved line by line, in arrival order, in the log. Every complete
line is framed like `denpex.ingest.lines` frames a file (ANSI colours and CRs dropped, launcher/glog headers
parsed) and fed to the streaming `Collector`; the first finding of each catalog entry is reported at once.

Two things differ from running the command bare, both documented in `denpex run --help`:
  * PYTHONUNBUFFERED=1 is set (unless already set) so that Python prints line by line into the pipe as it
    would on a terminal; otherwise a flag could only appear when the program exits;
  * stdin is inherited, but stdout/stderr are pipes: a program that checks isatty() sees no terminal.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

from denpex.analyze.collect import Collector
from denpex.analyze.decide import decide
from denpex.analyze.line_feed import LineFeed
from denpex.analyze.process_exit import ProcessExit, account_for_exit
from denpex.catalog import Catalog, load
from denpex.errors import DenpexInputError
from denpex.ingest.lines import StreamFraming
from denpex.model import Diagnosis, Line, Role

MAX_LINE_BYTES = 4 << 20
EOF_GRACE_S = 5.0  # after the command exits, how long its background children may keep the pipes open
SIGNAL_POLL_S = 0.2  # how soon a signal sent to denpex reaches the command
_FLAGGED_ROLES = (Role.CAUSE, Role.SYMPTOM, Role.WARNING)
_SAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(slots=True)
class Flag:
    """A finding reported while the command was still running."""

    entry_id: str
    title: str
    role: str
    fatal: bool
    line: int
    text: str
    wall: float  # time.time() when denpex saw the line
    elapsed: float  # seconds since the command started


@dataclass
class RunResult:
    argv: list[str]
    log_path: Path
    meta_path: Path
    returncode: int | None  # Popen's: negative for a signal; None when the command did not start
    exit_code: int  # what `denpex run` exits with: the command's code, 128+N for signal N, 126/127 if not started
    started: float
    ended: float
    lines: int
    flags: list[Flag] = field(default_factory=list)
    diagnosis: Diagnosis | None = None
    error: str | None = None  # why the command did not start
    timed_out: bool = False

    @property
    def duration(self) -> float:
        return self.ended - self.started

    @property
    def passed(self) -> bool:
        return self.exit_code == 0


# -- where logs go ----------------------------------------------------------------------------------------------
def runs_dir(env: Mapping[str, str] | None = None) -> Path:
    """$DENPEX_RUNS_DIR, else $XDG_STATE_HOME/denpex/runs (~/.local/state/denpex/runs), else when the home
    cannot be written $TMPDIR/denpex-runs-<uid>. Logs hold the job's output (paths, tokens): private folders."""
    env = os.environ if env is None else env
    if env.get("DENPEX_RUNS_DIR"):
        return Path(env["DENPEX_RUNS_DIR"]).expanduser()
    state = Path(env.get("XDG_STATE_HOME") or Path("~/.local/state").expanduser()) / "denpex" / "runs"
    existing = next((p for p in (state, *state.parents) if p.exists()), None)
    if existing is not None and os.access(existing, os.W_OK | os.X_OK):
        return state
    import tempfile

    uid = str(os.getuid()) if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"denpex-runs-{uid}"


def private_dir(directory: Path) -> Path:
    """Create the folder 0700, and refuse one that someone else owns or that others may write to."""
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = directory.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        raise DenpexInputError(f"refusing to write run logs into {directory}: it belongs to another user")
    if info.st_mode & 0o022:
        raise DenpexInputError(f"refusing to write run logs into {directory}: others can write to it "
                               "(use --log or DENPEX_RUNS_DIR)")
    return directory


def _private_file(path: Path) -> int:
    """A new log file readable by its owner only (it holds the job's output)."""
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)


def stamp_name(argv: Sequence[str], kind: str = "run") -> str:
    """`20261129-154512-123-run-train.py`: sortable, says what ran."""
    args = list(argv)
    prog = next((Path(a).name for a in args if a.endswith((".py", ".sh"))), None)
    if prog is None and "-m" in args[:-1]:
        prog = args[args.index("-m") + 1]
    prog = prog or (Path(args[0]).name if args else "cmd")
    now = datetime.now()
    return f"{now:%Y%m%d-%H%M%S}-{now.microsecond // 1000:03d}-{kind}-{_SAFE.sub('_', prog)[:40]}"


def new_log_path(argv: Sequence[str], directory: Path | None = None, kind: str = "run") -> Path:
    directory = private_dir(directory or runs_dir())
    return directory / f"{stamp_name(argv, kind)}.log"


def meta_path_for(log_path: Path) -> Path:
    return log_path.with_name(log_path.name + ".json")


# -- the live diagnosis -----------------------------------------------------------------------------------------
class LiveDiagnoser:
    """Lines in, flags out, a Diagnosis at the end: the streaming half of `denpex.api.diagnose`."""

    def __init__(self, log_name: str, catalog: Catalog | None = None, context: int = 100) -> None:
        self.catalog = catalog or load()
        self.context = context
        self.collector = Collector(self.catalog, context=context)
        self.lines = LineFeed(self.collector, log_name)
        self.framing = StreamFraming(log_name)
        self.log_name = log_name
        self.number = 0
        self._seen_candidates = 0
        self._flagged: set[str] = set()
        self.start = time.time()
        self.last_line: Line | None = None

    def feed(self, raw: bytes) -> list[Flag]:
        """Frame one line as `denpex diagnose` frames a saved log and feed it; return new findings. The first lines
        wait until the output's columns are decided (ingest.lines.StreamFraming) or the output pauses (settle)."""
        self.number += 1
        return self._analyse(self.framing.push(raw, self.number, self.number))

    def settle(self, ended: bool = False) -> list[Flag]:
        """Lines waited long enough for the column decision (or the output `ended`): frame and feed the lines still
        held; return new findings."""
        return self._analyse(self.framing.flush() if ended else self.framing.settle())

    def _analyse(self, lines: list[tuple[bytes, Line]]) -> list[Flag]:
        if not lines:
            return []
        if self.framing.restarted:  # a column found after early lines were read without it: read them all again
            self.collector = Collector(self.catalog, context=self.context)
            self.lines = LineFeed(self.collector, self.log_name)
            self._seen_candidates = 0
        for raw, line in lines:
            if line.text.strip():
                self.last_line = line
            self.lines.feed(raw, line)
        candidates = self.collector.result.candidates
        if len(candidates) == self._seen_candidates:
            return []
        fresh = candidates[self._seen_candidates:]
        self._seen_candidates = len(candidates)
        now = time.time()
        flags = []
        for cand in fresh:
            f = cand.finding
            if f.role not in _FLAGGED_ROLES or f.entry_id in self._flagged:
                continue
            self._flagged.add(f.entry_id)
            flags.append(Flag(f.entry_id, f.title, f.role.value, f.fatal, f.evidence.line, f.evidence.text, now,
                              now - self.start))
        return flags

    def finish(self, ended: ProcessExit | None = None, timeout_s: float | None = None) -> Diagnosis:
        """The diagnosis of the output; a failed exit with no failure in the output becomes the root cause."""
        self.settle(ended=True)
        self.lines.close()
        collection = self.collector.finish()
        diagnosis = decide(collection, self.catalog, [self.log_name])
        if ended is not None:
            diagnosis = account_for_exit(diagnosis, self.catalog, ended, self.last_line, timeout_s)
        return diagnosis


# -- running ----------------------------------------------------------------------------------------------------
def _binary_out(stream: object) -> Callable[[bytes], None]:
    buffer = getattr(stream, "buffer", None)
    if buffer is not None:
        def write(data: bytes) -> None:
            buffer.write(data)
            buffer.flush()
    else:
        def write(data: bytes) -> None:
            stream.write(data.decode("utf-8", "replace"))  # type: ignore[attr-defined]
            stream.flush()  # type: ignore[attr-defined]
    return write


# Signals that mean "stop" to a job: each is passed on to the command, whose partial log is kept.
_FORWARDED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT")
                   if hasattr(signal, name))
_SI_KERNEL = 0x80  # si_code of a signal the kernel sent: Ctrl-C, Ctrl-\\ or a hangup from the terminal


class _SignalRelay:
    """Pass SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to denpex on to the command, exactly once.

    Why siginfo: Ctrl-C on a terminal reaches every process of the foreground group, the command included,
    so forwarding it too would deliver it twice (a second Ctrl-C makes torchrun and Python skip cleanup);
    `kill -INT <denpex pid>` reaches denpex alone. The signals are blocked and collected with
    sigtimedwait, whose si_code tells the two apart. Blocking starts after the command is spawned, so the
    command does not inherit the mask."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.active = threading.current_thread() is threading.main_thread() and hasattr(signal, "sigtimedwait")

    def __enter__(self) -> _SignalRelay:
        if self.active:
            signal.pthread_sigmask(signal.SIG_BLOCK, _FORWARDED)
        return self

    def poll(self) -> None:
        """Forward what arrived since the last call."""
        while self.active:
            info = signal.sigtimedwait(_FORWARDED, 0)
            if info is None:
                return
            if info.si_code == _SI_KERNEL and self._shares_our_group():
                continue  # the terminal already sent it to the command
            with contextlib.suppress(ProcessLookupError, OSError):
                self.proc.send_signal(info.si_signo)

    def _shares_our_group(self) -> bool:
        try:
            return os.getpgid(self.proc.pid) == os.getpgrp()
        except OSError:
            return True

    def __exit__(self, *_: object) -> None:
        if self.active:
            self.poll()
            signal.pthread_sigmask(signal.SIG_UNBLOCK, _FORWARDED)


def run(
    argv: Sequence[str],
    *,
    log_path: Path,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    echo: bool = True,
    on_flag: Callable[[Flag], None] | None = None,
    timeout: float | None = None,
    catalog: Catalog | None = None,
    unbuffered: bool = True,
    meta: Mapping[str, object] | None = None,
) -> RunResult:
    argv = list(argv)
    child_env = dict(os.environ if env is None else env)
    if unbuffered:
        child_env.setdefault("PYTHONUNBUFFERED", "1")
    log_path.parent.mkdir(parents=True, exist_ok=True)
    live = LiveDiagnoser(str(log_path), catalog)
    result = RunResult(argv, log_path, meta_path_for(log_path), None, 0, time.time(), 0.0, 0)
    with os.fdopen(_private_file(log_path), "wb") as log:
        try:
            proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env, cwd=cwd,
                                    bufsize=0)
        except FileNotFoundError:
            result.error, result.exit_code = f"{argv[0]}: command not found", 127
        except PermissionError as exc:
            result.error, result.exit_code = f"{argv[0]}: cannot execute ({exc.strerror})", 126
        except OSError as exc:
            result.error, result.exit_code = f"{argv[0]}: cannot run ({exc.strerror or exc})", 126
        if result.error is not None:
            result.ended = time.time()
            result.diagnosis = live.finish()
            _write_meta(result, child_env, env, cwd, meta)
            return result
        live.start = result.started
        outs = {proc.stdout: _binary_out(sys.stdout), proc.stderr: _binary_out(sys.stderr)}
        pending: dict[object, list[bytes]] = {proc.stdout: [], proc.stderr: []}

        def report(flags: list[Flag]) -> None:
            for flag in flags:
                result.flags.append(flag)
                if on_flag is not None:
                    on_flag(flag)

        def emit(parts: list[bytes]) -> None:
            line = b"".join(parts)
            log.write(line + b"\n")
            report(live.feed(line[:MAX_LINE_BYTES]))

        deadline = None if timeout is None else time.monotonic() + timeout
        sel = selectors.DefaultSelector()
        for pipe in (proc.stdout, proc.stderr):
            sel.register(pipe, selectors.EVENT_READ)  # type: ignore[arg-type]
        with _SignalRelay(proc) as relay:
            open_pipes = 2
            exited_at: float | None = None
            while open_pipes:
                events = sel.select(timeout=SIGNAL_POLL_S)
                relay.poll()
                now = time.monotonic()
                if deadline is not None and now >= deadline and not result.timed_out:
                    result.timed_out = True
                    _stop(proc)
                if live.framing.due():
                    report(live.settle())  # lines held for the column decision too long: framed, flags not held back
                if not events and proc.poll() is not None:
                    # the command is gone; a background child of it may still hold the pipes open
                    exited_at = exited_at or now
                    if now - exited_at > EOF_GRACE_S:
                        break
                for key, _ in events:
                    pipe = key.fileobj
                    chunk = os.read(key.fd, 65536)
                    if not chunk:
                        sel.unregister(pipe)
                        open_pipes -= 1
                        continue
                    if echo:
                        try:
                            outs[pipe](chunk)  # type: ignore[index]
                        except (BrokenPipeError, ValueError, OSError):
                            echo = False  # our terminal went away; the command and the log go on
                    parts = chunk.split(b"\n")
                    buf = pending[pipe]
                    for piece in parts[:-1]:
                        buf.append(piece)
                        emit(buf)
                        buf.clear()
                    if parts[-1]:
                        buf.append(parts[-1])
                        if sum(map(len, buf)) > MAX_LINE_BYTES:
                            emit(buf)
                            buf.clear()
                # the log on disk keeps up with the command: `tail -f` sees each line as it comes, and a denpex
                # killed without warning loses none of what was read
                log.flush()
            for buf in pending.values():
                if buf:
                    emit(buf)
            report(live.settle(ended=True))
            proc.wait()
        sel.close()
    result.ended = time.time()
    result.returncode = proc.returncode
    result.exit_code = 128 - proc.returncode if proc.returncode < 0 else proc.returncode
    result.lines = live.number
    result.diagnosis = live.finish(ProcessExit(proc.returncode, result.timed_out), timeout)
    _write_meta(result, child_env, env, cwd, meta)
    return result


def _stop(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, OSError):
        proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, OSError):
            proc.kill()


def _write_meta(result: RunResult, child_env: Mapping[str, str], env: Mapping[str, str] | None, cwd: str | None,
                meta: Mapping[str, object] | None) -> None:
    base = os.environ
    changed = {k: v for k, v in child_env.items() if base.get(k) != v}
    removed = [k for k in base if k not in child_env]
    diag = result.diagnosis
    root = diag.root_cause if diag is not None else None
    data = {
        "command": result.argv,
        "command_line": shlex.join(result.argv),
        "cwd": cwd or os.getcwd(),
        "env_changed": changed,
        "env_removed": removed,
        "started": result.started,
        "ended": result.ended,
        "duration_s": round(result.duration, 3),
        "returncode": result.returncode,
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "error": result.error,
        "lines": result.lines,
        "log": str(result.log_path),
        "flags": [asdict(f) for f in result.flags],
        "verdict": diag.verdict.value if diag is not None else None,
        "root_cause": None if root is None else {"id": root.entry_id, "line": root.evidence.line,
                                                 "text": root.evidence.text},
        **(dict(meta) if meta else {}),
    }
    with contextlib.suppress(OSError), os.fdopen(_private_file(result.meta_path), "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=2, default=str))
