"""Follow growing log files and folders like `tail -F`: complete new lines as they are written.

Why polling (os.stat: device, inode, size) and not inotify/kqueue: it is portable (Linux, macOS, network and
container file systems where inotify never fires), needs no dependency, and at the default 0.2 s period it
costs one stat per file per period. The latency it adds (at most one period) is far below what a finding
needs to be useful, while a job's ranks keep writing for seconds after the first failure.

What it follows:
  * a file that grows: only complete lines (ended by LF) are handed out; a partial last line is held until
    its newline comes, or until the end (`drain(final=True)`);
  * a file that is rotated (renamed away and recreated): the old file's open handle is read to its end first,
    then the new file from its start, as `tail -F` does;
  * a file that is truncated (copytruncate): read again from its start;
  * a folder: log files that appear in it (or below it) are followed from their start; a file renamed inside
    a watched folder (rotation to `train.log.1`) is the same inode and is not read twice.
This module knows nothing of diagnosis: it hands out bytes.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from denpex.errors import DenpexInputError
from denpex.ingest.sources import COMPRESSED_SUFFIXES, LOG_SUFFIXES, rank_from_path, sniff_compression

READ_BYTES = 8 << 20  # read at most this much of one file per poll, so that other files and decisions go on
MAX_PENDING_BYTES = 4 << 20  # a "line" longer than this without a newline is handed out as it is


@dataclass(slots=True)
class Event:
    """Something worth telling the user about a followed file (rotated, truncated, appeared)."""

    name: str
    what: str


@dataclass
class FollowedFile:
    """One followed path: its open handle, how far it was read, and the unfinished last line."""

    path: Path
    name: str
    rank_hint: int | None
    handle: BinaryIO | None = None
    ident: tuple[int, int] | None = None  # (st_dev, st_ino) of the open handle
    offset: int = 0
    pending: bytearray = field(default_factory=bytearray)
    last_growth: float = field(default_factory=time.monotonic)
    generation: int = 0  # how many times it was rotated or truncated: line numbers start again

    def _open(self) -> bool:
        try:
            handle = open(self.path, "rb")  # noqa: SIM115 - kept open across polls, closed in close()
            info = os.fstat(handle.fileno())
        except OSError:
            return False
        self.handle, self.ident, self.offset = handle, (info.st_dev, info.st_ino), 0
        return True

    def _read_available(self, lines: list[bytes], final: bool) -> bool:
        """Read what the open handle has past `offset`; complete lines go to `lines`. True if it grew."""
        assert self.handle is not None
        grew = False
        budget = READ_BYTES if not final else 1 << 62  # the last read takes everything that is left
        while budget > 0:
            try:
                self.handle.seek(self.offset)
                data = self.handle.read(min(1 << 20, budget))
            except OSError:
                break
            if not data:
                break
            grew = True
            budget -= len(data)
            self.offset += len(data)
            self._split(data, lines)
        if final and self.pending:
            lines.append(bytes(self.pending))
            self.pending.clear()
        if grew:
            self.last_growth = time.monotonic()
        return grew

    def _split(self, data: bytes, lines: list[bytes]) -> None:
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self.pending:
                self.pending += data[start:end]
                lines.append(bytes(self.pending))
                self.pending.clear()
            else:
                lines.append(data[start:end])
            start = end + 1
        self.pending += data[start:]
        if len(self.pending) > MAX_PENDING_BYTES:
            lines.append(bytes(self.pending))
            self.pending.clear()

    def poll(self, events: list[Event], final: bool = False) -> list[bytes]:
        """New complete lines (all that is left when `final`); rotation and truncation are noted in `events`."""
        lines: list[bytes] = []
        if self.handle is None and not self._open():
            return lines
        try:
            info = os.stat(self.path)
            current: tuple[int, int] | None = (info.st_dev, info.st_ino)
            size = info.st_size
        except OSError:
            current, size = None, 0  # renamed away and not recreated yet: keep reading the old handle
        if current is not None and current != self.ident:
            # rotated: finish the old file through its handle, then start the new one from its beginning
            self._read_available(lines, final=True)
            self.close()
            self.generation += 1
            events.append(Event(self.name, "was replaced (rotated); following the new file from its start"))
            if self._open():
                self._read_available(lines, final)
            return lines
        if current is not None and size < self.offset:
            if self.pending:  # what was written before the cut
                lines.append(bytes(self.pending))
                self.pending.clear()
            self.offset = 0
            self.generation += 1
            events.append(Event(self.name, "was truncated; reading it again from its start"))
        self._read_available(lines, final)
        return lines

    def close(self) -> None:
        if self.handle is not None:
            with contextlib.suppress(OSError):
                self.handle.close()
        self.handle = None


def _looks_like_log(path: Path) -> bool:
    """The names a folder's logs have (as `denpex diagnose DIR` reads them), plus rotated `x.log.1`."""
    name = path.name
    if name.startswith(".") or name == "label.json":
        return False
    suffixes = [s.lower() for s in path.suffixes]
    while suffixes and suffixes[-1][1:].isdigit():  # train.log.1
        suffixes.pop()
    if suffixes and suffixes[-1] in COMPRESSED_SUFFIXES:
        return False  # a compressed file does not grow line by line
    last = suffixes[-1] if suffixes else ""
    return last in LOG_SUFFIXES or name.lower() == "error.json"


def _compressed(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except OSError:
        return False
    return sniff_compression(head) is not None or path.suffix.lower() in COMPRESSED_SUFFIXES


class Follower:
    """The files named and the log files in the folders named, followed together."""

    def __init__(self, inputs: list[str]) -> None:
        if not inputs:
            raise DenpexInputError("no input: give log files or folders to watch")
        self.files: dict[str, FollowedFile] = {}
        self.folders: list[tuple[Path, str]] = []
        self.started = time.monotonic()
        self.seen: set[tuple[int, int]] = set()  # every inode followed so far, rotated-away ones included
        self._skipped: set[str] = set()  # names in the folders that are a followed file renamed
        for item in inputs:
            path = Path(item)
            try:
                info = path.stat()
            except FileNotFoundError:
                raise DenpexInputError(f"no such file or directory: {item}") from None
            except OSError as exc:
                raise DenpexInputError(f"cannot read {item}: {exc.strerror or exc}") from None
            if stat.S_ISDIR(info.st_mode):
                self.folders.append((path, item))
            elif stat.S_ISREG(info.st_mode):
                if not os.access(path, os.R_OK):
                    raise DenpexInputError(f"permission denied: {item}")
                if _compressed(path):
                    raise DenpexInputError(f"cannot watch {item}: a compressed file does not grow line by line "
                                           "(use `denpex diagnose`)")
                self._add(path, item)
            else:
                raise DenpexInputError(f"cannot watch {item}: not a regular file or folder (a pipe is read "
                                       "once: use `denpex diagnose -` or `denpex run`)")
        self._discover(None)

    def _add(self, path: Path, name: str) -> FollowedFile:
        followed = FollowedFile(path, name, rank_from_path(name))
        self.files[name] = followed
        return followed

    def _discover(self, events: list[Event] | None) -> None:
        """Log files that appeared in the watched folders; one that is a followed file renamed (rotated to
        `train.log.1`) is skipped for good, its content was or is being read through the old handle. (An inode
        the file system reuses for a new file after a deletion would be skipped too: rare, and said here.)"""
        self.seen.update(f.ident for f in self.files.values() if f.ident is not None)
        for root, display in self.folders:
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = sorted(d for d in dirnames if not d.startswith(".")
                                     and not os.path.islink(os.path.join(dirpath, d)))
                for filename in sorted(filenames):
                    path = Path(dirpath) / filename
                    name = os.path.join(display, os.path.relpath(path, root))
                    if name in self.files or name in self._skipped or not _looks_like_log(path):
                        continue
                    try:
                        info = path.stat()
                    except OSError:
                        continue
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    if (info.st_dev, info.st_ino) in self.seen:
                        self._skipped.add(name)
                        continue
                    self.seen.add((info.st_dev, info.st_ino))
                    self._add(path, name)
                    if events is not None:
                        events.append(Event(name, "appeared; following it"))

    def poll(self, final: bool = False) -> tuple[list[tuple[FollowedFile, list[bytes]]], list[Event]]:
        """New complete lines of every file, file by file, and what happened to the files."""
        events: list[Event] = []
        if self.folders:
            self._discover(events)
        batches = []
        for followed in self.files.values():
            lines = followed.poll(events, final)
            if lines:
                batches.append((followed, lines))
        return batches, events

    def idle_for(self) -> float:
        """Seconds since any followed file last grew (since the start when none has)."""
        last = max((f.last_growth for f in self.files.values()), default=self.started)
        return time.monotonic() - max(last, self.started)

    def __iter__(self) -> Iterator[FollowedFile]:
        return iter(self.files.values())

    def close(self) -> None:
        for followed in self.files.values():
            followed.close()
