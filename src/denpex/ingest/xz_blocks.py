"""The block index of an .xz file of several blocks: what lets one .xz be scanned on every core.

xz writes several blocks when it compresses on several threads (`xz -T0`, the default from xz 5.6 on), and its
index, at the end of the file and protected by a CRC32, records each block's compressed and uncompressed size. So
every block's place in the file and in the text is known exactly, without decompressing anything, and a block can
be decoded alone: it is a raw LZMA2 stream after its own header. Read as one stream instead: a single block (what
`xz -T1` writes), several concatenated streams, filters other than LZMA2 alone, or anything that does not add up.
"""

from __future__ import annotations

import lzma
import struct
import zlib
from typing import BinaryIO

from denpex.ingest.framed_text import Frame

_HEADER_MAGIC = b"\xfd7zXZ\x00"
_FOOTER_MAGIC = b"YZ"
_CHECK_SIZES = {0x00: 0, 0x01: 4, 0x04: 8, 0x0A: 32}
_LZMA2 = 0x21
_MAX_BLOCKS = 1 << 16


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """A multibyte integer of the .xz format (7 bits a byte, at most 9 bytes): (value, offset after it)."""
    value = 0
    for shift in range(0, 63, 7):
        if at >= len(data):
            raise ValueError("cut varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
    raise ValueError("varint too long")


def block_index(path: str, file_size: int) -> list[Frame] | None:
    """The file's blocks, in order; None unless it is one stream of at least two blocks that all add up."""
    try:
        with open(path, "rb") as handle:
            return _index(handle, file_size)
    except (OSError, ValueError, struct.error):
        return None


def _index(handle: BinaryIO, file_size: int) -> list[Frame] | None:
    if file_size < 32:
        return None
    head = handle.read(12)
    if head[:6] != _HEADER_MAGIC:
        return None
    flags = head[6:8]
    handle.seek(file_size - 12)
    footer = handle.read(12)
    if footer[10:12] != _FOOTER_MAGIC or footer[8:10] != flags:
        return None
    if zlib.crc32(footer[4:10]) != struct.unpack_from("<I", footer)[0]:
        return None
    index_size = (struct.unpack_from("<I", footer, 4)[0] + 1) * 4
    index_start = file_size - 12 - index_size
    if index_start < 12:
        return None
    handle.seek(index_start)
    index = handle.read(index_size)
    if index[:1] != b"\x00" or zlib.crc32(index[:-4]) != struct.unpack_from("<I", index, len(index) - 4)[0]:
        return None
    count, at = _varint(index, 1)
    if not 2 <= count <= _MAX_BLOCKS:
        return None
    check = _CHECK_SIZES.get(flags[1] & 0x0F)
    if check is None:
        return None
    frames: list[Frame] = []
    offset, text = 12, 0
    for _ in range(count):
        unpadded, at = _varint(index, at)
        size, at = _varint(index, at)
        frames.append(Frame(offset, text, size, "xz"))
        offset += (unpadded + 3) // 4 * 4
        text += size
    if offset != index_start:  # a second stream, stream padding, or sizes that do not add up: one stream
        return None
    for frame in frames:  # every block must be LZMA2 alone, so that it can be decoded raw
        handle.seek(frame.offset)
        if block_filters(handle.read(1024)) is None:
            return None
    return frames


def block_filters(block: bytes) -> tuple[int, dict[str, object]] | None:
    """(the block header's size, the LZMA2 filter it declares), or None for anything else."""
    if not block or block[0] == 0:
        return None
    header_size = (block[0] + 1) * 4
    header = block[:header_size]
    if len(header) < header_size or zlib.crc32(header[:-4]) != struct.unpack_from("<I", header, header_size - 4)[0]:
        return None
    flags = header[1]
    if flags & 0x3C or (flags & 0x03) != 0:  # reserved bits; more than one filter
        return None
    at = 2
    if flags & 0x40:
        _, at = _varint(header, at)
    if flags & 0x80:
        _, at = _varint(header, at)
    filter_id, at = _varint(header, at)
    props_size, at = _varint(header, at)
    if filter_id != _LZMA2 or props_size != 1:
        return None
    return header_size, lzma._decode_filter_properties(lzma.FILTER_LZMA2, header[at:at + 1])  # type: ignore[attr-defined]
