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
from dataclasses import dataclass
from itertools import accumulate, repeat

from denpex.ingest.lines import shown_lines
from denpex.scan.engines import CandidateEngine

ESC = b"\x1b"


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


def scan_shown(engine: CandidateEngine, data: bytes, spans: list[tuple[int, int]], ranks: bool = True) -> ShownScan:
    """The candidates, traceback headers and ranks of these lines of `data`, read on their shown text."""
    if not spans:
        return ShownScan([], [], set())
    shown = shown_lines([data[start:end] for start, end in spans])
    result = engine.scan(b"\n".join(shown) + b"\n", ranks=ranks)
    line_ends = newline_offsets(shown)
    hit = sorted(set(map(bisect.bisect_left, repeat(line_ends), result.candidates)))
    heads = sorted(set(map(bisect.bisect_left, repeat(line_ends), result.tracebacks)))
    return ShownScan([spans[i][1] for i in hit], [spans[i][0] for i in heads], result.ranks)


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
