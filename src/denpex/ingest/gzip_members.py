"""The member index of a .gz made of several gzip members: what lets one .gz be scanned on every core.

Such files come from appending compressed pieces to one file (log rotation, `gzip -c part >> log.gz`, `cat
a.gz b.gz`) and from parallel compressors that write one member per block (bgzip). One member, what `gzip` and
`pigz` write, cannot be split: where its deflate stream could be entered is not recorded anywhere.

A member's end is not recorded either, so its start is found by searching the file for gzip headers. A header
that deflate data happens to imitate is ruled out by decompressing a little from it (random bytes fail within a
few hundred), and each member's text size comes from its trailer: the 4 bytes before the next member's header
(the last member's: the file's last 4). A trailer holds the size modulo 4 GiB, and a
worker reads only its share, so a size is used only where it cannot be wrong: deflate packs at most 1032 bytes of
text into one compressed byte, so a member of under 4 MiB compressed holds under 4 GiB of text and its trailer's
size is exact; a file with a bigger member, a member whose trailer says 0 (zero padding, or a trailer that is not
one) or bytes after its last member is read as one stream. The reader (ingest.framed_text) still checks each
member's size and end wherever it decompresses one to its end, and a mismatch makes the caller read the file as
one stream.
"""

from __future__ import annotations

import zlib
from typing import BinaryIO

from denpex.ingest.framed_text import Frame

_MAGIC = b"\x1f\x8b\x08"  # ID1, ID2, CM = deflate
_SEARCH_BLOCK = 1 << 20
_MAX_MEMBERS = 1 << 16  # past this, a walk costs more than it saves (and a file of tiny members is a stream)
_PROBE_BYTES = 1 << 16  # compressed bytes decompressed from a candidate header to rule out an imitation
_MAX_DEFLATE_RATIO = 1032  # text bytes one compressed byte can hold at most (RFC 1951: a 258-byte match in 2 bits)
_EXACT_MEMBER_BYTES = (1 << 32) // _MAX_DEFLATE_RATIO  # below this, a trailer's size (mod 4 GiB) is the size
_EMPTY_MEMBER_BYTES = 20  # gzip of nothing: a 10-byte header, an empty deflate block, an 8-byte trailer
_OS_VALUES = set(range(14)) | {255}


def member_index(path: str, file_size: int) -> list[Frame] | None:
    """The file's members, in order; None unless it has at least two and each of them looks sound."""
    try:
        with open(path, "rb") as handle:
            starts = _headers(handle, file_size)
            if starts is None or len(starts) < 2:
                return None
            frames: list[Frame] = []
            text = 0
            for k, start in enumerate(starts):
                end = starts[k + 1] if k + 1 < len(starts) else file_size
                if not 18 <= end - start < _EXACT_MEMBER_BYTES:  # header and trailer; a size that cannot wrap
                    return None
                handle.seek(end - 4)
                size = int.from_bytes(handle.read(4), "little")  # ISIZE: the text's size modulo 2**32
                if size == 0 and end - start > _EMPTY_MEMBER_BYTES:  # zero padding, or no trailer there
                    return None
                frames.append(Frame(start, text, size, "gzip"))
                text += size
    except OSError:
        return None
    return frames


def _headers(raw: BinaryIO, file_size: int) -> list[int] | None:
    """Offsets of the member headers: the file's start and each plausible header after it that decompresses."""
    raw.seek(0)
    if raw.read(3) != _MAGIC:
        return None
    found: list[int] = []
    offset = 0
    while offset < file_size:
        raw.seek(offset)
        block = raw.read(_SEARCH_BLOCK + 9)  # a header cut by the block's end is found whole in this one
        if not block:
            break
        at = block.find(_MAGIC, 1 if offset == 0 else 0)
        while 0 <= at < _SEARCH_BLOCK:
            found.append(offset + at)
            if len(found) > _MAX_MEMBERS:
                return None
            at = block.find(_MAGIC, at + 1)
        offset += _SEARCH_BLOCK
        # a stretch with no header longer than a member may be: a member too big to split (what gzip and pigz
        # write is one): stop reading the file now
        if min(offset, file_size) - (found[-1] if found else 0) >= _EXACT_MEMBER_BYTES:
            return None
    starts = [0] + [at for at in found if _decompresses(raw, at)]
    return starts if len(starts) <= _MAX_MEMBERS else None


def _decompresses(handle: BinaryIO, at: int) -> bool:
    """Whether a member plausibly starts at `at`: a sane header and a deflate stream that decodes for a while."""
    handle.seek(at)
    probe = handle.read(_PROBE_BYTES)
    if len(probe) < 18 or probe[3] & 0xE0 or probe[9] not in _OS_VALUES:  # reserved flag bits, OS byte
        return False
    try:
        zlib.decompressobj(31).decompress(probe, 1 << 20)
    except zlib.error:
        return False
    return True
