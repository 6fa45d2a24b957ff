"""The fast path: scan big buffers for candidates, then frame only the lines around them.

A log of gigabytes is mostly healthy noise. The candidate engine finds, at C speed, every offset where a
catalog anchor or a structural pattern (traceback header, exception line, exit summary) occurs. Around
each candidate we frame a region: `before` lines back (or back to the traceback it belongs to), `after`
lines forward. Regions are merged and emitted in file order with their true line numbers, so the
analysis sees exactly the lines it would have needed from the full stream.

Chunks are kept as they were read (no concatenation, no copies of big buffers): a window of the last
chunks, dropped once no pending candidate can reach back into them. Memory: a few chunks.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from denpex.ingest.lines import MAX_LINE_BYTES, OpenLine, cut_line
from denpex.scan.coloured import ESC, ShownCache, coloured_lines, cut_line_ends, outside, scan_shown
from denpex.scan.engines import CandidateEngine, line_rank
from denpex.scan.newlines import count_newlines
from denpex.scan.repeats import RepeatFilter, repeat_key
from denpex.scan.world_size import COLOURED_WORD, WORD_LENGTH, at_word, in_line, larger, largest_in_line

TRACEBACK_REACH = 256 << 10  # a candidate inside a traceback pulls in its header when it is this close
_OPEN_LINE_KEY_BYTES = 4 << 20  # a longer line cut by chunk ends is analysed, not compared with others
# a line holding a candidate is kept whole up to this length while it runs across chunks, so that its framing
# sees what the line path sees (its first 4 MiB, ingest.lines.cut_line); a longer one loses its head
_LONG_LINE_KEPT = 2 * _OPEN_LINE_KEY_BYTES
# Skipping copies before the scan costs ~1 us a line (keys for every line) and saves the scan's callbacks and
# per-candidate work: worth it when most lines hold a candidate. Enter on this many candidate ends in a chunk
# (~2 per candidate line), stay while most lines are settled copies and candidates stay many.
_DENSE_ENTER = 2048
_DENSE_CHUNK = 512
# after a dense try that found few copies, wait 1, 2, 4 ... up to this many chunks before the next: a log's first
# dense chunk holds only new lines (no copies yet), and one fixed 64-chunk wait left 64 MiB of a 100%-dense log
# on the slower ordinary path
_DENSE_COOLDOWN = 64
# the last line of each rank is looked for in the chunks held at the end, over at most this many lines (tens
# of ms at most, once per input: line_rank takes ~0.4 us a line), for at most this many ranks
_LAST_WORDS_LINES = 50_000
_LAST_WORDS_RANKS = 4096
_EDGE = 512  # bytes on each side of a chunk boundary scanned again for anchors that straddle it


@dataclass(slots=True)
class Region:
    start: int  # absolute byte offset of the first line
    end: int  # absolute byte offset just past the last line's newline
    first_line: int  # 1-based number of the first line
    data: bytes
    hits: list[int] = field(default_factory=list)  # candidate end offsets (absolute) inside the region


@dataclass
class ScanStats:
    candidates: int = 0
    regions: int = 0
    lines_total: int = 0
    ranks: set[int] = field(default_factory=set)
    world_size: int | None = None  # the largest the lines read print (scan.world_size)


@dataclass(slots=True)
class _Segment:
    start: int  # absolute offset of data[0]
    data: bytes
    line0: int  # newlines before start

    @property
    def end(self) -> int:
        return self.start + len(self.data)


# lines framed before every candidate, whatever the context asked for: the analysis reads that many back (the
# ranks of the 3 lines before; the ranked lines of a rankless line's launcher tag, analyze.stream_tags)
MIN_BEFORE = 16


class RegionFinder:
    """Feed chunks of one input in order; get back the regions to frame, in order."""

    def __init__(
        self,
        engine: CandidateEngine,
        before: int,
        after: int,
        keep: int = 2,
        accept: tuple[int, int] | None = None,
        repeats: RepeatFilter | None = None,
    ) -> None:
        """accept=(lo, hi): only candidates ending in (lo, hi] start regions (a parallel worker's share).
        repeats: candidate lines that repeat lines already analysed start no region (scan.repeats)."""
        self.engine = engine
        self.accept = accept
        self.repeats = repeats
        self._dense = False  # the last chunk was dense with candidates: count copies before scanning
        self._dense_cooldown = 0  # chunks before trying that again, after a try where copies were few
        self._dense_misses = 0  # dense tries in a row that found few copies (the cooldown doubles with each)
        self._open_start: int | None = None  # a line cut by the last chunk's end: where it starts
        self._open_ends: list[int] = []  # and its candidates, judged once the line is whole
        self.before = max(before, MIN_BEFORE)
        self.after = max(after, 1)
        self.keep = max(keep, 2)  # chunks kept for back context
        self.stats = ScanStats()
        self._segments: list[_Segment] = []
        self._next_start = 0
        self._next_line0 = 0
        self._pending: list[int] = []  # candidate end offsets not yet emitted, sorted
        self._tracebacks: list[int] = []
        self._emitted = 0  # absolute offset up to which lines were emitted
        self._open_line = OpenLine()  # the line not yet ended, as the line path will read it
        self._open_sizes = False  # that line holds a world-size word: read it when it ends
        self._words: list[int] = []  # this chunk's world-size word ends (chunk offsets)
        self._coloured: list[tuple[int, int]] = []  # this chunk's whole lines with colour codes (scan.coloured)
        self._shown = ShownCache()
        self._straddling_word = False  # a word straddles this chunk's start
        self._size_floor = 0  # the largest world size the engine was told of

    def feed(self, chunk: bytes) -> Iterator[Region]:
        """The next chunk of the input."""
        if not chunk:
            return
        starts_line = not self._segments or self._segments[-1].data.endswith(b"\n")
        seg = _Segment(self._next_start, chunk, self._next_line0)
        self._next_start = seg.end
        self._next_line0 += count_newlines(chunk)
        self._straddling_word = False
        dense = self._scan_dense(seg, starts_line) if self._dense else None
        if dense is not None:
            found, heads = dense
        else:
            first_nl = -1 if starts_line else chunk.find(b"\n")
            last_nl = chunk.rfind(b"\n")
            # ranks from the lines whole in the chunk; the lines cut by its edges are judged whole (_read_across)
            result = self.engine.scan(chunk, lines=(first_nl + 1, last_nl + 1))
            self.stats.ranks |= result.ranks
            self._words = result.sizes
            candidates, tracebacks = result.candidates, result.tracebacks
            if chunk.find(ESC) >= 0:  # coloured lines are candidates as their shown text is
                self._coloured = coloured_lines(chunk, first_nl + 1, last_nl) if last_nl > first_nl else []
                shown = scan_shown(self.engine, chunk, self._coloured, self._shown)
                self.stats.ranks |= shown.ranks
                candidates = sorted(outside(self._coloured, candidates) + shown.ends
                                    + cut_line_ends(chunk, first_nl, last_nl))
                tracebacks = tracebacks + shown.tracebacks
            ends = self._accepted(seg.start, candidates)
            heads = [seg.start + off for off in tracebacks]
            if not starts_line:
                crossing, crossing_heads = self._crossing(seg, first_nl, candidates)
                ends += crossing
                heads += crossing_heads
            self._segments.append(seg)
            found = self._admitted(seg, ends, starts_line)
            # a chunk of mostly candidate lines: the next one skips the copies before scanning
            self._dense_cooldown -= 1
            self._dense = self.repeats is not None and len(ends) > _DENSE_ENTER and self._dense_cooldown <= 0
        self._read_across(seg, starts_line)
        if self.stats.world_size is not None and self.stats.world_size > self._size_floor:
            self._size_floor = self.stats.world_size  # smaller values in whole lines need not be reported
            self.engine.raise_size_floor(self._size_floor)
        self.stats.candidates += len(found)
        if found:
            self._pending = sorted(set(self._pending) | found) if self._pending else sorted(found)
        if heads:
            self._tracebacks = sorted(set(self._tracebacks) | set(heads))
        yield from self._emit(final=False)
        self._drop_old()

    def _crossing(self, seg: _Segment, first_nl: int, own: list[int]) -> tuple[list[int], list[int]]:
        """Anchors that straddle the boundary with the previous chunk (on the line that spans it)."""
        prev = self._segments[-1]
        edge_start = prev.end - min(_EDGE, len(prev.data))
        straddle = self.engine.scan(prev.data[-_EDGE:] + seg.data[:_EDGE], ranks=False)
        known = set(own)
        limit = first_nl if first_nl >= 0 else len(seg.data)
        crossing = [edge_start + off - seg.start for off in straddle.candidates
                    if 0 < edge_start + off - seg.start <= limit and edge_start + off - seg.start not in known]
        self._straddling_word = any(0 < edge_start + off - seg.start < WORD_LENGTH for off in straddle.sizes)
        return self._accepted(seg.start, crossing), [edge_start + off for off in straddle.tracebacks]

    def _scan_dense(self, seg: _Segment, starts_line: bool) -> tuple[set[int], list[int]] | None:
        """The chunk after a dense one: copies of analysed lines are counted before scanning (repeats).

        None: this chunk is not fit for it (a worker's chunk past its share, a line as long as the chunk); it
        takes the ordinary path."""
        assert self.repeats is not None
        chunk = seg.data
        first_nl = -1 if starts_line else chunk.find(b"\n")
        last_nl = chunk.rfind(b"\n")
        if last_nl <= first_nl + 1 or (self.accept is not None
                                       and not self.accept[0] <= seg.start < seg.end <= self.accept[1]):
            self._dense = False
            return None
        # the partial lines at both ends are scanned as the ordinary path scans them
        head = chunk[: first_nl + 1] if not starts_line else b""
        tail = chunk[last_nl + 1 :]
        ends: list[int] = []
        heads: list[int] = []
        # the middle's lines are judged by their keys, but every line's world size counts (copies too)
        words = self.engine.word_ends(chunk, first_nl + 1, last_nl)
        for offset, piece in ((0, head), (last_nl + 1, tail)):
            if piece:  # lines cut by the chunk's edges: _read_across takes their ranks from the whole line
                scanned = self.engine.scan(piece, ranks=False)
                ends += [offset + e for e in scanned.candidates]
                ends += [offset + e for e in cut_line_ends(piece, -1, -1)]  # judged whole, as shown, later
                heads += [seg.start + offset + t for t in scanned.tracebacks]
                words += [offset + e for e in scanned.sizes]
                self.stats.ranks |= scanned.ranks
        self._words = sorted(words)
        self._coloured = coloured_lines(chunk, first_nl + 1, last_nl) if chunk.find(ESC) >= 0 else []
        if not starts_line:
            crossing, crossing_heads = self._crossing(seg, first_nl, ends)
            ends += crossing
            heads += crossing_heads
        self._segments.append(seg)
        found = self._admitted(seg, ends, starts_line)  # the middle holds no ends here: only the edges
        dense = self.repeats.scan_dense(self.engine, chunk, first_nl + 1, last_nl)
        self.stats.ranks |= dense.ranks
        found.update(seg.start + off for off in dense.kept)
        heads += [seg.start + off for off in dense.tracebacks]
        # worth it while copies make most of the text; a chunk of fresh lines goes back to the ordinary scan
        self._dense = dense.candidates > _DENSE_CHUNK and dense.settled * 3 > dense.lines * 2
        if self._dense:
            self._dense_misses = 0
        else:
            self._dense_cooldown = min(1 << self._dense_misses, _DENSE_COOLDOWN)
            self._dense_misses = min(self._dense_misses + 1, _DENSE_COOLDOWN.bit_length())
        return found, heads

    def _read_across(self, seg: _Segment, starts_line: bool) -> None:
        """Read the world size (scan.world_size) where this chunk's words are: in place on the lines whole in the
        chunk; on the whole line, once it ends, for a line cut by the chunk's edges. A line over MAX_LINE_BYTES
        is read as the line path reads it: what cut_line keeps of it. The ranks of a line cut by the chunk's
        start are read here too, from the whole line (a marker after the cut may follow one before it)."""
        chunk, words = seg.data, self._words
        self._words = []
        first_nl = -1 if starts_line else chunk.find(b"\n")
        last_nl = chunk.rfind(b"\n")
        if last_nl < 0:  # the whole chunk is on one line, begun here or before
            self._open_line.add(chunk)
            self._open_sizes = self._open_sizes or self._straddling_word or bool(words)
            return
        head = self._straddling_word  # a word on the line that began before this chunk (and ends in it)
        tail = False  # a word on the line this chunk leaves unfinished
        may_hold_long_lines = len(chunk) > MAX_LINE_BYTES
        coloured, self._coloured = self._coloured, []
        self._read_coloured(chunk, coloured)
        line_end, long_line = -1, False
        for end in words:
            if end <= first_nl:
                head = True
            elif end > last_nl:
                tail = True
            elif coloured and _inside(coloured, end):
                continue  # read on its shown text
            elif not may_hold_long_lines:
                self._note_size(at_word(chunk, end))
            else:
                if end > line_end:  # the first word of its line
                    line_start = chunk.rfind(b"\n", 0, end) + 1
                    line_end = chunk.find(b"\n", end)
                    long_line = line_end - line_start > MAX_LINE_BYTES
                    if long_line:
                        self._note_size(largest_in_line(cut_line(chunk[line_start:line_end])))
                if not long_line:
                    self._note_size(at_word(chunk, end))
        if not starts_line:
            self._read_line(self._open_line.close(chunk[:first_nl]), self._open_sizes or head)
        self._open_line.add(chunk[last_nl + 1:])
        self._open_sizes = tail

    def _read_coloured(self, chunk: bytes, coloured: list[tuple[int, int]]) -> None:
        """The world size of the whole lines with colour codes ((start, end) offsets in chunk), read on their
        shown text (scan.world_size.in_line): their words are not read in place."""
        for line_start, line_end in coloured:
            # every word holds a z or a Z, and few lines do: two memchr before the regex
            may_hold_word = chunk.find(b"z", line_start, line_end) >= 0 or chunk.find(b"Z", line_start, line_end) >= 0
            if may_hold_word and COLOURED_WORD.search(chunk, line_start, line_end) is not None:
                line = chunk[line_start:line_end]
                self._note_size(in_line(line if len(line) <= MAX_LINE_BYTES else cut_line(line)))

    def _read_line(self, line: bytes, sizes: bool) -> None:
        """A line that ran across chunks has ended: its ranks, and its world size when it holds a word (or may:
        a colour code can split one, and the scanners do not see it then)."""
        rank = line_rank(line)
        if rank is not None:
            self.stats.ranks.add(rank)
        if b"\x1b" in line:
            self._note_size(in_line(line))
        elif sizes:
            self._note_size(largest_in_line(line))

    def _note_size(self, size: int | None) -> None:
        self.stats.world_size = larger(self.stats.world_size, size)

    def _accepted(self, base: int, ends: list[int]) -> list[int]:
        """Candidate ends (relative to base) inside this worker's share: the neighbours count theirs."""
        if self.accept is None:
            return ends
        lo, hi = self.accept[0] - base, self.accept[1] - base
        return [off for off in ends if lo < off <= hi]

    def _admitted(self, seg: _Segment, ends: list[int], starts_line: bool) -> set[int]:
        """Absolute ends of the candidate lines to analyse: repeats of analysed lines are only counted.

        A line cut by the chunk's end waits for the chunk that completes it, so that it is judged whole,
        as the line path judges it."""
        if self.repeats is None:
            return {seg.start + off for off in ends}
        chunk = seg.data
        first_nl = -1 if starts_line else chunk.find(b"\n")
        last_nl = chunk.rfind(b"\n")
        found: set[int] = set()
        if not starts_line:  # the open line goes on into this chunk
            head = [seg.start + off for off in ends if first_nl < 0 or off <= first_nl]
            if head and not self._open_ends:  # one hit per line is enough to frame it
                self._open_ends = [min(head)]
            if first_nl < 0:
                return found
            found |= self._close_open_line(seg.start + first_nl)
            ends = [off for off in ends if off > first_nl]
        tail = [off for off in ends if off > last_nl]
        middle = [off for off in ends if off <= last_nl]
        found.update(seg.start + off for off in self.repeats.admit_chunk(chunk, middle, True, first_nl + 1))
        if last_nl + 1 < len(chunk):
            self._open_start = seg.start + last_nl + 1
            self._open_ends = [seg.start + min(tail)] if tail else []
        return found

    def _close_open_line(self, end: int) -> set[int]:
        """The line that began in an earlier chunk ends at `end`: analyse it or count it."""
        ends, start = self._open_ends, self._open_start
        self._open_ends, self._open_start = [], None
        if not ends or start is None:
            return set()
        assert self.repeats is not None
        if start < self._segments[0].start or end - start > _OPEN_LINE_KEY_BYTES:  # too long to keep whole
            return set(ends)
        return set(ends) if self.repeats.admit(repeat_key(self._slice(start, end))) else set()

    @property
    def lines_read(self) -> int:
        """Newlines in everything fed so far."""
        return self._next_line0

    def finish(self, at_end: bool = True) -> Iterator[Region]:
        """at_end: this finder read to the input's end, whose last lines are always framed: a job ends
        there, and the last lines of each rank (who went silent, and where) are the silence evidence."""
        if self._open_ends:  # the last line has no newline
            found = self._close_open_line(self._next_start)
            self._pending = sorted(set(self._pending) | found)
        if at_end and self._segments and self._next_start > self._emitted:
            last_words = {start for start in self._last_lines_of_ranks() if start > self._emitted}
            self._pending = sorted(set(self._pending) | {self._next_start} | last_words)
        if at_end and self._open_line:  # the last line has no newline
            self._read_line(self._open_line.close(), self._open_sizes)
        yield from self._emit(final=True)
        last = self._segments[-1].data if self._segments else b""
        self.stats.lines_total = self._next_line0 + (1 if last and not last.endswith(b"\n") else 0)

    def _last_lines_of_ranks(self) -> set[int]:
        """Where the last line of each rank starts, for the ranks whose last line is in the chunks still held.
        Framed with the input's last lines: a rank that went quiet a few hundred lines before the end (the
        silence evidence) had as its last line whatever line of it a candidate happened to frame, thousands of
        lines earlier. A point at a line's start frames it without making it a candidate (scan.fast)."""
        wanted = set(self.stats.ranks)
        if not wanted or len(wanted) > _LAST_WORDS_RANKS:
            return set()
        window = b"".join(seg.data for seg in self._segments)
        base = self._segments[0].start
        floor = window.find(b"\n") + 1 if base > 0 else 0  # the held chunks may begin inside a line
        end = len(window) - 1 if window.endswith(b"\n") else len(window)
        starts: set[int] = set()
        for _ in range(_LAST_WORDS_LINES):
            if not wanted or end <= floor:
                break
            start = window.rfind(b"\n", floor, end) + 1 or floor
            rank = line_rank(window[start:end])
            if rank in wanted:
                wanted.discard(rank)
                starts.add(base + start)
            end = start - 1
        return starts

    # -- byte access across segments -----------------------------------------------------------
    def _seg_index(self, offset: int) -> int:
        starts = [s.start for s in self._segments]
        return max(bisect.bisect_right(starts, offset) - 1, 0)

    def _rfind_nl(self, offset: int, floor: int) -> int:
        """Offset of the last newline before `offset` and at or after `floor`; -1 if none."""
        i = self._seg_index(offset)
        while i >= 0:
            seg = self._segments[i]
            lo = max(floor, seg.start) - seg.start
            hi = min(offset, seg.end) - seg.start
            if hi > lo:
                pos = seg.data.rfind(b"\n", lo, hi)
                if pos >= 0:
                    return seg.start + pos
            if seg.start <= floor:
                return -1
            i -= 1
        return -1

    def _find_nl(self, offset: int) -> int | None:
        """Offset of the first newline at or after `offset`; None if it has not been read yet."""
        for seg in self._segments[self._seg_index(offset) :]:
            if seg.end <= offset:
                continue
            pos = seg.data.find(b"\n", max(offset - seg.start, 0))
            if pos >= 0:
                return seg.start + pos
        return None

    def _slice(self, start: int, end: int) -> bytes:
        parts = []
        for seg in self._segments:
            if seg.end <= start or seg.start >= end:
                continue
            parts.append(seg.data[max(start - seg.start, 0) : min(end, seg.end) - seg.start])
        return b"".join(parts)

    def _lines_before(self, offset: int) -> int:
        seg = self._segments[self._seg_index(offset)]
        return seg.line0 + count_newlines(seg.data, 0, offset - seg.start)

    # -- regions -------------------------------------------------------------------------------
    def _floor(self) -> int:
        return max(self._emitted, self._segments[0].start if self._segments else 0)

    def _back(self, offset: int, lines: int) -> int:
        """Start of the line `lines` lines before the one holding the match ending at `offset`."""
        floor = self._floor()
        pos = self._rfind_nl(offset - 1, floor)
        for _ in range(lines):
            if pos < 0:
                return floor
            pos = self._rfind_nl(pos, floor)
        return max(pos + 1, floor)

    def _forward(self, offset: int, lines: int) -> int | None:
        """End (past the newline) of the line `lines` lines after the one holding the match ending at `offset`."""
        pos = offset - 2
        for _ in range(lines + 1):
            found = self._find_nl(pos + 1)
            if found is None:
                return None
            pos = found
        return pos + 1

    def _emit(self, final: bool) -> Iterator[Region]:
        data_end = self._next_start
        while self._pending:
            first = self._pending[0]
            if first <= self._emitted:  # inside a region already emitted
                self._pending.pop(0)
                continue
            start = self._back(first, self.before)
            header = self._traceback_before(first)
            if header is not None and self._floor() <= header < start:
                start = self._back(header + 1, 0)
            end = self._forward(first, self.after)
            if end is None:
                if not final:
                    return
                end = data_end
            taken = 1
            line_end = self._find_nl(first - 1)  # hits on the first hit's line reach as far as it does
            while taken < len(self._pending) and self._pending[taken] <= end:
                if line_end is not None and self._pending[taken] <= line_end:
                    taken += 1
                    continue
                line_end = self._find_nl(self._pending[taken] - 1)
                nxt = self._forward(self._pending[taken], self.after)
                if nxt is None:
                    if not final:
                        return
                    nxt = data_end
                end = max(end, nxt)
                taken += 1
            hits = self._pending[:taken]
            del self._pending[:taken]
            self._emitted = end
            self.stats.regions += 1
            yield Region(start, end, self._lines_before(start) + 1, self._slice(start, end), hits)

    def _traceback_before(self, offset: int) -> int | None:
        i = bisect.bisect_right(self._tracebacks, offset) - 1
        if i >= 0 and offset - self._tracebacks[i] <= TRACEBACK_REACH:
            return self._tracebacks[i]
        return None

    def _drop_old(self) -> None:
        """Drop chunks no pending candidate can reach back into (beyond the last `keep`, and beyond
        TRACEBACK_REACH bytes of history whatever the chunk size: a later candidate's back context is there)."""
        while len(self._segments) > self.keep:
            oldest = self._segments[0]
            if self._pending and self._pending[0] - TRACEBACK_REACH < oldest.end:
                break
            if (self._open_ends and self._open_start is not None and oldest.end > self._open_start - TRACEBACK_REACH
                    and self._next_start - self._open_start <= _LONG_LINE_KEPT):
                break  # a candidate on a long line not yet ended: keep its head, the line path reads it too
            if self._next_start - oldest.end < TRACEBACK_REACH:
                break
            self._segments.pop(0)
        floor = self._segments[0].start - TRACEBACK_REACH if self._segments else 0
        if self._tracebacks and self._tracebacks[0] < floor:
            self._tracebacks = [t for t in self._tracebacks if t >= floor]


def _inside(spans: list[tuple[int, int]], offset: int) -> bool:
    """Is `offset` inside one of the sorted (start, end) spans, end included?"""
    i = bisect.bisect_right(spans, (offset, 1 << 62)) - 1
    return i >= 0 and offset <= spans[i][1]


def regions(chunks: Iterable[bytes], engine: CandidateEngine, before: int, after: int) -> Iterator[Region]:
    finder = RegionFinder(engine, before, after)
    for chunk in chunks:
        yield from finder.feed(chunk)
    yield from finder.finish()
