"""Near-identical candidate lines are analysed a few times, then only counted.

Real logs repeat themselves: the same warning every step, the same error on 1,024 ranks, an OOM line printed
in a loop. Analysing every copy costs Python work per line and adds nothing. So a candidate line whose key
was already analysed in the same input is not framed or matched again; it is counted under the findings
its first copy produced. The key is the line with its digits masked (timestamps, step numbers, addresses,
sizes), except where the digits may name a rank:
- the rank prefix (`[rank3]:`, `[1,3]<stderr>:`, `[rank: 3]`) keeps its digits: a rank whose only error is
  a copy of another rank's is not silent;
- a line that names a rank or a process in its message (`Rank 3 is running collective`, `local_rank: 2`,
  `process 1 terminated`) counts only exact copies.
Masking keeps lengths, so `exit code 1` and `exit code 137` stay apart.

Both paths apply the same rule to the same lines (the scanning engine's candidate lines, in file order), so
the line path and the fast path analyse the same lines.
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate, compress, repeat
from operator import getitem, methodcaller

from denpex.ingest.lines import shown_bytes, shown_lines
from denpex.masking import MASK_DIGITS as _MASK_DIGITS
from denpex.scan.coloured import newline_offsets
from denpex.scan.engines import TRACEBACK, CandidateEngine, ScanResult

MAX_KEYS = 1 << 16  # distinct keys tracked per input; past this, new keys are always analysed (memory bound)
PREFIX_REACH = 24  # a rank prefix ends with "]" within this many bytes of the line's start
_ONE = (1).__add__
_HAS_ESC = methodcaller("__contains__", b"\x1b")
_HAS_CR = methodcaller("__contains__", b"\r")


@dataclass(slots=True)
class DenseScan:
    kept: list[int]  # chunk offsets (a line's newline) of the lines to analyse
    tracebacks: list[int]  # chunk offsets of traceback headers
    ranks: set[int]
    candidates: int  # candidate lines, copies included
    settled: int  # lines judged by their key alone, without a scan
    lines: int


def repeat_key(raw: bytes) -> int:
    """The line's identity for counting repeats: digits masked except in its rank prefix; judged on the text
    as shown (colour codes and CR redraws resolved), so a coloured copy is a copy."""
    raw = shown_bytes(raw)
    head = raw.find(b"]", 0, PREFIX_REACH) + 1
    if _names_a_rank(raw, head):
        return hash(raw)
    return hash((raw[:head], raw.translate(_MASK_DIGITS)))


def _names_a_rank(raw: bytes, head: int) -> bool:
    """rank, Rank, local_rank, RANK, process, Process after the prefix; spelt out, not any() over a tuple:
    called once per distinct line, the generator cost a coloured log 0.3 s."""
    return raw.find(b"ank", head) >= 0 or raw.find(b"ANK", head) >= 0 or raw.find(b"rocess", head) >= 0


def _lines_holding(data: bytes, start: int, end: int, needle: bytes) -> list[int]:
    """Indices of the lines of data[start:end] (split at newlines) that hold `needle`, in order.

    A find loop that jumps to the next line after each hit: C searches per line that holds it, not a test
    per line (a coloured chunk: 3x faster than testing every line)."""
    found: list[int] = []
    line = 0
    after = start  # where the line after the last one found starts
    at = data.find(needle, start, end)
    while at >= 0:
        line += data.count(b"\n", after, at)
        found.append(line)
        newline = data.find(b"\n", at, end)
        if newline < 0:
            break
        after = newline + 1
        line += 1
        at = data.find(needle, after, end)
    return found


def _repeat_keys(lines: list[bytes]) -> list[int]:
    """repeat_key of each line, with the per-line work in C: a dense chunk has one candidate per line."""
    return _keys_of_shown(_shown_lines(lines))


def _shown_lines(lines: list[bytes], region: tuple[bytes, int, int] | None = None) -> list[bytes]:
    """The lines as shown (shown_bytes): only those with a colour code or a CR change. `region` (data, start,
    end) holds every line joined: those lines are found there (`_lines_holding`)."""
    if region is None:
        redrawn = set(compress(range(len(lines)), map(_HAS_ESC, lines)))
        redrawn.update(compress(range(len(lines)), map(_HAS_CR, lines)))
    else:  # only the lines with a colour code or a CR change when shown (a coloured log has a fifth of them)
        redrawn = set(_lines_holding(*region, b"\x1b"))
        redrawn.update(_lines_holding(*region, b"\r"))
    if redrawn:
        lines = list(lines)
        order = sorted(redrawn)
        for i, line in zip(order, shown_lines(list(map(lines.__getitem__, order))), strict=True):
            lines[i] = line
    return lines


def _keys_of_shown(lines: list[bytes]) -> list[int]:
    """repeat_key of each line already shown. Masking changes digits only, so where the rank prefix ends, and
    whether the message names a rank, are properties of the masked text: they are worked out once per
    distinct masked line."""
    # line by line, not the region in one pass: a 1 MB temporary per chunk is a fresh mmap each time, and its
    # page faults cost more than the pass saves (2 GiB of one repeated line: +5 s of system time)
    # the unbound method over repeat(table) and one slice object per distinct masked line: ~15% of a dense chunk's
    # keys, against methodcaller and a slice built per line
    masked = list(map(bytes.translate, lines, repeat(_MASK_DIGITS)))
    prefix: dict[bytes, slice] = {}  # the rank prefix of each distinct masked line, as a slice of the raw line
    naming: set[bytes] = set()
    for m in set(masked):
        head = m.find(b"]", 0, PREFIX_REACH) + 1
        prefix[m] = slice(0, head)
        if _names_a_rank(m, head):
            naming.add(m)
    names = list(map(naming.__contains__, masked)) if naming else []
    if names and all(names):  # every line names a rank or a process (an OOM line's `Process 4242 has ...`)
        return list(map(hash, lines))
    keys = list(map(hash, zip(map(getitem, lines, map(prefix.__getitem__, masked)), masked, strict=True)))
    for i in compress(range(len(keys)), names):  # those count only exact copies
        keys[i] = hash(lines[i])
    return keys


class RepeatFilter:
    """Per input: which candidate lines to analyse, and how many copies were only counted, per key."""

    def __init__(self) -> None:
        self.seen: set[int] = set()  # keys of candidate lines analysed: later copies are counted
        self.skipped: dict[int, int] = {}
        self.plain: set[int] = set()  # keys of lines that were no candidate: copies need no scan either
        self.settled: set[int] = set()  # seen | plain, kept as one set for the dense scan's membership pass

    def note_plain(self, key: int) -> None:
        """A line with this key was scanned and held no candidate."""
        if len(self.plain) < MAX_KEYS:
            self.plain.add(key)
            self.settled.add(key)

    def admit(self, key: int) -> bool:
        """Count one occurrence; True for the first of its key (analyse it)."""
        if key not in self.seen:
            if len(self.seen) < MAX_KEYS:
                self.seen.add(key)
                self.settled.add(key)
            return True
        self.skipped[key] = self.skipped.get(key, 0) + 1
        return False

    def admit_chunk(self, chunk: bytes, ends: list[int], starts_line: bool = True, start: int = 0) -> list[int]:
        """Candidate end offsets (into `chunk`) of the lines to analyse, one per line; lines in order.

        Only the whole lines from `start` to the chunk's last newline are judged; the caller deals with a
        line cut by the chunk's edges (`starts_line` False: the chunk's first line began earlier). Offsets
        outside are returned as they are.
        """
        if not ends:
            return []
        if not starts_line:
            start = max(start, chunk.find(b"\n") + 1)
        last_nl = chunk.rfind(b"\n")
        kept = [e for e in ends if e > last_nl or e <= start]
        whole = sorted({e for e in ends if start < e <= last_nl})
        if not whole:
            return kept
        return self._admit_lines(chunk, whole) + kept

    def scan_dense(self, engine: CandidateEngine, chunk: bytes, start: int, last_nl: int) -> DenseScan:
        """Scan the whole lines chunk[start:last_nl] of a chunk dense with repeats, skipping every line whose
        key is settled: a copy of an analysed line is counted, a copy of a line that held no candidate is
        passed over, neither is scanned (no match callbacks, no per-candidate work).

        The rest is scanned as one buffer. A copy is judged by its key alone: its digits cannot change whether it
        is a candidate, since the engines match an anchor's digits as any digit (`[Errno 28]` as `[Errno dd]`).
        """
        lines = chunk[start:last_nl].split(b"\n")
        shown = _shown_lines(lines, (chunk, start, last_nl))  # scanned as shown, as on the line path
        keys = _keys_of_shown(shown)
        seen, skipped, settled = self.seen, self.skipped, self.settled
        # looked up once per distinct key, not per line: a dense chunk holds a few keys many times over
        copies = 0
        unsettled: set[int] = set()
        for key, n in Counter(keys).items():
            if key in seen:
                skipped[key] = skipped.get(key, 0) + n
                copies += n
            elif key not in settled:
                unsettled.add(key)
        heads: list[int] = []
        at = chunk.find(TRACEBACK, start, last_nl)
        while at >= 0:  # every header, copies included: a region reaches back to its traceback's header
            heads.append(at)
            at = chunk.find(TRACEBACK, at + 1, last_nl)
        fresh = list(compress(range(len(lines)), map(unsettled.__contains__, keys))) if unsettled else []
        result = ScanResult([], [], set())
        kept: list[int] = []
        if fresh:
            fresh_lines = list(map(shown.__getitem__, fresh))
            result = engine.scan(b"\n".join(fresh_lines) + b"\n")
            buffer_ends = newline_offsets(fresh_lines)
            hit_lines = set(map(bisect.bisect_left, repeat(buffer_ends), result.candidates))
            if hit_lines:  # where each line starts in the chunk: [i] for line i
                line_starts = list(accumulate(map(_ONE, map(len, lines)), initial=start))
            for j, i in enumerate(fresh):
                if j not in hit_lines:
                    self.note_plain(keys[i])
                elif self.admit(keys[i]):
                    kept.append(line_starts[i] + len(lines[i]))  # the line's newline: a hit on that line
        return DenseScan(kept, heads, result.ranks, copies + len(kept), len(lines) - len(fresh), len(lines))

    def _admit_lines(self, chunk: bytes, ends: list[int]) -> list[int]:
        """The first end on each line, its line looked up alone; keys made in one batch, admitted in order.

        Looking each line up (two C searches) beat splitting the chunk into lines at every density measured:
        at 10% of lines a candidate, 0.85 vs 1.28 CPU s for 256 MiB; at 100%, the same."""
        firsts: list[int] = []
        lines: list[bytes] = []
        line_end = -1
        for end in ends:
            if end <= line_end:  # another hit on the line just found
                continue
            start = chunk.rfind(b"\n", 0, end) + 1
            line_end = chunk.find(b"\n", end - 1)
            firsts.append(end)
            lines.append(chunk[start:line_end])
        admit = self.admit
        return [end for end, key in zip(firsts, _repeat_keys(lines), strict=True) if admit(key)]
