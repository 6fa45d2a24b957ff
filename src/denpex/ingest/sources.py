"""Turn what the user named (files, directories, '-', compressed logs, pasted text) into readable sources.

Sources are opened read-only; nothing is ever written next to the user's logs.
Compression is told by the file's first bytes (so a gzipped `log.txt` or gzipped stdin works too);
a `.gz`/`.zst`/`.bz2`/`.xz` name whose bytes are not that format is reported as corrupt.
"""

from __future__ import annotations

import bz2
import io
import json
import lzma
import os
import re
import stat
import sys
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from denpex.errors import DenpexInputError
from denpex.ingest import error_files, flight_recorder
from denpex.ingest.headers import ANSI
from denpex.ingest.pipelined import Pipelined
from denpex.ingest.reading import Reading
from denpex.ingest.zstd_frames import is_zstd_error

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".bz2": "bzip2", ".xz": "xz"}
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
)
_BZIP2_MAGIC = re.compile(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59")
_FORMAT_NAMES = {"gzip": "gzip", "zstd": "zstd", "bzip2": "bzip2", "xz": "xz"}
# `.jsonl`/`.ndjson`: a logger's JSON-lines records (python-json-logger, structlog), one file per rank
LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".stdout", ".stderr", ".jsonl", ".ndjson", ""}
# Where a rank is read from a path: the file name (rank3_stderr.log, worker_rank-3.log, rank.3.log), a folder
# that is nothing but a rank (rank3/, rank_3/, Open MPI's `mpirun --output-filename DIR`: DIR/1/rank.3/stderr) or
# torchrun --log-dir's attempt_N/<local_rank>/. A rank inside any other folder name
# (gen-dist-rank2-keyerror/log.txt, rank_0_sweep/) says nothing about the file's lines.
_RANK_IN_NAME = re.compile(r"(?:^|[_.\-])rank[_.\-]?(\d+)(?=[_.\-]|$)", re.IGNORECASE)
_RANK_FOLDER = re.compile(r"rank[_.\-]?(\d+)", re.IGNORECASE)
ATTEMPT_FOLDER = re.compile(r"attempt_\d+")  # torchrun --log-dir: attempt_N/<local_rank>/
_SNIFF_BYTES = 8192
# A pipe (stdin, a FIFO, `<(zcat ...)`) is held in memory up to this size, so the fast path can scan it;
# beyond it, it is read as it comes.
PIPE_MEMORY_BYTES = 64 << 20
WRITER_WAIT_NOTICE_S = 1.0
_ANSI_BYTES = re.compile(ANSI.pattern.encode())
_COMPRESSED_READ = 1 << 16  # compressed bytes read at a time
_FEED_SLICE = 1 << 14  # compressed bytes fed to the decompressor at a time: logs compress 10-100x, output stays bounded
_YIELD_BYTES = 1 << 20  # decompressed text handed on at a time


@dataclass(frozen=True, slots=True)
class Source:
    """A readable log: a path (maybe compressed) or in-memory bytes (stdin, pasted text)."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    compression: str | None = None
    rank_hint: int | None = None
    stream: Stream | None = None  # a pipe longer than PIPE_MEMORY_BYTES: read once, as it comes
    # "log"; "flight_recorder" (a dump, never read as text) or "error_file" (torchelastic's error.json)
    kind: str = "log"
    time_hint: float | None = None  # the time of lines that carry none (an error file's timestamp)

    def size_hint(self) -> int:
        """Bytes to read, roughly: compressed files count at an assumed 32x ratio (0 when unknown).

        Logs compress 10-200x (a 145 KB .xz held 32 MB): a low guess would send a big log down the line path."""
        if self.data is not None:
            return len(self.data)
        if self.stream is not None:
            return 0  # unknown and maybe endless: the line path streams it
        try:
            size = os.stat(self.path).st_size if self.path else 0
        except OSError:
            return 0
        return size * 32 if self.compression else size

    def raw(self) -> BinaryIO:
        """The stored bytes (compressed or not) as a binary stream; the caller closes it."""
        if self.data is not None:
            return io.BytesIO(self.data)
        if self.stream is not None:
            return self.stream.take()
        assert self.path is not None
        try:
            return open(self.path, "rb")  # noqa: SIM115 - closed by the caller
        except OSError as exc:
            raise DenpexInputError(f"cannot read {self.name}: {_os_reason(exc)}") from None

    def chunks(self, size: int = 1 << 20, reading: Reading | None = None) -> Iterator[bytes]:
        """Decompressed bytes in chunks. A truncated or corrupt stream raises DenpexInputError, unless
        `reading` is given and some text came out first: then the text read so far is the input, and
        `reading` says where it stopped (a cut-off .gz still holds the failure it recorded)."""
        delivered = 0
        try:
            with self.raw() as handle:
                blocks = _decompressed(handle, self.compression) if self.compression else _blocks(handle, size)
                # a compressed file decompresses on a thread ahead of the scan (a pipe is read as it comes: a
                # stalled writer must not leave a thread behind)
                ahead = Pipelined(blocks) if self.compression and self.path is not None else None
                try:
                    for chunk in ahead if ahead is not None else blocks:
                        delivered += len(chunk)
                        yield chunk
                finally:
                    if ahead is not None:
                        ahead.close()
        except DenpexInputError:
            raise
        except Exception as exc:
            if not isinstance(exc, (OSError, EOFError, lzma.LZMAError, zlib.error)) and not is_zstd_error(exc):
                raise
            reason = _reason(exc, self.compression)
            if reading is None or delivered == 0:
                raise DenpexInputError(f"cannot read {self.name}: {reason}") from None
            reading.stop(reason, delivered)


def _blocks(handle: BinaryIO, size: int) -> Iterator[bytes]:
    while True:
        chunk = handle.read(size)
        if not chunk:
            return
        yield chunk


def _decompressor(kind: str) -> Any:
    if kind == "gzip":
        return zlib.decompressobj(wbits=31)
    if kind == "bzip2":
        return bz2.BZ2Decompressor()
    if kind == "xz":
        return lzma.LZMADecompressor()
    import zstandard

    return zstandard.ZstdDecompressor().decompressobj()


def _decompressed(handle: BinaryIO, kind: str) -> Iterator[bytes]:
    """Decompress incrementally, member after member (`cat a.gz b.gz`), yielding what each block gives: a
    stream cut off or corrupt midway has given its text before the error (EOFError when it just ends).

    A feed that reaches damage raises and loses the text it decoded itself, so the decompressor is fed
    _FEED_SLICE bytes at a time (fed 64 KB at once, a damaged .xz of 75 KB gave no text at all), and its text is
    handed on in blocks of about _YIELD_BYTES, what it had before an error included."""
    obj = _decompressor(kind)
    fed = False  # compressed bytes given to the current member
    ready: list[bytes] = []
    held = 0
    step = _COMPRESSED_READ if kind == "bzip2" else _FEED_SLICE  # bzip2 decodes 900 KB blocks: no gain
    while True:
        data = handle.read(_COMPRESSED_READ)
        if not data:
            break
        padding = False
        for at in range(0, len(data), step):
            piece = data[at:at + step]
            while piece:
                try:
                    out = obj.decompress(piece)
                except Exception:
                    if ready:  # the text before the damage goes out before the error does
                        yield b"".join(ready)
                    raise
                fed = True
                if out:
                    ready.append(out)
                    held += len(out)
                if obj.eof:
                    piece = obj.unused_data
                    obj = _decompressor(kind)
                    fed = False
                    if not piece.strip(b"\x00") and not data[at + step :].strip(b"\x00"):
                        piece, padding = b"", True  # zeros after the last member
                else:
                    piece = b""
            if held >= _YIELD_BYTES:
                yield b"".join(ready)
                ready, held = [], 0
            if padding:
                break
    if ready:
        yield b"".join(ready)
    if fed:
        raise EOFError(f"compressed file ended in the middle of a {kind} stream")


class Stream:
    """A pipe, FIFO or stdin too long to hold: its first bytes (already read, to sniff and check them) and
    the open handle to read the rest from. It can be read once, as pipes can."""

    def __init__(self, head: bytes, handle: BinaryIO) -> None:
        self.head = head
        self._handle: BinaryIO | None = handle

    def take(self) -> BinaryIO:
        """The whole stream, head first; a second reader would see nothing, so it is refused."""
        if self._handle is None:
            raise DenpexInputError("a pipe can be read only once")
        handle, self._handle = self._handle, None
        return _HeadThen(self.head, handle)  # type: ignore[return-value]


class _HeadThen(io.RawIOBase):
    """Bytes already read, then the rest of the handle."""

    def __init__(self, head: bytes, handle: BinaryIO) -> None:
        self._head = memoryview(head)
        self._handle = handle

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        if self._head:
            n = min(len(buffer), len(self._head))
            buffer[:n] = self._head[:n]
            self._head = self._head[n:] if n < len(self._head) else memoryview(b"")  # let the head go
            return n
        data = self._handle.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        try:
            self._handle.close()
        finally:
            super().close()


def rank_from_path(path: str) -> int | None:
    """torchrun --log-dir and per-rank dumps carry the rank in the path (rank3.log, attempt_0/3/stderr.log).

    The part nearest the file wins: `rank3/worker_rank5.log` is rank 5.
    """
    parts = [p for p in path.replace(os.sep, "/").split("/") if p]
    if not parts:
        return None
    found = _RANK_IN_NAME.findall(parts[-1])
    if found:
        return int(found[-1])
    for index in range(len(parts) - 2, -1, -1):
        folder = parts[index]
        whole = _RANK_FOLDER.fullmatch(folder)
        if whole:
            return int(whole.group(1))
        if folder.isdigit() and index > 0 and ATTEMPT_FOLDER.fullmatch(parts[index - 1]):
            return int(folder)
    return None


def sniff_compression(head: bytes) -> str | None:
    """The compression format that a stream's first bytes announce, if any."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    if _BZIP2_MAGIC.match(head):
        return "bzip2"
    return None


def _looks_like_log(path: Path) -> bool:
    suffixes = path.suffixes
    if suffixes and suffixes[-1].lower() in COMPRESSED_SUFFIXES:
        suffixes = suffixes[:-1]
    last = suffixes[-1].lower() if suffixes else ""
    if error_files.named_like_error_file(path) or flight_recorder.named_like_dump(path):
        return True
    if last == ".json" and "flight" in path.name.lower():  # a JSON Flight Recorder dump saved under its own name
        return True
    if last in _JSON_LINES and not (path.suffixes and path.suffixes[-1].lower() in COMPRESSED_SUFFIXES):
        return _logger_records(path)
    return last in LOG_SUFFIXES or re.fullmatch(r"\.\d+", last) is not None


_JSON_LINES = {".jsonl", ".ndjson"}
# keys a logger's JSON record has (python-json-logger, structlog, loguru's serialize, Docker, Fluent Bit); a dataset's
# records (`{"text": ..., "label": ...}`) have none of them
_RECORD_KEYS = {"levelname", "level", "levelno", "severity", "message", "msg", "event", "asctime", "log", "logger"}


def _logger_records(path: Path) -> bool:
    """A JSON-lines file in a folder is a log when its first record is a logger's, not a dataset's."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with open(path, "rb") as handle:
            first = next((line for line in handle.read(1 << 14).split(b"\n") if line.strip()), b"")
        record = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(record, dict) and bool(_RECORD_KEYS & set(record))


def _starts_as_pickle(path: Path) -> bool:
    """A file of any name whose first bytes are a pickle header: a Flight Recorder dump saved under its own name."""
    try:
        if not stat.S_ISREG(path.stat().st_mode):  # never open a FIFO or a device to sniff it: that can block
            return False
        with open(path, "rb") as handle:
            return flight_recorder.is_pickle(handle.read(2))
    except OSError:
        return False


def _os_reason(exc: OSError) -> str:
    return exc.strerror.lower() if exc.strerror else str(exc)


def _stat(path: Path, display: str) -> os.stat_result:
    try:
        return path.stat()
    except FileNotFoundError:
        raise DenpexInputError(f"no such file or directory: {display}") from None
    except NotADirectoryError:
        raise DenpexInputError(f"no such file or directory: {display}") from None
    except PermissionError:
        raise DenpexInputError(f"permission denied: {display}") from None
    except (OSError, ValueError) as exc:
        reason = _os_reason(exc) if isinstance(exc, OSError) else str(exc)
        raise DenpexInputError(f"cannot read {display}: {reason}") from None


def _file_source(path: Path, display: str, info: os.stat_result | None = None) -> Source:
    info = info or _stat(path, display)
    rank = rank_from_path(display)
    if not stat.S_ISREG(info.st_mode):
        # a pipe or device (`<(zcat log.gz)`, a FIFO, /dev/stdin) can be read only once
        return _pipe_source(path, display, rank, fifo=stat.S_ISFIFO(info.st_mode))
    try:
        with open(path, "rb") as handle:
            head = handle.read(64)
    except PermissionError:
        raise DenpexInputError(f"permission denied: {display}") from None
    except OSError as exc:
        raise DenpexInputError(f"cannot read {display}: {_os_reason(exc)}") from None
    kind = _kind(path, head)
    if kind != "log":
        return Source(name=display, path=path, rank_hint=rank, kind=kind)
    compression = sniff_compression(head[:16])
    named = COMPRESSED_SUFFIXES.get(path.suffix.lower())
    if named is not None and compression != named:
        raise DenpexInputError(f"cannot read {display}: not a valid {_FORMAT_NAMES[named]} file")
    return Source(name=display, path=path, compression=compression, rank_hint=rank)


def _kind(path: Path, head: bytes) -> str:
    """A Flight Recorder dump (any pickle, or a file named as one) or an error file is not a text log."""
    if flight_recorder.is_dump(path, head):
        return "flight_recorder"
    if error_files.looks_like_error_file(head) and (
            error_files.named_like_error_file(path) or path.suffix.lower() == ".json"):
        return "error_file"
    return "log"


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # never to a terminal, not even in a file name


def _hex(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"


def _open_waiting(path: Path, display: str) -> BinaryIO:
    """Open a FIFO, saying on stderr when no writer has come after a second (open blocks until one does)."""
    def notice() -> None:
        sys.stderr.write(f"denpex: waiting for a writer on {_CONTROL.sub(_hex, display)} (a named pipe)\n")
        sys.stderr.flush()

    timer = threading.Timer(WRITER_WAIT_NOTICE_S, notice)
    timer.daemon = True
    timer.start()
    try:
        return open(path, "rb")  # noqa: SIM115 - handed to the Source, which closes it
    finally:
        timer.cancel()


def _pipe_source(path: Path, display: str, rank: int | None, fifo: bool) -> Source:
    try:
        handle = _open_waiting(path, display) if fifo else open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        raise DenpexInputError(f"cannot read {display}: {_os_reason(exc)}") from None
    try:
        head = handle.read(_SNIFF_BYTES)
        compression = sniff_compression(head[:16])
        if compression is None and binary_head(head) and not head.startswith((b"\xff\xfe", b"\xfe\xff")):
            handle.close()  # /dev/zero, /dev/urandom: say so now rather than read without end
            raise NotTextError(f"not a text log (binary data): {display}")
        return _buffered(display, head, handle, compression, rank)
    except OSError as exc:
        handle.close()
        raise DenpexInputError(f"cannot read {display}: {_os_reason(exc)}") from None


def _buffered(display: str, head: bytes, handle: BinaryIO, compression: str | None, rank: int | None) -> Source:
    """Hold a pipe in memory up to PIPE_MEMORY_BYTES (the fast path can then scan it); a longer or endless
    one becomes a Stream that the line path reads as it comes, in bounded memory."""
    held = bytearray(head)
    while len(held) < PIPE_MEMORY_BYTES:
        block = handle.read(min(1 << 20, PIPE_MEMORY_BYTES - len(held)))
        if not block:
            handle.close()
            return Source(name=display, data=bytes(held), compression=compression, rank_hint=rank)
        held += block
    return Source(name=display, compression=compression, rank_hint=rank, stream=Stream(bytes(held), handle))


def _dir_sources(root: Path, display: str, left_out: list[str] | None = None) -> list[Source]:
    found: list[Source] = []
    skipped = 0
    for dirpath, dirnames, filenames in os.walk(root):
        linked = [d for d in dirnames if not d.startswith(".") and os.path.islink(os.path.join(dirpath, d))]
        if linked and left_out is not None:  # not followed: a link can loop or lead out of the job's folder
            for folder in sorted(linked):
                shown = os.path.join(display, os.path.relpath(os.path.join(dirpath, folder), root))
                left_out.append(f"not followed: symbolic link to a folder {shown}")
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in linked)
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if filename.startswith(".") or filename == "label.json" or not (_looks_like_log(path)
                                                                             or _starts_as_pickle(path)):
                continue
            try:
                info = path.stat()
            except OSError as exc:  # a dangling link or a link loop
                if left_out is not None:
                    left_out.append(f"left out {os.path.join(display, os.path.relpath(path, root))}: "
                                    f"{_os_reason(exc)}")
                continue
            if not stat.S_ISREG(info.st_mode) or info.st_size == 0:
                continue
            rel = os.path.join(display, os.path.relpath(path, root))
            try:
                source = _file_source(path, rel, info)
                check_readable(source)
            except DenpexInputError as exc:
                if not _can_leave_out(exc):
                    raise  # a corrupt or truncated log may hold the failure: say so rather than drop it
                skipped += 1  # an empty, binary or unreadable file among logs: leave it out, say so
                if not isinstance(exc, NotTextError) and left_out is not None:
                    left_out.append(f"left out {rel}: {exc}")
                continue
            found.append(source)
    if not found:
        extra = f" ({skipped} empty, binary or unreadable file(s) left out)" if skipped else ""
        raise DenpexInputError(f"no log files in directory: {display}{extra}")
    if skipped and left_out is not None:
        left_out.append(f"{skipped} empty, binary or unreadable file(s) in {display} left out")
    return found


def _can_leave_out(exc: DenpexInputError) -> bool:
    """Empty, binary or permission-denied: nothing of it can be read anyway. A missing path (a typo) or a
    corrupt/truncated compressed log (which may hold the failure) stays an error."""
    return isinstance(exc, NotTextError) or "permission denied" in str(exc).lower()


def _stdin_source(stdin: BinaryIO | None) -> Source:
    if stdin is None:
        if sys.stdin is None:
            raise DenpexInputError("'-' reads standard input, but there is none")
        if sys.stdin.isatty():
            sys.stderr.write("denpex: reading the log from the terminal; end it with Ctrl-D\n")
            sys.stderr.flush()
        stdin = sys.stdin.buffer
    try:
        head = stdin.read(_SNIFF_BYTES) if not isinstance(stdin, io.BytesIO) else stdin.read()
        return _buffered("<stdin>", head, stdin, sniff_compression(head[:16]), None)
    except OSError as exc:
        raise DenpexInputError(f"cannot read standard input: {_os_reason(exc)}") from None


def resolve(inputs: list[str], stdin: BinaryIO | None = None, left_out: list[str] | None = None) -> list[Source]:
    """Map CLI arguments to sources; '-' reads stdin once. Raises DenpexInputError on bad input.

    With `left_out` (a list to fill), an input that cannot be read among several is left out and the reason
    appended there (torchrun leaves 0-byte stdout.log files beside the ones that matter); only when nothing
    at all is readable does the first error stand.
    """
    if left_out is not None and len(inputs) > 1:
        return _tolerant(inputs, stdin, left_out)
    if not inputs:
        raise DenpexInputError("no input: give a log file, a directory, or '-' for stdin")
    sources: list[Source] = []
    stdin_read = False
    for item in inputs:
        if item == "-":
            if stdin_read:
                continue
            stdin_read = True
            sources.append(_stdin_source(stdin))
            continue
        if not item:
            raise DenpexInputError("an empty path was given")
        path = Path(item)
        info = _stat(path, item)
        if stat.S_ISDIR(info.st_mode):
            sources.extend(_dir_sources(path, item, left_out))
        else:
            sources.append(_file_source(path, item, info))
    return sources


def _tolerant(inputs: list[str], stdin: BinaryIO | None, left_out: list[str]) -> list[Source]:
    sources: list[Source] = []
    first_error: DenpexInputError | None = None
    for item in dict.fromkeys(inputs):
        try:
            found = resolve([item], stdin, left_out)
            for source in found:
                check_readable(source)
        except DenpexInputError as exc:
            if not _can_leave_out(exc):
                raise
            first_error = first_error or exc
            left_out.append(f"left out {item}: {exc}")
            continue
        sources.extend(found)
    if not sources:
        assert first_error is not None
        raise first_error
    return sources


def text_source(text: str, name: str = "<text>") -> Source:
    return Source(name=name, data=text.encode("utf-8", "replace"))


class NotTextError(DenpexInputError):
    """Empty or binary: in a directory such a file is left out; named on its own it is an error."""


def check_readable(source: Source) -> None:
    """Reject empty, binary and corrupt inputs up front, with one clear line (a dump or an error file is
    checked as it is read, by its own reader)."""
    if source.kind != "log":
        return
    if source.stream is not None:  # its head was read when it was opened; the rest can be read only once
        if source.compression is None:
            _check_head(source, source.stream.head[:_SNIFF_BYTES], complete=False)
        return
    head = read_head(source, _SNIFF_BYTES)
    _check_head(source, head, complete=len(head) < _SNIFF_BYTES)


_NUL_RUN = b"\x00" * 8  # zero-filled blocks: a preallocated or crashed file, /dev/zero
_MOST_STRAY_NULS = 200  # one NUL per this many bytes at most: a C string written with its terminator is text
_MOST_UNREADABLE = 0.1  # share of the head that may be invalid UTF-8 or control characters
_TEXT_CONTROLS = frozenset("\t\n\r\x1b\x08\x0c\x07\x00")


def binary_head(head: bytes) -> bool:
    """Whether the first bytes of an input are binary data rather than a log.

    A log may hold a stray NUL: PyTorch's DataLoader prints `ERROR: Unexpected segmentation fault encountered in
    worker.` with its C string's terminator. Binary data has runs of NULs (zero-filled blocks), NULs throughout (an
    image, an executable, UTF-16 without a BOM) or bytes that are neither UTF-8 nor text (/dev/urandom)."""
    if _NUL_RUN in head or head.count(0) > max(4, len(head) // _MOST_STRAY_NULS):
        return True
    text = head.decode("utf-8", "replace")
    unreadable = text.count("\ufffd") + sum(1 for ch in text if ch < " " and ch not in _TEXT_CONTROLS)
    return unreadable > _MOST_UNREADABLE * max(len(text), 1)


def sniffed_head(source: Source, size: int) -> bytes | None:
    """A log source's first bytes, for a question decided once per input (a host column, a rank column): a pipe's
    are already held, so it is not read twice; None when it cannot be read (the reading proper reports why)."""
    if source.kind != "log":
        return None
    if source.stream is not None:
        return source.stream.head
    if source.data is not None and not source.compression:
        return source.data[:size]
    try:
        return read_head(source, size)
    except (DenpexInputError, OSError):
        return None


def read_head(source: Source, size: int) -> bytes:
    """At least the first `size` bytes of a source's text (all of it if shorter), decompressed; text before a
    break-off in a compressed stream still counts (a note-taking Reading keeps the error from raising)."""
    head = b""
    for chunk in source.chunks(size, Reading(source.name)):
        head += chunk
        if len(head) >= size:
            break
    return head


def _check_head(source: Source, head: bytes, complete: bool) -> None:
    """`complete`: the head is the whole input (so colour codes alone make it empty)."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a BOM: framing transcodes it
        if not head[2:].strip(b"\x00 \t\r\n"):
            raise NotTextError(f"empty input: {source.name}")
        return
    if not head.strip():
        raise NotTextError(f"empty input: {source.name}")
    # line by line: an unterminated OSC (`\x1b]...`) ends with its line, it does not swallow the lines after it
    if b"\x1b" in head and complete and not any(_ANSI_BYTES.sub(b"", ln).strip() for ln in head.splitlines()):
        raise NotTextError(f"empty input (only terminal control codes): {source.name}")
    if binary_head(head):
        raise NotTextError(f"not a text log (binary data): {source.name}")


def _reason(exc: BaseException, compression: str | None = None) -> str:
    if isinstance(exc, EOFError):
        return "compressed file is truncated"
    if isinstance(exc, zlib.error):
        return "corrupt gzip data"
    if isinstance(exc, OSError) and exc.strerror:
        return _os_reason(exc)
    text = str(exc) or type(exc).__name__
    if compression and compression in ("bzip2", "xz", "zstd"):
        return f"corrupt {compression} data ({text.splitlines()[0]})"
    return text.splitlines()[0]


def read_chunks(source: Source, size: int = 1 << 20, reading: Reading | None = None) -> Iterator[bytes]:
    """Stream raw (decompressed) bytes; decompression errors become DenpexInputError, or a note in
    `reading` once some text was read (Source.chunks)."""
    return source.chunks(size, reading)
