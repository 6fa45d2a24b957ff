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
from itertools import accumulate

ANALYSED_PER_KEY = 1
MAX_KEYS = 1 << 16  # distinct keys tracked per input; past this, new keys are always analysed (memory bound)
PREFIX_REACH = 24  # a rank prefix ends with "]" within this many bytes of the line's start
_MASK_DIGITS = bytes.maketrans(b"123456789", b"000000000")  # length kept: `exit code 1` is not `exit code 137`
_RANK_WORDS = (b"ank", b"ANK", b"rocess")  # rank, Rank, local_rank, RANK, process, Process
_DENSE = 512  # candidates in one chunk above which lines are split once rather than searched one by one
_ONE = (1).__add__


def repeat_key(raw: bytes) -> int:
    """The line's identity for counting repeats: digits masked except in its rank prefix."""
    head = raw.find(b"]", 0, PREFIX_REACH) + 1
    body = raw[head:]
    if any(word in body for word in _RANK_WORDS):
        return hash(raw)
    return hash(raw[:head] + body.translate(_MASK_DIGITS))


class RepeatFilter:
    """Per input: which candidate lines to analyse, and how many copies were only counted, per key."""

    def __init__(self, limit: int = ANALYSED_PER_KEY) -> None:
        self.limit = limit
        self.seen: dict[int, int] = {}
        self.skipped: dict[int, int] = {}

    def admit(self, key: int) -> bool:
        """Count one occurrence; True when it is among the first `limit` of its key (analyse it)."""
        seen = self.seen.get(key)
        if seen is None:
            if len(self.seen) < MAX_KEYS:
                self.seen[key] = 1
            return True
        if seen < self.limit:
            self.seen[key] = seen + 1
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
        if len(whole) <= _DENSE:
            return self._admit_sparse(chunk, whole) + kept
        return self._admit_dense(chunk, whole, start, last_nl) + kept

    def _admit_sparse(self, chunk: bytes, ends: list[int]) -> list[int]:
        kept: list[int] = []
        line_end = -1
        for end in ends:
            if end <= line_end:  # another hit on the line just decided
                continue
            start = chunk.rfind(b"\n", 0, end) + 1
            line_end = chunk.find(b"\n", end - 1)
            if self.admit(repeat_key(chunk[start:line_end])):
                kept.append(end)
        return kept

    def _admit_dense(self, chunk: bytes, ends: list[int], start: int, last_nl: int) -> list[int]:
        lines = chunk[start:last_nl].split(b"\n")
        line_ends = list(accumulate(map(_ONE, map(len, lines)), initial=start))[1:]  # past each line's newline
        first: dict[int, int] = {}  # line index -> the first candidate end on it, in order
        for end in ends:
            first.setdefault(bisect.bisect_left(line_ends, end), end)
        keys = [repeat_key(lines[i]) for i in first]
        counts = Counter(keys)
        if all(self.seen.get(key, 0) >= self.limit for key in counts):  # the common case: all repeats
            for key, n in counts.items():
                self.skipped[key] = self.skipped.get(key, 0) + n
            return []
        return [end for end, key in zip(first.values(), keys, strict=True) if self.admit(key)]
