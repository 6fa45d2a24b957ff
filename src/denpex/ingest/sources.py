"""Turn what the user named (files, directories, '-', compressed logs, pasted text) into readable sources.

Sources are opened read-only; nothing is ever written next to the user's logs.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from denpex.errors import DenpexInputError

COMPRESSED_SUFFIXES = {".gz": "gzip", ".zst": "zstd", ".bz2": "bzip2", ".xz": "xz"}
LOG_SUFFIXES = {".log", ".txt", ".out", ".err", ".stdout", ".stderr", ""}
# torchrun --log-dir writes attempt_N/<local_rank>/{stdout,stderr}.log and error.json
_RANK_IN_PATH = [
    re.compile(r"(?:^|[/_.\-])rank[_\-]?(\d+)(?:[/_.\-]|$)", re.IGNORECASE),
    re.compile(r"attempt_\d+/(\d+)/"),
    re.compile(r"(?:^|/)(?:node|worker)[_\-]?\d+[/_\-]rank[_\-]?(\d+)", re.IGNORECASE),
]
_SNIFF_BYTES = 8192


@dataclass(frozen=True, slots=True)
class Source:
    """A readable log: a path (maybe compressed) or in-memory bytes (stdin, pasted text)."""

    name: str
    path: Path | None = None
    data: bytes | None = None
    compression: str | None = None
    rank_hint: int | None = None

    def open(self) -> BinaryIO:
        if self.data is not None:
            return io.BytesIO(self.data)
        assert self.path is not None
        try:
            if self.compression == "gzip":
                return gzip.open(self.path, "rb")  # type: ignore[return-value]
            if self.compression == "bzip2":
                return bz2.open(self.path, "rb")  # type: ignore[return-value]
            if self.compression == "xz":
                return lzma.open(self.path, "rb")  # type: ignore[return-value]
            if self.compression == "zstd":
                import zstandard

                return zstandard.ZstdDecompressor().stream_reader(open(self.path, "rb"))  # type: ignore[return-value]
            return open(self.path, "rb")
        except OSError as exc:
            raise DenpexInputError(f"cannot read {self.name}: {exc.strerror or exc}") from None


def rank_from_path(path: str) -> int | None:
    """torchrun --log-dir and per-rank dumps carry the rank in the path (rank3.log, attempt_0/3/stderr.log)."""
    norm = path.replace(os.sep, "/")
    for pattern in _RANK_IN_PATH:
        found = pattern.search(norm)
        if found:
            return int(found.group(1))
    return None


def _compression_of(path: Path) -> str | None:
    return COMPRESSED_SUFFIXES.get(path.suffix.lower())


def _looks_like_log(path: Path) -> bool:
    suffixes = path.suffixes
    if suffixes and suffixes[-1].lower() in COMPRESSED_SUFFIXES:
        suffixes = suffixes[:-1]
    last = suffixes[-1].lower() if suffixes else ""
    if path.name.lower() == "error.json":
        return True
    return last in LOG_SUFFIXES or re.fullmatch(r"\.\d+", last) is not None


def _file_source(path: Path, display: str) -> Source:
    if not path.exists():
        raise DenpexInputError(f"no such file or directory: {display}")
    if not os.access(path, os.R_OK):
        raise DenpexInputError(f"permission denied: {display}")
    return Source(
        name=display,
        path=path,
        compression=_compression_of(path),
        rank_hint=rank_from_path(display),
    )


def _dir_sources(root: Path, display: str) -> list[Source]:
    found: list[Source] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if filename.startswith(".") or not path.is_file() or not _looks_like_log(path):
                continue
            if filename == "label.json":
                continue
            if path.stat().st_size == 0:
                continue
            rel = os.path.join(display, os.path.relpath(path, root))
            found.append(_file_source(path, rel))
    if not found:
        raise DenpexInputError(f"no log files in directory: {display}")
    return found


def resolve(inputs: list[str], stdin: BinaryIO | None = None) -> list[Source]:
    """Map CLI arguments to sources; '-' reads stdin once. Raises DenpexInputError on bad input."""
    if not inputs:
        raise DenpexInputError("no input: give a log file, a directory, or '-' for stdin")
    sources: list[Source] = []
    for item in inputs:
        if item == "-":
            stream = stdin if stdin is not None else sys.stdin.buffer
            sources.append(Source(name="<stdin>", data=stream.read()))
            continue
        path = Path(item)
        if path.is_dir():
            sources.extend(_dir_sources(path, item))
        else:
            sources.append(_file_source(path, item))
    return sources


def text_source(text: str, name: str = "<text>") -> Source:
    return Source(name=name, data=text.encode("utf-8", "replace"))


def check_readable(source: Source) -> None:
    """Reject empty, binary and corrupt inputs up front, with one clear line."""
    try:
        with source.open() as handle:
            head = handle.read(_SNIFF_BYTES)
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DenpexInputError(f"cannot read {source.name}: {_reason(exc)}") from None
    except Exception as exc:  # zstandard raises its own ZstdError
        raise DenpexInputError(f"cannot read {source.name}: {_reason(exc)}") from None
    if not head.strip():
        raise DenpexInputError(f"empty input: {source.name}")
    if b"\x00" in head:
        raise DenpexInputError(f"not a text log (binary data): {source.name}")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, EOFError):
        return "compressed file is truncated"
    if isinstance(exc, gzip.BadGzipFile):
        return "not a valid gzip file"
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0]


def read_chunks(source: Source, size: int = 1 << 20) -> Iterator[bytes]:
    """Stream raw bytes; decompression errors become DenpexInputError."""
    try:
        with source.open() as handle:
            while True:
                chunk = handle.read(size)
                if not chunk:
                    return
                yield chunk
    except DenpexInputError:
        raise
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DenpexInputError(f"cannot read {source.name}: {_reason(exc)}") from None
    except Exception as exc:
        if type(exc).__module__.startswith("zstd"):
            raise DenpexInputError(f"cannot read {source.name}: {_reason(exc)}") from None
        raise
