"""The job's size as launchers and training scripts print it (`world_size=4`, `World size: 8`, `WORLD_SIZE=2`).

Which rank a ring collective's timeout waited on needs it (analyze.attribution). It is a number, not a finding:
so the scanners report where the words occur and the value is read there, on every line that holds one,
copies included, and no line is framed for it. Before, each of these lines was a candidate, and a log that
printed its process-group line on every restart made two in three of its candidate lines that. Both paths
read it from the same bytes: the raw line (the line path) or the bytes around the words (the fast path); a
line longer than ingest.lines.MAX_LINE_BYTES is read as both paths cut it. A line with colour codes is read on
its text as shown (`world_size=\x1b[1;36m8\x1b[0m`, as Rich highlights numbers, or a code inside the word):
the codes must not change the job's size. `local_world_size` is not the job's size.
"""

from __future__ import annotations

import re

from denpex.ingest.lines import shown_bytes

WORDS = (b"world_size", b"world size", b"WORLD_SIZE", b"World size")
WORD_LENGTH = 10
assert all(len(word) == WORD_LENGTH for word in WORDS)
assert all(b"z" in word or b"Z" in word for word in WORDS)  # the fast path skips coloured lines without either
assert all(word.endswith((b"ize", b"IZE")) for word in WORDS)  # a floor's pieces are searched for these first
# a launcher's own name for the job's size ends in a word: DeepSpeed's launcher prints `dist_world_size=3`
PREFIX = b"dist_"
_IN_LINE = re.compile(rb"(?<![\w.])(?:" + re.escape(PREFIX) + rb")?(?:" + b"|".join(re.escape(w) for w in WORDS)
                      + rb")\b\W{0,3}(\d{1,6})\b")
# the same, read at a word found by a scanner: the value must follow on the same line
_AFTER_WORD = re.compile(rb"\b[^\w\n]{0,3}(\d{1,6})\b")
# a word with colour codes (or stray ESC bytes) anywhere inside it: which coloured lines to read on their shown text
_CODE = rb"(?:\x1b\[[0-?]*[ -/]*[@-~]|\x1b)*"
COLOURED_WORD = re.compile(b"|".join(_CODE.join(re.escape(bytes([c])) for c in word) for word in WORDS))
_NOT_BEFORE = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.")


def largest_in_line(raw: bytes) -> int | None:
    """The largest size above 0 the line prints, or None."""
    sizes = [int(found.group(1)) for found in _IN_LINE.finditer(raw)]
    return max((size for size in sizes if size > 0), default=None)


def in_line(raw: bytes) -> int | None:
    """largest_in_line of a whole raw line; a line with colour codes is read on its text as shown."""
    if b"\x1b" in raw:
        if COLOURED_WORD.search(raw) is None:
            return None
        raw = shown_bytes(raw)
    return largest_in_line(raw)


def at_word(data: bytes, end: int) -> int | None:
    """The size printed after the word ending at `end`, which a scanner found inside a whole line of `data`
    (the byte before the word, and the line's end, are in `data`)."""
    start = end - WORD_LENGTH
    if data.endswith(PREFIX, 0, start):
        start -= len(PREFIX)
    if start > 0 and data[start - 1] in _NOT_BEFORE:
        return None
    found = _AFTER_WORD.match(data, end)
    size = int(found.group(1)) if found else 0
    return size if size > 0 else None


def larger(size: int | None, other: int | None) -> int | None:
    """The larger of two sizes, either of which may be unknown."""
    if size is None or (other is not None and other > size):
        return other
    return size
