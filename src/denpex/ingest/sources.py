"""Turn what the user named (files, directories, '-', compressed logs, pasted text) into readable sources.

Sources are opened read-only; nothing is ever written next to the user's logs.
Compression is told by the file's first bytes (so a gzipped `log.txt` or gzipped stdin works too);
a `.gz`/`.zst`/`.bz2`/`.xz` name whose bytes are not that format is reported as corrupt.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from denpex.errors import DenpexInputError

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".bz2": "bzip2", ".xz": "xz"}
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
    (b"\xfd7zXZ\x00", "xz"),
)
_BZIP2_MAGIC = re.compile(rb"BZh[1-9]\x31\x41\x59\x26\x53\x59")
_FORMAT_NAMES = {"gzip": "gzip", "zstd": "zstd", "bzip2": "bzip2", "xz": "xz"}
LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".stdout", ".stderr", ""}
# Where a rank is read from a path: the file name (rank3_stderr.log, worker_rank-3.log), a folder that is
# nothing but a rank (rank3/, rank_3/) or torchrun --log-dir's attempt_N/<local_rank>/. A rank inside any
# other folder name (gen-dist-rank2-keyerror/log.txt, rank_0_sweep/) says nothing about the file's lines.
_RANK_IN_NAME = re.compile(r"(?:^|[_.\-])rank[_\-]?(\d+)(?=[_.\-]|$)", re.IGNORECASE)
_RANK_FOLDER = re.compile(r"rank[_\-]?(\d+)", re.IGNORECASE)
_ATTEMPT_FOLDER = re.compile(r"attempt_\d+")
_SNIFF_BYTES = 8192
_ZSTD_READ = 1 << 16  # compressed bytes fed at a time: logs compress 10-100x, so output stays bounded


@dataclass(frozen=True, slots=True)
class Source:
    """A readable log: a path (maybe compressed) or in-memory bytes (stdin, pasted text)."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    compression: str | None = None
    rank_hint: int | None = None

    def size_hint(self) -> int:
        """Bytes to read, roughly: compressed files count at an assumed 32x ratio (0 when unknown).

        Logs compress 10-200x (a 145 KB .xz held 32 MB): a low guess would send a big log down the line path."""
        if self.data is not None:
            return len(self.data)
        try:
            size = os.stat(self.path).st_size if self.path else 0
        except OSError:
            return 0
        return size * 32 if self.compression else size

    def open(self) -> BinaryIO:
        """The decompressed bytes as a binary stream (zstd: see `chunks`, which also checks truncation)."""
        raw: BinaryIO
        if self.data is not None:
            raw = io.BytesIO(self.data)
        else:
            assert self.path is not None
            try:
                raw = open(self.path, "rb")  # noqa: SIM115 - closed by the caller or by the wrapper below
            except OSError as exc:
                raise DenpexInputError(f"cannot read {self.name}: {_os_reason(exc)}") from None
        if self.compression == "gzip":
            return _Owning(gzip.GzipFile(fileobj=raw, mode="rb"), raw)  # type: ignore[return-value]
        if self.compression == "bzip2":
            return bz2.BZ2File(raw, "rb")  # type: ignore[return-value]
        if self.compression == "xz":
            return lzma.LZMAFile(raw, "rb")  # type: ignore[return-value]
        if self.compression == "zstd":
            import zstandard

            return zstandard.ZstdDecompressor().stream_reader(  # type: ignore[return-value]
                raw, read_across_frames=True, closefd=True
            )
        return raw

    def chunks(self, size: int = 1 << 20) -> Iterator[bytes]:
        """Decompressed bytes in chunks; a truncated or corrupt stream raises DenpexInputError."""
        try:
            if self.compression == "zstd":
                yield from _zstd_chunks(self)
                return
            with self.open() as handle:
                while True:
                    chunk = handle.read(size)
                    if not chunk:
                        return
                    yield chunk
        except DenpexInputError:
            raise
        except (OSError, EOFError, lzma.LZMAError, zlib.error) as exc:
            raise DenpexInputError(f"cannot read {self.name}: {_reason(exc, self.compression)}") from None
        except Exception as exc:
            if _is_zstd_error(exc):
                raise DenpexInputError(f"cannot read {self.name}: {_reason(exc, self.compression)}") from None
            raise


class _Owning(io.BufferedIOBase):
    """A GzipFile over a file object that it must close too (GzipFile(fileobj=) leaves it open)."""

    def __init__(self, inner: gzip.GzipFile, raw: BinaryIO) -> None:
        self._inner = inner
        self._raw = raw

    def readable(self) -> bool:
        return True

    def read(self, size: int | None = -1) -> bytes:
        return self._inner.read(size)

    def read1(self, size: int = -1) -> bytes:
        return self._inner.read1(size)

    def close(self) -> None:
        try:
            self._inner.close()
        finally:
            self._raw.close()
            super().close()


def _zstd_chunks(source: Source) -> Iterator[bytes]:
    """zstd frames one after another; zstandard's stream reader would end quietly on a truncated frame."""
    import zstandard

    raw = io.BytesIO(source.data) if source.data is not None else None
    if raw is None:
        assert source.path is not None
        try:
            raw = open(source.path, "rb")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise DenpexInputError(f"cannot read {source.name}: {_os_reason(exc)}") from None
    with raw:
        obj = zstandard.ZstdDecompressor().decompressobj()
        fed = False  # compressed bytes given to the current frame
        while True:
            data = raw.read(_ZSTD_READ)
            if not data:
                break
            while data:
                out = obj.decompress(data)
                fed = True
                if out:
                    yield out
                if obj.eof:
                    data = obj.unused_data
                    obj = zstandard.ZstdDecompressor().decompressobj()
                    fed = False
                else:
                    data = b""
        if fed:
            raise EOFError("compressed file ended before the end of its last zstd frame")


def _is_zstd_error(exc: BaseException) -> bool:
    return type(exc).__name__ == "ZstdError" or type(exc).__module__.startswith("zstandard")


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
        if folder.isdigit() and index > 0 and _ATTEMPT_FOLDER.fullmatch(parts[index - 1]):
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
    if path.name.lower() == "error.json":
        return True
    return last in LOG_SUFFIXES or re.fullmatch(r"\.\d+", last) is not None


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
        # a pipe or device (`<(zcat log.gz)`, /dev/stdin) can be read only once: read it now
        try:
            with open(path, "rb") as handle:
                data = handle.read(_SNIFF_BYTES)
                compression = sniff_compression(data[:16])
                if compression is None and b"\x00" in data and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
                    # /dev/zero, /dev/urandom: say so now rather than read without end
                    raise NotTextError(f"not a text log (binary data): {display}")
                data += handle.read()
        except OSError as exc:
            raise DenpexInputError(f"cannot read {display}: {_os_reason(exc)}") from None
        return Source(name=display, data=data, compression=compression, rank_hint=rank)
    try:
        with open(path, "rb") as handle:
            head = handle.read(16)
    except PermissionError:
        raise DenpexInputError(f"permission denied: {display}") from None
    except OSError as exc:
        raise DenpexInputError(f"cannot read {display}: {_os_reason(exc)}") from None
    compression = sniff_compression(head)
    named = COMPRESSED_SUFFIXES.get(path.suffix.lower())
    if named is not None and compression != named:
        raise DenpexInputError(f"cannot read {display}: not a valid {_FORMAT_NAMES[named]} file")
    return Source(name=display, path=path, compression=compression, rank_hint=rank)


def _dir_sources(root: Path, display: str, left_out: list[str] | None = None) -> list[Source]:
    found: list[Source] = []
    skipped = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if filename.startswith(".") or filename == "label.json" or not _looks_like_log(path):
                continue
            try:
                info = path.stat()
            except OSError:
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


def _read_stdin(stdin: BinaryIO | None) -> bytes:
    if stdin is None:
        if sys.stdin is None:
            raise DenpexInputError("'-' reads standard input, but there is none")
        if sys.stdin.isatty():
            sys.stderr.write("denpex: reading the log from the terminal; end it with Ctrl-D\n")
            sys.stderr.flush()
        stdin = sys.stdin.buffer
    try:
        return stdin.read()
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
            data = _read_stdin(stdin)
            sources.append(Source(name="<stdin>", data=data, compression=sniff_compression(data[:16])))
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
    """Reject empty, binary and corrupt inputs up front, with one clear line."""
    head = b""
    for chunk in source.chunks(_SNIFF_BYTES):
        head += chunk
        if len(head) >= _SNIFF_BYTES:
            break
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):  # UTF-16 with a BOM: framing transcodes it
        if not head[2:].strip(b"\x00 \t\r\n"):
            raise NotTextError(f"empty input: {source.name}")
        return
    if not head.strip():
        raise NotTextError(f"empty input: {source.name}")
    if b"\x00" in head:
        raise NotTextError(f"not a text log (binary data): {source.name}")


def _reason(exc: BaseException, compression: str | None = None) -> str:
    if isinstance(exc, EOFError):
        return "compressed file is truncated"
    if isinstance(exc, gzip.BadGzipFile):
        return "not a valid gzip file"
    if isinstance(exc, zlib.error):
        return "corrupt gzip data"
    if isinstance(exc, OSError) and exc.strerror:
        return _os_reason(exc)
    text = str(exc) or type(exc).__name__
    if compression and compression in ("bzip2", "xz", "zstd"):
        return f"corrupt {compression} data ({text.splitlines()[0]})"
    return text.splitlines()[0]


def read_chunks(source: Source, size: int = 1 << 20) -> Iterator[bytes]:
    """Stream raw (decompressed) bytes; decompression errors become DenpexInputError."""
    return source.chunks(size)
