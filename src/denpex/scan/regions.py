"""The fast path: scan big buffers for candidates, then frame only the lines around them.

A log of gigabytes is mostly healthy noise. The candidate engine finds, at C speed, every offset where a
catalog anchor or a structural pattern (traceback header, exception line, exit summary) occurs. Around
each candidate we frame a region: `before` lines back (or back to the traceback it belongs to), `after`
lines forward. Regions are merged and emitted in file order with their true line numbers, so the
analysis sees exactly the lines it would have needed from the full stream; `None` marks a gap.

Memory is bounded: one read chunk plus a carried tail of at most `carry` bytes.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from denpex.scan.engines import TRACEBACK, CandidateEngine

TRACEBACK_REACH = 256 << 10  # a candidate inside a traceback pulls in its header when it is this close
_OVERLAP = 512  # bytes re-scanned across chunk boundaries (longer than any anchor)


@dataclass(slots=True)
class Region:
    start: int  # absolute byte offset of the first line
    end: int  # absolute byte offset just past the last line's newline
    first_line: int  # 1-based number of the first line
    data: bytes


@dataclass
class ScanStats:
    candidates: int = 0
    regions: int = 0
    lines_framed: int = 0
    lines_total: int = 0
    ranks: set[int] = field(default_factory=set)


class RegionFinder:
    """Feed chunks of one input in order; get back the regions to frame, in order."""

    def __init__(self, engine: CandidateEngine, before: int, after: int, carry: int = 4 << 20) -> None:
        self.engine = engine
        self.before = max(before, 3)
        self.after = max(after, 1)
        self.carry = carry
        self.stats = ScanStats()
        self._buf = b""
        self._buf_start = 0  # absolute offset of _buf[0]
        self._count_pos = 0  # absolute offset up to which newlines are counted
        self._count_lines = 0  # newlines before _count_pos
        self._pending: list[int] = []  # candidate offsets not yet emitted, sorted
        self._tracebacks: list[int] = []
        self._emitted = 0  # absolute offset up to which lines were emitted

    def feed(self, chunk: bytes) -> Iterator[Region]:
        if not chunk:
            return
        overlap = self._buf[-_OVERLAP:] if self._buf else b""
        base = self._buf_start + len(self._buf) - len(overlap)
        result = self.engine.scan(overlap + chunk)
        cut = len(overlap)
        # offsets are match ends (exclusive): a match ending inside the overlap was found by the last scan
        self._pending.extend(base + off for off in result.candidates if off > cut)
        self._pending.sort()
        self._tracebacks.extend(base + off for off in result.tracebacks if off + len(TRACEBACK) > cut)
        self.stats.ranks |= result.ranks
        self.stats.candidates += len(result.candidates)
        self._buf += chunk
        yield from self._emit(final=False)
        self._trim()

    def finish(self) -> Iterator[Region]:
        yield from self._emit(final=True)
        end = self._buf_start + len(self._buf)
        self.stats.lines_total = self._lines_before(end) + (1 if self._buf and not self._buf.endswith(b"\n") else 0)

    # -- internals -----------------------------------------------------------------------------
    def _lines_before(self, offset: int) -> int:
        """Newlines before an absolute offset; offsets only move forward."""
        rel_from = self._count_pos - self._buf_start
        rel_to = offset - self._buf_start
        if rel_to > rel_from:
            self._count_lines += self._buf.count(b"\n", rel_from, rel_to)
            self._count_pos = offset
        return self._count_lines

    def _line_start(self, offset: int) -> int:
        rel = offset - self._buf_start
        return self._buf_start + self._buf.rfind(b"\n", 0, rel) + 1

    def _back(self, offset: int, lines: int, floor: int) -> int:
        """Start of the line `lines` lines before the one holding `offset`, not before `floor`."""
        rel = offset - self._buf_start
        low = floor - self._buf_start
        pos = self._buf.rfind(b"\n", low, rel)
        for _ in range(lines):
            if pos < low:
                return floor
            pos = self._buf.rfind(b"\n", low, pos)
        return max(self._buf_start + pos + 1, floor)

    def _forward(self, offset: int, lines: int) -> int | None:
        """End (past the newline) of the line `lines` lines after the one holding `offset`; None if not here yet."""
        rel = offset - self._buf_start
        pos = rel - 1
        for _ in range(lines + 1):
            pos = self._buf.find(b"\n", pos + 1)
            if pos < 0:
                return None
        return self._buf_start + pos + 1

    def _emit(self, final: bool) -> Iterator[Region]:
        buf_end = self._buf_start + len(self._buf)
        while self._pending:
            first = self._pending[0]
            if first < self._emitted:  # already inside an emitted region
                self._pending.pop(0)
                continue
            start = self._back(first, self.before, max(self._emitted, self._buf_start))
            header = self._traceback_before(first)
            if header is not None and header >= max(self._emitted, self._buf_start) and header < start:
                start = self._line_start(header)
            end = self._forward(first, self.after)
            if end is None:
                if not final:
                    return
                end = buf_end
            # merge every candidate whose region overlaps this one
            taken = 1
            while taken < len(self._pending) and self._pending[taken] < end:
                nxt = self._forward(self._pending[taken], self.after)
                if nxt is None:
                    if not final:
                        return
                    nxt = buf_end
                end = max(end, nxt)
                taken += 1
            del self._pending[:taken]
            first_line = self._lines_before(start) + 1
            data = self._buf[start - self._buf_start : end - self._buf_start]
            self._emitted = end
            self.stats.regions += 1
            yield Region(start, end, first_line, data)

    def _traceback_before(self, offset: int) -> int | None:
        i = bisect.bisect_right(self._tracebacks, offset) - 1
        if i >= 0 and offset - self._tracebacks[i] <= TRACEBACK_REACH:
            return self._tracebacks[i]
        return None

    def _trim(self) -> None:
        """Keep the carried tail (for back context) and anything a pending candidate still needs."""
        buf_end = self._buf_start + len(self._buf)
        keep_from = max(buf_end - self.carry, self._buf_start)
        if self._pending:
            keep_from = min(keep_from, self._back(self._pending[0], self.before, self._buf_start))
        keep_from = self._line_start(keep_from) if keep_from > self._buf_start else keep_from
        if keep_from <= self._buf_start:
            return
        self._lines_before(keep_from)
        self._buf = self._buf[keep_from - self._buf_start :]
        self._buf_start = keep_from
        floor = keep_from - TRACEBACK_REACH
        self._tracebacks = [t for t in self._tracebacks if t >= floor]


def regions(chunks: Iterable[bytes], engine: CandidateEngine, before: int, after: int) -> Iterator[Region]:
    finder = RegionFinder(engine, before, after)
    for chunk in chunks:
        yield from finder.feed(chunk)
    yield from finder.finish()
