"""The text of a compressed file made of independent pieces, read from any offset: what lets one compressed log
be scanned on every core (scan.parallel), each core decompressing only its own pieces.

Three formats record where their pieces start and how much text each holds: a .zst of several sized frames
(ingest.zstd_frames), a .gz of several members (ingest.gzip_members) and an .xz of several blocks
(ingest.xz_blocks). Their index is a list of Frames;
seek() decompresses from the start of the piece that holds the offset, so a reader at the end of the file
never decompresses its head.
"""

from __future__ import annotations

import lzma
import zlib
from dataclasses import dataclass
from typing import Any, BinaryIO, Literal

Codec = Literal["zstd", "gzip", "xz"]
_COMPRESSED_READ = 1 << 18  # compressed bytes read from the file at a time


@dataclass(frozen=True, slots=True)
class Frame:
    offset: int  # where the piece starts in the file
    text_start: int  # where its text starts in the decompressed stream
    text_size: int
    codec: Codec = "zstd"


class IndexMismatch(OSError):
    """A piece did not decompress to what the index said (a gzip member's size, or where it ends): the caller
    reads the file as one stream instead."""


class FramedReader:
    """The decompressed text of an indexed file, from any offset. What the scanners use of a binary file: read,
    readline, seek, tell."""

    def __init__(self, path: str, frames: list[Frame]) -> None:
        self._raw = open(path, "rb")  # noqa: SIM115 - closed by close()
        self._frames = frames
        self._size = frames[-1].text_start + frames[-1].text_size
        self._pos = 0
        self._stream: BinaryIO | _GzipMembers | _XzBlocks | None = None
        self._pending = b""  # read past a newline by readline

    def __enter__(self) -> FramedReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._raw.close()

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int) -> int:
        target = max(0, min(offset, self._size))
        index = self._frame_of(target)
        frame = self._frames[index]
        self._raw.seek(frame.offset)
        if frame.codec == "gzip":
            self._stream = _GzipMembers(self._raw, self._frames, index)
        elif frame.codec == "xz":
            self._stream = _XzBlocks(self._raw, self._frames, index)
        else:
            import zstandard

            self._stream = zstandard.ZstdDecompressor().stream_reader(self._raw, read_across_frames=True,
                                                                      closefd=False)
        self._pending = b""
        skip = target - frame.text_start
        while skip > 0:
            got = self._stream.read(min(skip, 1 << 20))
            if not got:
                break
            skip -= len(got)
        self._pos = target - skip
        return self._pos

    def _frame_of(self, target: int) -> int:
        lo, hi = 0, len(self._frames) - 1
        while lo < hi:  # the last frame starting at or before target
            mid = (lo + hi + 1) // 2
            if self._frames[mid].text_start <= target:
                lo = mid
            else:
                hi = mid - 1
        return lo

    def read(self, size: int) -> bytes:
        if self._stream is None:
            self.seek(self._pos)
        assert self._stream is not None
        if self._pending:
            got, self._pending = self._pending[:size], self._pending[size:]
        else:
            got = self._stream.read(size)
            while 0 < len(got) < size:  # a frame's end: the reader stops there, the text goes on
                more = self._stream.read(size - len(got))
                if not more:
                    break
                got += more
        self._pos += len(got)
        return got

    def readline(self) -> bytes:
        parts: list[bytes] = []
        while True:
            piece = self.read(1 << 16)
            if not piece:
                break
            newline = piece.find(b"\n")
            if newline >= 0:
                parts.append(piece[: newline + 1])
                self._pending = piece[newline + 1 :] + self._pending
                self._pos -= len(piece) - newline - 1
                break
            parts.append(piece)
        return b"".join(parts)


class _GzipMembers:
    """The text of gzip members from member `first` on, each checked against the index as it ends: its text size
    and where it ends must be what the index said (the index took them from the members' trailers and from
    headers found by a search, which a member's compressed bytes could imitate)."""

    def __init__(self, raw: BinaryIO, frames: list[Frame], first: int) -> None:
        self._raw = raw  # positioned at frames[first].offset
        self._frames = frames
        self._member = first
        self._fed_to = frames[first].offset  # file offset after the last compressed byte read
        self._input = b""  # compressed bytes read, not yet consumed by the decompressor
        self._inflate = zlib.decompressobj(31)
        self._made = 0  # text the current member gave so far
        self._done = False

    def read(self, size: int) -> bytes:
        try:
            return self._read(size)
        except zlib.error as exc:
            raise IndexMismatch(f"gzip member {self._member}: {exc}") from exc

    def _read(self, size: int) -> bytes:
        while not self._done:
            if self._inflate.eof:
                self._next_member()
                continue
            if not self._input:
                self._input = self._raw.read(_COMPRESSED_READ)
                self._fed_to += len(self._input)
                if not self._input:
                    raise IndexMismatch(f"gzip member {self._member} is cut short")
            out = self._inflate.decompress(self._input, size)
            # at a member's end the bytes after it are in unused_data (unconsumed_tail may repeat them)
            self._input = b"" if self._inflate.eof else self._inflate.unconsumed_tail
            self._made += len(out)
            if out:
                return out
        return b""

    def _next_member(self) -> None:
        """The current member ended: check it, then start the next one on the bytes read past its end."""
        frame = self._frames[self._member]
        rest = self._inflate.unused_data
        end = self._fed_to - len(rest)
        following = self._frames[self._member + 1].offset if self._member + 1 < len(self._frames) else None
        if self._made != frame.text_size or (following is not None and end != following):
            raise IndexMismatch(f"gzip member {self._member} does not match the index")
        if following is None:
            self._done = True
            return
        self._member += 1
        self._inflate = zlib.decompressobj(31)
        self._input = rest
        self._made = 0


class _XzBlocks:
    """The text of .xz blocks from block `first` on, each a raw LZMA2 stream after its header (ingest.xz_blocks),
    each checked against the index's size as it ends."""

    def __init__(self, raw: BinaryIO, frames: list[Frame], first: int) -> None:
        self._raw = raw
        self._frames = frames
        self._block = first - 1
        self._inflate: Any = None
        self._input = b""
        self._made = 0
        self._done = False
        self._next_block()

    def _next_block(self) -> None:
        from denpex.ingest.xz_blocks import block_filters  # here: xz_blocks imports Frame from this module

        if self._inflate is not None and self._made != self._frames[self._block].text_size:
            raise IndexMismatch(f"xz block {self._block} does not match the index")
        self._block += 1
        if self._block >= len(self._frames):
            self._done = True
            return
        self._raw.seek(self._frames[self._block].offset)
        head = self._raw.read(1024)
        found = block_filters(head)
        if found is None:
            raise IndexMismatch(f"xz block {self._block} has no LZMA2 header")
        header_size, lzma2 = found
        self._inflate = lzma.LZMADecompressor(lzma.FORMAT_RAW, filters=[lzma2])
        self._input = head[header_size:]
        self._made = 0

    def read(self, size: int) -> bytes:
        try:
            while not self._done:
                if self._inflate.eof:
                    self._next_block()
                    continue
                if not self._input and self._inflate.needs_input:
                    self._input = self._raw.read(_COMPRESSED_READ)
                    if not self._input:
                        raise IndexMismatch(f"xz block {self._block} is cut short")
                out = self._inflate.decompress(self._input, size)
                self._input = b""  # the decompressor keeps what it did not consume (needs_input says when)
                self._made += len(out)
                if out:
                    return out
            return b""
        except lzma.LZMAError as exc:
            raise IndexMismatch(f"xz block {self._block}: {exc}") from exc


def open_text(path: str, frames: list[Frame] | None) -> BinaryIO | FramedReader:
    """The file's text as a seekable binary stream: the file itself, or its pieces decompressed on demand."""
    if frames is None:
        return open(path, "rb")  # noqa: SIM115 - the caller closes it
    return FramedReader(path, frames)
