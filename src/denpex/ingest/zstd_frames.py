"""The frame index of a zstd file of several independent frames: what lets one .zst be scanned on every core
(scan.parallel, ingest.framed_text), each core decompressing only its own frames.

pzstd writes such files, and so does anything that appends compressed pieces to one file (log rotation,
`zstd -c part >> log.zst`). The frames are found by walking their headers and block headers (RFC 8878),
without decompressing anything: a frame's text size is in its header when the writer knew it. A file whose
frames do not all say their size, that uses a dictionary, or whose structure does not add up exactly to the
file's size, has no index here: it is read as one stream, as before (so a damaged file still gets the partial
answer that streaming gives). One zstd frame, what `zstd` writes by default even with `-T`, cannot be split.
"""

from __future__ import annotations

import struct
from typing import BinaryIO

from denpex.ingest.framed_text import Frame

_MAGIC = 0xFD2FB528
_SKIPPABLE = 0x184D2A50  # to 0x184D2A5F
_BLOCK_RESERVED = 3
# Walking headers costs a seek and a read per block: past these, streaming is cheaper than the walk (a zstd
# block holds up to 128 KiB of text, so 2M blocks is at least ~250 GiB of log) and a hostile file of tiny
# blocks cannot stall the start
_MAX_FRAMES = 1 << 16
_MAX_BLOCKS = 1 << 21


def frame_index(path: str, file_size: int) -> list[Frame] | None:
    """The file's data frames, in order; None unless it has at least two and every one is sound and sized."""
    frames: list[Frame] = []
    text = 0
    budget = [_MAX_BLOCKS]
    walked = 0  # frames of either kind: a file of millions of empty skippable frames is a stream too
    try:
        with open(path, "rb") as handle:
            offset = 0
            while offset < file_size:
                walked += 1
                if walked > _MAX_FRAMES:
                    return None
                handle.seek(offset)
                head = handle.read(18)  # magic, descriptor, window, 4-byte dictionary id, 8-byte size
                if len(head) < 8:
                    return None
                (magic,) = struct.unpack_from("<I", head)
                if magic & 0xFFFFFFF0 == _SKIPPABLE:
                    (length,) = struct.unpack_from("<I", head, 4)
                    offset += 8 + length
                    continue
                if magic != _MAGIC:
                    return None
                size, header = _frame_header(head)
                if size is None:
                    return None
                end = _frame_end(handle, offset + header, file_size, head[4] & 0x04 != 0, budget)
                if end is None:
                    return None
                frames.append(Frame(offset, text, size))
                text += size
                offset = end
    except OSError:
        return None
    return frames if offset == file_size and len(frames) >= 2 else None


def _frame_header(head: bytes) -> tuple[int | None, int]:
    """(the frame's text size, or None when its header does not say it or needs a dictionary; header length)."""
    descriptor = head[4]
    size_flag, single_segment, dictionary_flag = descriptor >> 6, descriptor >> 5 & 1, descriptor & 3
    if descriptor & 0x08 or dictionary_flag:  # reserved bit set, or a dictionary we do not have
        return None, 0
    at = 5 + (0 if single_segment else 1)
    width = (1 if single_segment else 0, 2, 4, 8)[size_flag]
    if width == 0:
        return None, 0
    value = int.from_bytes(head[at:at + width], "little")
    return (value + 256 if width == 2 else value), at + width


def _frame_end(handle: BinaryIO, offset: int, file_size: int, checksum: bool, budget: list[int]) -> int | None:
    """Where the frame whose blocks start at `offset` ends, walking its block headers; None if it does not add up
    or the walk would take more than `budget[0]` more blocks."""
    while True:
        budget[0] -= 1
        if budget[0] < 0:
            return None
        handle.seek(offset)
        block = handle.read(3)
        if len(block) < 3:
            return None
        value = int.from_bytes(block, "little")
        last, kind, size = value & 1, value >> 1 & 3, value >> 3
        if kind == _BLOCK_RESERVED:
            return None
        offset += 3 + (1 if kind == 1 else size)  # an RLE block stores its byte once
        if offset > file_size:
            return None
        if last:
            offset += 4 if checksum else 0
            return offset if offset <= file_size else None


def is_zstd_error(exc: BaseException) -> bool:
    """A zstandard failure (a damaged frame), without importing zstandard to ask."""
    return type(exc).__name__ == "ZstdError" or type(exc).__module__.startswith("zstandard")
