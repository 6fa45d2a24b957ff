"""Lines with colour codes are scanned as shown, not as stored.

A colour code inside an anchor (`CUDA \x1b[1mout of memory`) hides it from a byte scan, and a code after one
(`\x1b[31mError\x1b[0m`) can make a byte scan see what the line path, which matches the text as shown
(ingest.lines.shown_bytes), does not. Before, every line holding an ESC byte was a candidate: a log where
Rich or a coloured logger paints a fifth of the lines sent each of them through Python, and was ten times
slower than its plain text. Now the whole lines of a chunk that hold a code are found with one C search per
line, resolved to their shown text, and scanned as one buffer: a coloured line is a candidate exactly when
its shown text is, as on the line path. Lines cut by a chunk's edges are judged whole later (regions).
"""

from __future__ import annotations

import bisect
from collections import ChainMap
from collections.abc import Mapping
from dataclasses import dataclass
from itertools import accumulate, repeat

from denpex.ingest.lines import shown_lines
from denpex.masking import MASK_DIGITS
from denpex.scan.engines import CandidateEngine, line_rank, marker_count

ESC = b"\x1b"
MAX_KEYS = 1 << 16  # masked lines remembered per input (as scan.repeats.MAX_KEYS)


def coloured_lines(data: bytes, start: int, stop: int) -> list[tuple[int, int]]:
    """(start, end) offsets of the whole lines of data[start:stop] that hold an ESC byte, in order; `stop` is a
    newline's offset, or the end of data."""
    spans: list[tuple[int, int]] = []
    at = data.find(ESC, start, stop)
    while at >= 0:
        line_start = data.rfind(b"\n", start, at) + 1 or start
        line_end = data.find(b"\n", at, stop)
        if line_end < 0:
            line_end = stop
        spans.append((line_start, line_end))
        at = data.find(ESC, line_end + 1, stop)
    return spans


@dataclass(slots=True)
class ShownScan:
    ends: list[int]  # the newline offset of each coloured line whose shown text holds a candidate
    tracebacks: list[int]  # line starts of the coloured lines that are traceback headers as shown
    ranks: set[int]  # the ranks of the coloured lines as shown


class ShownCache:
    """How the shown text of a coloured line scans, per digit-masked line: copies of a line that differ only in
    digits (steps, losses, timestamps, which a colouring handler paints) are resolved and scanned once. Masking
    keeps the codes' grammar (digits become 0) and the scanners match an anchor's digits as any digit, so a
    copy is a candidate, or a traceback header, exactly when its first copy is (scan.repeats). A line's rank
    does depend on its digits: where a code sits inside or before a rank marker, so that the byte scan missed
    it, the rank is read per line (line_rank)."""

    def __init__(self) -> None:
        self.known: dict[bytes, int] = {}  # masked line -> _CANDIDATE | _HEADER | _HIDDEN_RANK


_CANDIDATE, _HEADER, _HIDDEN_RANK = 1, 2, 4
_CACHED_LINE_BYTES = 4096  # longer lines are resolved each time: the cache stays small


def scan_shown(engine: CandidateEngine, data: bytes, spans: list[tuple[int, int]], cache: ShownCache) -> ShownScan:
    """The candidates, traceback headers and ranks of these lines of `data`, read on their shown text. The
    ranks are those the byte scan of `data` cannot see (it sees every marker no code touches)."""
    if not spans:
        return ShownScan([], [], set())
    lines = [data[start:end] for start, end in spans]
    masked = list(map(bytes.translate, lines, repeat(MASK_DIGITS)))
    flags: Mapping[bytes, int] = cache.known
    new = [line for line in dict.fromkeys(masked) if line not in flags]
    if new:
        flags = _resolve(engine, new, cache)
    ends: list[int] = []
    heads: list[int] = []
    ranks: set[int] = set()
    for (start, end), flag, raw in zip(spans, map(flags.__getitem__, masked), lines, strict=True):
        if flag:
            if flag & _CANDIDATE:
                ends.append(end)
            if flag & _HEADER:
                heads.append(start)
            if flag & _HIDDEN_RANK:
                rank = line_rank(raw)
                if rank is not None:
                    ranks.add(rank)
    return ShownScan(ends, heads, ranks)


def _resolve(engine: CandidateEngine, new: list[bytes], cache: ShownCache) -> Mapping[bytes, int]:
    """Scan the shown text of these masked lines; their flags join the cache (up to MAX_KEYS lines). Returns
    the flags of every line known, these included."""
    shown = shown_lines(new)
    result = engine.scan(b"\n".join(shown) + b"\n", ranks=False)
    line_ends = newline_offsets(shown)
    found = [0] * len(new)
    for i in set(map(bisect.bisect_left, repeat(line_ends), result.candidates)):
        found[i] |= _CANDIDATE
    for i in set(map(bisect.bisect_left, repeat(line_ends), result.tracebacks)):
        found[i] |= _HEADER
    for i, (raw, text) in enumerate(zip(new, shown, strict=True)):
        if marker_count(text) != marker_count(raw):  # removing codes joined a marker: the byte scan missed it
            found[i] |= _HIDDEN_RANK
    known = cache.known
    kept = {line: flag for line, flag in zip(new, found, strict=True) if len(line) <= _CACHED_LINE_BYTES}
    if len(known) + len(kept) <= MAX_KEYS:
        known.update(kept)
        if len(kept) == len(new):
            return known
    return ChainMap(dict(zip(new, found, strict=True)), known)  # a full cache is not copied


def outside(spans: list[tuple[int, int]], ends: list[int]) -> list[int]:
    """The candidate ends (sorted offsets) not on these lines: a coloured line's raw hits are replaced by its
    shown text's."""
    if not spans:
        return ends
    starts = [start for start, _ in spans]
    kept: list[int] = []
    for end in ends:
        i = bisect.bisect_right(starts, end - 1) - 1  # the last coloured line starting before the hit's last byte
        if i < 0 or end > spans[i][1]:
            kept.append(end)
    return kept


def newline_offsets(lines: list[bytes]) -> list[int]:
    """[i]: the offset of line i's newline in b"\\n".join(lines) + b"\\n"."""
    return list(accumulate(map(len, lines), _plus_newline))


def _plus_newline(total: int, length: int) -> int:
    """accumulate's step over line lengths: each line after the first adds its newline too."""
    return total + length + 1


def cut_line_ends(data: bytes, first_nl: int, last_nl: int) -> list[int]:
    """A candidate end on the parts of lines cut by the chunk's edges (before its first newline, after its last)
    that hold a colour code: such a line is judged whole once it ends, on its shown text (scan.fast)."""
    ends = []
    if first_nl >= 0:
        at = data.find(ESC, 0, first_nl)
        if at >= 0:
            ends.append(at + 1)
    at = data.find(ESC, last_nl + 1)
    if at >= 0:
        ends.append(at + 1)
    return ends
