"""Candidate finders for the fast path: find, in big byte buffers, where a catalog signature might hit.

They only have to be *complete* (never miss a line the line matcher would match); the line matcher then
confirms each candidate line, so every engine gives the same findings. Three engines, fastest first:

- Hyperscan: one compiled database of every anchor plus the structural patterns, scanned in C.
- RE2 (google-re2): every anchor in one alternation; for machines without Hyperscan (e.g. ARM).
- Python: `bytes.find` per anchor; always available, slow with many anchors.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from denpex.cachefiles import cache_path, read_cached, write_cached
from denpex.catalog.loader import Catalog, derived
from denpex.ingest.lines import shown_bytes
from denpex.masking import MASK_DIGITS
from denpex.scan.world_size import WORD_LENGTH
from denpex.scan.world_size import WORDS as WORLD_SIZE_WORDS

# Besides the catalog's anchors, the analysis needs these lines framed: traceback headers (to know a
# line's place in a traceback), exception lines of any kind (uncaught exceptions no entry explains),
# torchrun's exit summaries (per-rank exit codes), the records of torch's C++ side (`[E socket.cpp:753]`),
# which are the failure of last resort when nothing else failed; the rows of a launcher's table of processes
# (Ray Train's `(ip=..., pid=22158) world_rank=2`), which map a pid to its rank. Lines with colour codes are
# scanned on their shown text (scan.coloured).
TRACEBACK = b"Traceback (most recent call last)"
STRUCTURAL_LITERALS = (TRACEBACK, b"exitcode", b"Error", b"Exception", b"Interrupt", b"SystemExit", b"Failed",
                       b".cpp:", b") world_rank=", b"what():")
# Besides candidates, every engine reports where the words of a job's size occur (scan.world_size): the value
# is read there, and those lines are not framed for it.
# A rank marker the straggler rule needs to know a rank exists even when it logged nothing special.
# The rank-marker forms every engine looks for; the first starts nearly every line of a torchrun log.
_RANK_FORMS = (b"[rank", b"[Rank ", b"[default")
_RANK_PREFIX = rb"(?:" + b"|".join(re.escape(form) for form in _RANK_FORMS) + b")"
_RANK_MARKER = re.compile(_RANK_PREFIX + rb"(\d{1,5})\]")
_LINE_HEAD_MARKER = re.compile(rb"(?:^|(?<=\n))" + _RANK_PREFIX + rb"(\d{1,5})\]")
_REDRAW = re.compile(rb"\r(?!\n)")  # a CR that is not a CRLF line end


@dataclass(slots=True)
class ScanResult:
    candidates: list[int]  # end offsets (exclusive) of possible hits
    tracebacks: list[int]  # byte offsets of traceback headers
    ranks: set[int]  # ranks seen in rank markers
    sizes: list[int] = field(default_factory=list)  # end offsets of the world-size words


class CandidateEngine(Protocol):
    name: str

    def scan(self, data: bytes, ranks: bool = True, lines: tuple[int, int] | None = None) -> ScanResult:
        """Candidates, traceback headers and ranks in `data`. A session may report a rank only the first time it
        sees it; ranks=False (a look at candidates only) leaves that state as it was. `lines`: ranks are taken
        only from these whole lines of `data`; before them a line begun earlier ends, after them one goes on.
        Which marker is a line's rank is known only from the whole line, which the caller judges (a chunk cut
        `[rank0]: step ... | [rank7] echoed`, or `[rank3]: 42%|# | ...\r[rank8]: redrawn`)."""
        ...

    def fresh(self) -> CandidateEngine:
        """The same compiled engine with the state of a new scan session (ranks already reported)."""
        ...

    def word_ends(self, data: bytes, start: int, stop: int) -> list[int]:
        """End offsets of the world-size words alone in data[start:stop], sorted: for the lines a dense chunk
        does not scan, and the rest of a line of many hits."""
        ...

    def raise_size_floor(self, size: int) -> None:
        """The largest world size read so far in this session: from now on a scan with `lines` may leave out the
        words inside those lines whose value cannot be larger (scan.world_size: only the largest counts). Words
        outside `lines` (cut by the buffer's edges, their digits maybe in the next buffer) and every word of a
        scan without `lines` are still reported. An engine may ignore it."""
        ...


def any_digits(pattern: bytes) -> bytes:
    """An escaped anchor whose digits match any digit. Repeat keys mask digits (scan.repeats), so copies of a line
    that differ in digits must all be candidates or none: `[Errno 28]` found in one copy and not in its copy
    `[Errno 27]` counted one where the line path, which judges a copy by its key, counted both."""
    return re.sub(rb"[0-9]", rb"[0-9]", pattern)


def anchors_of(catalog: Catalog) -> tuple[list[bytes], list[bytes]]:
    """(case-sensitive anchors, case-insensitive anchors lower-cased), deduplicated."""
    plain: dict[bytes, None] = {}
    folded: dict[bytes, None] = {}
    for entry in catalog.entries:
        for sig in entry.signatures:
            if sig.ignore_case:
                folded[sig.anchor.lower().encode()] = None
            else:
                plain[sig.anchor.encode()] = None
    return list(plain), list(folded)


_DIGITS_BRACKET = re.compile(rb"(\d{1,5})\]")
_MAX_RANK = 65535


def _line_end(data: bytes, end: int) -> int:
    newline = data.find(b"\n", end)
    return len(data) if newline < 0 else newline


def _larger_than(size: int) -> bytes | None:
    """A regex for the decimal numbers of at most 6 digits (leading zeros aside) whose value exceeds `size`, or
    None when there are none: the digits world_size.at_word reads."""
    digits = b"%d" % size
    width = len(digits)
    larger = [b"[1-9][0-9]{%d,5}" % width] if width < 6 else []  # more digits
    for i, digit in enumerate(digits[:6]):  # as many digits: the first place where it is larger
        if digit < ord("9"):
            larger.append(digits[:i] + b"[%c-9]" % (digit + 1) + b"[0-9]" * (width - 1 - i))
    return b"(?:" + b"|".join(larger) + b")" if larger and width <= 6 else None


def _no_words(data: bytes, start: int, stop: int) -> list[int]:
    """For an engine that finds the world-size words in a pass of their own."""
    return []


def _rest_of_line(data: bytes, end: int, tracebacks: list[int], markers: list[tuple[int, int]],
                  sizes: list[int], word_ends: Callable[[bytes, int, int], list[int]]) -> int:
    """Where to look for the next hit after one that ends at `end`: the end of its line.

    One hit makes the whole line a candidate, and the line matcher reads all of it, so further hits on the line
    add nothing (a 2 MB line of `Error Error ...` cost 270,000 match objects, a 100 MB line of warnings one
    Hyperscan callback per 27 bytes). Still collected from the rest of the line: traceback headers (they place
    the lines after them) and the rank marker that opens each segment (the first marker of a line or after a
    CR counts as a rank, see _leading_ranks; a later one in the same segment never does, so one search per
    segment finds it), and the world-size words. Headers, markers and words ending by `end` are the caller's.
    """
    line_end = _line_end(data, end)
    header = data.find(TRACEBACK, max(0, end - len(TRACEBACK) + 1), line_end)
    while header >= 0:
        tracebacks.append(header)
        header = data.find(TRACEBACK, header + 1, line_end)
    sizes.extend(word_ends(data, max(0, end - WORD_LENGTH + 1), line_end))
    segment = max(data.rfind(b"\n", 0, end), data.rfind(b"\r", 0, end)) + 1
    while segment < line_end:
        carriage = data.find(b"\r", max(segment, end), line_end)
        segment_end = line_end if carriage < 0 else carriage
        first = _RANK_MARKER.search(data, segment, segment_end)
        if first is not None and first.end() > end:  # ending by `end`, the scan reported it
            markers.append((first.start(), int(first.group(1))))
        segment = segment_end + 1
    return line_end


def _word_ends(data: bytes, start: int = 0, stop: int | None = None) -> list[int]:
    """End offsets of the world-size words in data[start:stop], every occurrence (bytes.find per word)."""
    stop = len(data) if stop is None else stop
    ends: list[int] = []
    for word in WORLD_SIZE_WORDS:
        at = data.find(word, start, stop)
        while at >= 0:
            ends.append(at + WORD_LENGTH)
            at = data.find(word, at + 1, stop)
    return sorted(ends)


def marker_count(data: bytes) -> int:
    """How many rank markers `data` holds."""
    return len(_RANK_MARKER.findall(data))


def line_rank(line: bytes) -> int | None:
    """The rank of one line (_judged), or None."""
    if line.find(b"\r") >= 0 or line.find(b"\x1b") >= 0:
        line = shown_bytes(line)
    first = _RANK_MARKER.search(line)
    rank = int(first.group(1)) if first is not None else None
    return rank if rank is not None and rank <= _MAX_RANK else None


def _judged(data: bytes, markers: list[tuple[int, int]]) -> Iterator[tuple[int, bool]]:
    """(rank, whether it is its line's rank) for each of `markers` ((start offset, rank), sorted by offset).

    The line path takes a line's rank from the first rank marker of its text as shown (ingest.lines.shown_bytes):
    `[rank0] step 2 ... [rank1] step 2` (two ranks' output run together) is a line of rank 0, and rank 1 must
    not become a job rank that logged nothing; `[rank3]: 42%|#  \r[rank8]: redrawn` is a line of rank 8, as its
    repeat key is that of `[rank8]: redrawn`. Each line is looked at once, from the previous one's end, so a
    chunk's markers cost O(chunk) together, however long its lines.
    """
    line_end, first_start, shown_rank, redrawn = -1, -1, None, False
    for start, rank in markers:
        if start > line_end:  # the first marker of a later line
            line_start = data.rfind(b"\n", max(line_end, 0), start) + 1
            line_end = data.find(b"\n", start)
            line_end = len(data) if line_end < 0 else line_end
            redrawn = data.find(b"\r", line_start, line_end) >= 0
            if redrawn:  # rare: the shown text decides (CR redraws, colour codes, a CRLF end)
                shown = shown_bytes(data[line_start:line_end])
                first = _RANK_MARKER.search(shown)
                shown_rank = int(first.group(1)) if first else None
            else:
                first = _RANK_MARKER.search(data, line_start, line_end)  # stops at the latest at this marker
                first_start = first.start() if first else start
        yield rank, (rank == shown_rank) if redrawn else start == first_start


def _leading_ranks(data: bytes, markers: list[tuple[int, int]]) -> tuple[set[int], set[int]]:
    """(accepted, rejected) ranks of `markers` (_judged)."""
    accepted: set[int] = set()
    rejected: set[int] = set()
    for rank, leads in _judged(data, markers):
        (accepted if leads else rejected).add(rank)
    return {r for r in accepted if r <= _MAX_RANK}, rejected - accepted


def _opens_a_segment(data: bytes, rank: int, lo: int, hi: int) -> bool:
    """Is some marker of `rank` in data[lo:hi] the rank of its line (_judged)? Stops at the first that is: nearly
    always an occurrence at a line's start answers at once."""
    pattern = re.compile(_RANK_PREFIX + b"%d\\]" % rank)
    occurrences = ((m.start(), rank) for m in pattern.finditer(data, lo, hi))
    return any(leads for _, leads in _judged(data, list(occurrences)))


def ranks_in(data: bytes, lines: tuple[int, int] | None = None) -> set[int]:
    """Every rank that is the rank of some line of `data` (of its whole lines data[lines[0]:lines[1]]): the
    exact pass, _judged.

    Markers at the very start of a line (nearly all of a torchrun log's) are found in C; only ranks seen
    nowhere else are walked marker by marker. A chunk with a CR that redraws a line (not a CRLF end) is walked
    whole: a line's first marker is not its rank there.
    """
    lo, hi = lines or (0, len(data))
    if _REDRAW.search(data, lo, hi):
        markers = [(m.start(), int(m.group(1))) for m in _RANK_MARKER.finditer(data, lo, hi)]
        return _leading_ranks(data, markers)[0]
    heads = {int(d) for d in _LINE_HEAD_MARKER.findall(data, lo, hi)}
    others = {int(d) for d in _RANK_MARKER.findall(data, lo, hi)} - heads
    if not others:
        return {r for r in heads if r <= _MAX_RANK}
    digits = b"|".join(b"%d" % rank for rank in sorted(others))
    pattern = re.compile(_RANK_PREFIX + b"(" + digits + rb")\]")
    markers = [(m.start(), int(m.group(1))) for m in pattern.finditer(data, lo, hi)]
    return {r for r in heads if r <= _MAX_RANK} | _leading_ranks(data, markers)[0]


class PythonEngine:
    """bytes.find per anchor: correct everywhere, O(anchors x bytes)."""

    name = "python"

    def __init__(self, catalog: Catalog) -> None:
        plain, folded = anchors_of(catalog)
        # an anchor with digits is looked for with every digit as 0, in the text with every digit as 0 (any_digits)
        self._plain = [a for a in plain + list(STRUCTURAL_LITERALS) if a == a.translate(MASK_DIGITS)]
        self._plain_digits = [a.translate(MASK_DIGITS) for a in plain if a != a.translate(MASK_DIGITS)]
        self._folded = [a for a in folded if a == a.translate(MASK_DIGITS)]
        self._folded_digits = [a.translate(MASK_DIGITS) for a in folded if a != a.translate(MASK_DIGITS)]

    def fresh(self) -> PythonEngine:
        return self

    def word_ends(self, data: bytes, start: int, stop: int) -> list[int]:
        return _word_ends(data, start, stop)

    def raise_size_floor(self, size: int) -> None:
        """Every word is reported: finding them costs this engine no callback per word."""

    def scan(self, data: bytes, ranks: bool = True, lines: tuple[int, int] | None = None) -> ScanResult:
        found: list[int] = []
        tracebacks: list[int] = []
        for anchor in self._plain:
            start = data.find(anchor)
            while start >= 0:
                found.append(start + len(anchor))
                if anchor == TRACEBACK:
                    tracebacks.append(start)
                    start = data.find(anchor, start + 1)
                else:
                    start = data.find(anchor, _line_end(data, start + len(anchor)))
        lowered = data.lower() if self._folded or self._folded_digits else b""
        for text, anchors in ((data, self._plain_digits), (lowered, self._folded), (lowered, self._folded_digits)):
            if anchors and anchors is not self._folded:
                text = text.translate(MASK_DIGITS)
            for anchor in anchors:
                start = text.find(anchor)
                while start >= 0:
                    found.append(start + len(anchor))
                    start = text.find(anchor, _line_end(data, start + len(anchor)))
        return ScanResult(found, sorted(tracebacks), ranks_in(data, lines) if ranks else set(), _word_ends(data))


def _unknown_digits(known: set[bytes], depth: int = 0) -> bytes:
    """An RE2 pattern for 1-5 digits and "]" whose digits are none of `known` (a trie walked as a regex)."""
    alts: list[bytes] = []
    if depth and b"" in known:
        known = known - {b""}
    elif depth:
        alts.append(rb"\]")
    if depth < 5:
        by_first: dict[bytes, set[bytes]] = {}
        for digits in known:
            by_first.setdefault(digits[:1], set()).add(digits[1:])
        free = bytes(d for d in b"0123456789" if bytes([d]) not in by_first)
        if free:
            alts.append(b"[" + free + rb"]\d{0,%d}\]" % (4 - depth))
        for first, rests in sorted(by_first.items()):
            alts.append(first + b"(?:" + _unknown_digits(rests, depth + 1) + b")")
    return b"|".join(alts) if alts else rb"[^\s\S]"


def _overlaps_rank_marker(anchor: bytes) -> bool:
    """Could a match of this anchor hide a rank marker next to it, or the reverse, in one finditer pass?"""
    if anchor[:1] in b"0123456789]" or any(form in anchor for form in _RANK_FORMS):
        return True
    return any(form.startswith(anchor[-k:]) for form in _RANK_FORMS for k in range(1, len(form)))


class Re2Engine:
    """Every anchor in one alternation, run by RE2 (google-re2): linear time, no backtracking.

    Ranks: a Python regex over every chunk cost ~0.9 s per GiB, more than RE2's own pass. Instead the
    alternation also holds rank markers whose number is not yet known: such a marker matches only the first
    times a rank shows, and the pattern is rebuilt without it. A scan session (`fresh()`) starts knowing none.
    """

    name = "re2"
    _MAX_KNOWN = 2048  # beyond this many ranks the pattern grows large: use the Python regex per chunk

    def __init__(self, catalog: Catalog) -> None:
        import re2

        self._re2 = re2
        plain, folded = anchors_of(catalog)
        # the world-size words have their own pass: in the alternation a word's match hid an anchor overlapping it
        # (`world size mismatch, m1:` holds the anchor `size mismatch, m1:`)
        literals = plain + list(STRUCTURAL_LITERALS)
        self._literals = b"|".join(any_digits(re.escape(key)) for key in literals)
        self._options = re2.Options()
        self._options.never_capture = True
        self._options.max_mem = 64 << 20
        self._folded = (
            re2.compile(b"(?i)" + b"|".join(any_digits(re.escape(key)) for key in folded), self._options)
            if folded else None
        )
        # one pass can find anchors and markers only if no match of one can hide a match of the other
        self._ranks_inline = not any(_overlaps_rank_marker(key) for key in literals)
        self._words = re2.compile(b"|".join(re.escape(word) for word in WORLD_SIZE_WORDS), self._options)
        self._known: set[bytes] = set()
        self._compile()

    def fresh(self) -> Re2Engine:
        other = copy.copy(self)
        other._known = set()
        other._compile()
        return other

    def word_ends(self, data: bytes, start: int, stop: int) -> list[int]:
        return [found.end() for found in self._words.finditer(data, start, stop)]

    def raise_size_floor(self, size: int) -> None:
        """Every word is reported: finding them costs this engine no callback per word."""

    def _compile(self) -> None:
        pattern = self._literals
        if self._ranks_inline and len(self._known) <= self._MAX_KNOWN:
            pattern += b"|" + _RANK_PREFIX + b"(?:" + _unknown_digits(self._known) + b")"
        self._plain = self._re2.compile(pattern, self._options)

    def scan(self, data: bytes, ranks: bool = True, lines: tuple[int, int] | None = None) -> ScanResult:
        found: list[int] = []
        tracebacks: list[int] = []
        markers: list[tuple[int, int]] = []
        search = self._plain.search
        pos = 0
        while (match := search(data, pos)) is not None:
            start, end = match.span()
            if data[end - 1] == 0x5D and (marker := _RANK_MARKER.fullmatch(data, start, end)):  # b"]"
                markers.append((start, int(marker.group(1))))
                pos = end
                continue
            found.append(end)
            if end - start == len(TRACEBACK) and data.startswith(TRACEBACK, start):
                tracebacks.append(start)
            pos = _rest_of_line(data, end, tracebacks, markers, [], _no_words)
        if self._folded is not None:
            search, pos = self._folded.search, 0
            while (match := search(data, pos)) is not None:
                found.append(match.end())
                pos = _line_end(data, match.end())
        sizes = self.word_ends(data, 0, len(data))
        if not ranks:
            return ScanResult(found, tracebacks, set(), sizes)
        if not self._ranks_inline or len(self._known) > self._MAX_KNOWN:
            return ScanResult(found, tracebacks, ranks_in(data, lines), sizes)
        # every occurrence of a rank not yet known matched, so a rank rejected here stays unknown, not lost
        lo, hi = lines or (0, len(data))
        accepted = _leading_ranks(data, [marker for marker in markers if lo <= marker[0] < hi])[0]
        if accepted:
            self._known |= {b"%d" % rank for rank in accepted}
            self._compile()
        return ScanResult(found, tracebacks, accepted, sizes)


def _cached_database(hyperscan: Any, key: object, patterns: Callable[[], tuple[list[bytes], list[int]]]) -> Any:
    """Compiling ~10,000 patterns takes ~150 ms; loading the serialized database takes under 1 ms.

    `key` describes the patterns compactly (listing 8,000 rank literals just to hash them cost ~20 ms of
    every start); it and the Hyperscan version name the cache file, so a changed catalog or library
    compiles anew. Any problem with the cache (read-only home, a damaged file) only costs the compile.
    """
    path = cache_path("hyperscan", (hyperscan.__version__, key), ".db")
    cached = read_cached(path)
    if cached is not None:
        try:
            return hyperscan.loadb(cached, hyperscan.HS_MODE_BLOCK)
        except Exception:  # a damaged or foreign file: compile instead
            pass
    expressions, flags = patterns()
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions), flags=flags)
    write_cached(path, hyperscan.dumpb(db))
    return db


# Rank markers, for Hyperscan. A scan session only needs each rank once, so the database starts with the
# *frontier* of the ranks known so far: for each form, the shortest digit strings that no known rank's marker
# begins with (`[rank8`, `[rank1` + a digit, `[rank12]` ...), each reporting every hit. A marker of a known rank
# matches none of them, so once a job's ranks are known its lines cost the scan nothing: on a torchrun log
# where "[rank3]:" starts every line, per-rank single-match literals (the older design, below) cost ~0.45 s
# per GiB; the frontier, ~0.05 s. A chunk that shows new ranks rebuilds the frontier (~10 ms for 8 ranks).
# When that stops paying (many ranks, ranks that keep arriving, or markers that hit without ever counting:
# `[rank6]: ... [rank3] INFO` on every line), the session switches to the per-rank literals for good.
_FRONTIER_MAX_KNOWN = 64  # a frontier over more ranks takes long to compile (1,024 ranks: 0.7 s)
_FRONTIER_REBUILDS = 16
_RANK_DIGITS = 5  # _RANK_MARKER's \d{1,5}
# Per-rank single-match literals. "[rank3]" starts nearly every line of a torchrun log: one single-match
# literal per rank reports each rank once per chunk. The other forms are often rare ("[Rank 3]" is NCCL's)
# but can also start every line ("[default3]:" under torchrun --tee): they begin as one literal each, parsed
# at each hit, and switch to per-rank literals the first time a chunk holds many of them. Either database
# finds the same ranks; per-rank literals for the three forms cost ~15% of the scan rate, hence the switch.
_DENSE_FORM, *_OTHER_FORMS = _RANK_FORMS
_RANK_LIMIT = 4096
_SWITCH_AT = 256  # hits of the other forms (or frontier hits that find no new rank) in one chunk
_ONE_LINE_HITS = 64  # anchor hits after which a scan looks whether they all fell on one line
_FLOOR_RAISES = 4  # world-size floors a session compiles into its database (HyperscanEngine.raise_size_floor)
_SIZE_HIT_REACH = 32  # a size hit's word ends this close before it: up to 3 separators and 11 digits


def frontier(known: set[int]) -> list[bytes]:
    """Digit strings (a trailing "]" where the digits alone are a known rank's prefix) that begin the marker
    of every rank not in `known`, and of no rank in it: the rank digits' trie, cut where it leaves `known`."""
    names = {b"%d" % rank for rank in known}
    prefixes = {name[:i] for name in names for i in range(1, len(name) + 1)}
    found: list[bytes] = []

    def walk(prefix: bytes) -> None:
        if len(prefix) < _RANK_DIGITS:
            for digit in b"0123456789":
                longer = prefix + bytes([digit])
                if longer in prefixes:
                    walk(longer)
                else:
                    found.append(longer)
        if prefix and prefix not in names:
            found.append(prefix + b"]")

    walk(b"")
    return found


def _compiled(hyperscan: Any, expressions: list[bytes], flags: list[int]) -> Any:
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions), flags=flags)
    return db


class HyperscanEngine:
    """One Hyperscan database: anchors as literals, plus the structural patterns and rank markers."""

    name = "hyperscan"

    def __init__(self, catalog: Catalog) -> None:
        import hyperscan

        self._hs = hyperscan
        plain, folded = anchors_of(catalog)
        self._expressions: list[bytes] = []
        self._flags: list[int] = []
        for key in plain + list(STRUCTURAL_LITERALS):
            self._expressions.append(any_digits(re.escape(key)))
            self._flags.append(0)
        for key in folded:
            self._expressions.append(any_digits(re.escape(key)))
            self._flags.append(hyperscan.HS_FLAG_CASELESS)
        self._size_base = len(self._expressions)
        for key in WORLD_SIZE_WORDS:
            self._expressions.append(re.escape(key))
            self._flags.append(0)
        self._traceback_id = len(plain) + STRUCTURAL_LITERALS.index(TRACEBACK)
        self._rank_base = len(self._expressions)
        self._known: set[int] = set()  # ranks this session reported (frontier mode)
        self._rebuilds = 0
        self._per_rank = False  # the session switched to per-rank literals
        self._dense = False
        self._many_ranks = False
        self._size_floor = 0  # the database reports words in whole lines only when their value exceeds it
        self._floor_raises = 0
        self._use_frontier()
        self._initial = (self._db, self._scratch, self._frontier_lengths, self._expressions)
        words = [re.escape(word) for word in WORLD_SIZE_WORDS]
        self._words_db = _compiled(hyperscan, words, [0] * len(words))
        self._words_scratch = hyperscan.Scratch(self._words_db)

    def word_ends(self, data: bytes, start: int, stop: int) -> list[int]:
        ends: list[int] = []

        def on_match(pattern_id: int, first: int, end: int, flags: int, context: object) -> None:
            ends.append(start + end)

        self._words_db.scan(memoryview(data)[start:stop], match_event_handler=on_match, scratch=self._words_scratch)
        return sorted(ends)

    def fresh(self) -> HyperscanEngine:
        if not self._per_rank and not self._known and not self._size_floor:
            return self
        other = copy.copy(self)
        other._known, other._rebuilds, other._per_rank, other._many_ranks = set(), 0, False, False
        other._size_floor, other._floor_raises = 0, 0
        other._db, other._scratch, other._frontier_lengths, other._expressions = self._initial
        return other

    def raise_size_floor(self, size: int) -> None:
        """Words in whole lines are reported only with a value above `size`: on a log that prints its size on
        every few lines (the realistic benchmark: ~97,000 words a GiB) each word cost a match callback and a
        read of its value, ~0.1 s a GiB, to find the same number again. Values a scan leaves out cannot raise
        the largest (scan.world_size), so every engine reads the same size. The database is rebuilt for each
        raise (~10 ms, cached on disk like the frontier's), at most _FLOOR_RAISES times a session: a log whose
        size keeps growing keeps the last floor, and its later words are simply all reported."""
        if size <= self._size_floor or self._floor_raises >= _FLOOR_RAISES:
            return
        larger = _larger_than(size)
        if larger is None:
            return
        self._size_floor = size
        self._floor_raises += 1
        sizes = [re.escape(word) + rb"[^\w\n]{0,3}0{0,5}" + larger + rb"\b" for word in WORLD_SIZE_WORDS]
        self._expressions = self._expressions[: self._size_base] + sizes + self._expressions[self._rank_base :]
        if self._per_rank:
            self._use(self._dense)
        else:
            self._use_frontier()

    def _use_frontier(self) -> None:
        """Build (or load) the database whose rank literals are the frontier of the known ranks."""
        literals = [form + digits for form in _RANK_FORMS for digits in frontier(self._known)]
        self._frontier_lengths = [len(literal) for literal in literals]

        def patterns() -> tuple[list[bytes], list[int]]:
            return self._expressions + [re.escape(literal) for literal in literals], self._flags + [0] * len(literals)

        if self._known == set(range(len(self._known))):  # ranks 0..N-1, as nearly every job: worth a cache file
            self._db = _cached_database(self._hs, (self._expressions, self._flags, "frontier", len(self._known)),
                                        patterns)
        else:
            self._db = _compiled(self._hs, *patterns())
        self._scratch = self._hs.Scratch(self._db)

    def _use(self, dense: bool) -> None:
        """Build (or load) the per-rank database: per-rank literals for "[rank" only, or for every form."""
        forms = (_DENSE_FORM, *_OTHER_FORMS) if dense else (_DENSE_FORM,)
        sparse_literals = [] if dense else [re.escape(form) for form in _OTHER_FORMS]  # ids rank_base, +1
        self._per_rank_base = self._rank_base + len(sparse_literals)
        self._forms = len(forms)

        def patterns() -> tuple[list[bytes], list[int]]:
            expressions = self._expressions + sparse_literals
            flags = self._flags + [0] * len(sparse_literals)
            for rank in range(_RANK_LIMIT):
                for form in forms:
                    expressions.append(re.escape(form + b"%d]" % rank))
                    flags.append(self._hs.HS_FLAG_SINGLEMATCH)
            return expressions, flags

        key = (self._expressions, self._flags, sparse_literals, forms, _RANK_LIMIT, "single-match per rank")
        self._db = _cached_database(self._hs, key, patterns)
        self._scratch = self._hs.Scratch(self._db)
        self._dense = dense
        self._per_rank = True

    def scan(self, data: bytes, ranks: bool = True, lines: tuple[int, int] | None = None) -> ScanResult:
        """ranks=False: the caller wants candidates only; the session's rank state is left as it was."""
        found: list[int] = []
        tracebacks: list[int] = []
        hits: list[tuple[int, int]] = []  # (end offset, pattern id) of rank literals
        extra_markers: list[tuple[int, int]] = []  # markers in the skipped rests of lines of hits
        sizes: list[int] = []
        size_hits: list[int] = []  # the database's size hits: a word's end, or with a floor set, its value's
        size_ids: list[int] = []  # which word each is
        traceback_id = self._traceback_id
        size_base = self._size_base
        rank_base = self._rank_base
        base = 0  # where the current scan call starts in data
        checked = 0  # len(found) at the last look for a line of hits

        def on_match(pattern_id: int, start: int, end: int, flags: int, context: object) -> bool | None:
            nonlocal checked
            end += base
            if pattern_id >= size_base:
                if pattern_id >= rank_base:
                    hits.append((end, pattern_id))
                else:
                    size_hits.append(end)
                    size_ids.append(pattern_id)
                return None
            found.append(end)
            if pattern_id == traceback_id:
                tracebacks.append(end - len(TRACEBACK))
            if len(found) - checked >= _ONE_LINE_HITS:
                # that many hits with no newline between them: one line of hits, skip its rest
                first, checked = found[checked], len(found)
                return data.find(b"\n", first, end) < 0
            return None

        view = memoryview(data)
        while True:
            try:
                self._db.scan(view[base:] if base else data, match_event_handler=on_match, scratch=self._scratch)
                break
            except self._hs.ScanTerminated:
                base = _rest_of_line(data, found[-1], tracebacks, extra_markers, sizes, self.word_ends)
                checked = len(found)
                if base >= len(data):
                    break
        if self._size_floor:
            sizes = sorted(set(sizes + self._floor_words(data, size_hits, size_ids, lines)))
        else:
            sizes = sorted(sizes + size_hits)
        if not ranks:
            return ScanResult(found, tracebacks, set(), sizes)
        if self._per_rank:
            return ScanResult(found, tracebacks, self._per_rank_ranks(data, hits, extra_markers, lines), sizes)
        return ScanResult(found, tracebacks, self._frontier_ranks(data, hits, extra_markers, lines), sizes)

    def _floor_words(self, data: bytes, hits: list[int], ids: list[int], lines: tuple[int, int] | None) -> list[int]:
        """With a floor set, the database's size hits end after a value: back to the end of their word. The words
        outside `lines` (or all of them, without `lines`) are found by the words' own database: their digits may
        be cut by the buffer's end, and the caller reads the whole line."""
        if lines is None:
            return self.word_ends(data, 0, len(data))
        ends = [data.rfind(WORLD_SIZE_WORDS[pattern_id - self._size_base], max(0, end - _SIZE_HIT_REACH), end)
                + WORD_LENGTH for end, pattern_id in zip(hits, ids, strict=True)]
        ends = [end for end in ends if lines[0] <= end - WORD_LENGTH and end <= lines[1]]
        for start, stop in ((0, lines[0]), (lines[1], len(data))):
            # every word ends in "ize" or "IZE": two C searches spare most pieces a database call
            if data.find(b"ize", start, stop) >= 0 or data.find(b"IZE", start, stop) >= 0:
                ends += self.word_ends(data, start, stop)
        return ends

    def _frontier_ranks(self, data: bytes, hits: list[tuple[int, int]], markers: list[tuple[int, int]],
                        lines: tuple[int, int] | None) -> set[int]:
        """The ranks first reported by this scan; the frontier moves past them (or the session switches)."""
        lengths, rank_base, match = self._frontier_lengths, self._rank_base, _RANK_MARKER.match
        for end, pattern_id in hits:
            start = end - lengths[pattern_id - rank_base]
            marker = match(data, start)
            if marker is not None:
                markers.append((start, int(marker.group(1))))
        lo, hi = lines or (0, len(data))
        markers = sorted(marker for marker in markers if lo <= marker[0] < hi)
        new = {rank for rank in _leading_ranks(data, markers)[0] if rank not in self._known}
        wasted = len(hits) - sum(1 for _, rank in markers if rank in new)
        if new:
            self._known |= new
            self._rebuilds += 1
        if len(self._known) > _FRONTIER_MAX_KNOWN or self._rebuilds > _FRONTIER_REBUILDS or wasted >= _SWITCH_AT:
            self._use(dense=False)
            # a rank past the per-rank literals already showed: the job has more, found by the exact regex pass
            self._many_ranks = any(rank >= _RANK_LIMIT - 1 for rank in self._known)
        elif new:
            self._use_frontier()
        return new

    def _per_rank_ranks(self, data: bytes, hits: list[tuple[int, int]], extra: list[tuple[int, int]],
                        lines: tuple[int, int] | None) -> set[int]:
        """The ranks opening lines of `data`, from the per-rank literals' first hits and the other forms' hits."""
        per_rank_base, forms = self._per_rank_base, self._forms
        form_names = _RANK_FORMS[:forms]
        per_rank: list[tuple[int, int]] = []
        other_forms: list[int] = []  # end offsets of "[Rank " / "[default" (sparse database only)
        for end, pattern_id in hits:
            if pattern_id >= per_rank_base:
                rank, form = divmod(pattern_id - per_rank_base, forms)
                per_rank.append((end - len(form_names[form]) - len(b"%d]" % rank), rank))
            else:
                other_forms.append(end)
        markers = per_rank + extra
        for end in other_forms:
            digits = _DIGITS_BRACKET.match(data, end)
            if digits:
                form = next(f for f in _OTHER_FORMS if data.endswith(f, 0, end))
                markers.append((end - len(form), int(digits.group(1))))
        lo, hi = lines or (0, len(data))
        markers = sorted(marker for marker in markers if lo <= marker[0] < hi)
        ranks, rejected = _leading_ranks(data, markers)
        outside = {rank for at, rank in per_rank if not lo <= at < hi}
        hidden = (rejected & {rank for _, rank in per_rank}) | outside - ranks
        if hidden:
            # a single-match literal reported only a rank's first marker, and it was not the first of its line
            # (`[rank6]: 14:55:19 [rank3] INFO`) or it was on a line not whole in `data`: a later one may be
            ranks |= {rank for rank in hidden if _opens_a_segment(data, rank, lo, hi)}
        if len(other_forms) >= _SWITCH_AT and not self._dense:
            self._use(dense=True)
        # past the per-rank literals: a job with rank 4095 has more ranks (ranks are 0..N-1), so from the
        # chunk where one of them shows, every chunk also gets the exact regex pass
        if self._many_ranks or any(r >= _RANK_LIMIT - 1 for r in ranks):
            self._many_ranks = True
            ranks |= ranks_in(data, lines)
        return {r for r in ranks if r <= _MAX_RANK}


def best_engine(catalog: Catalog, name: str = "auto") -> CandidateEngine:
    """The fastest engine installed, or the one asked for; built once per catalog (a database compile)."""
    return derived(catalog, f"candidate-engine:{name}", lambda: _build(catalog, name))


def _build(catalog: Catalog, name: str) -> CandidateEngine:
    order = {"auto": ("hyperscan", "re2", "python")}.get(name, (name,))
    errors: list[str] = []
    for candidate in order:
        try:
            if candidate == "hyperscan":
                return HyperscanEngine(catalog)
            if candidate == "re2":
                return Re2Engine(catalog)
            if candidate == "python":
                return PythonEngine(catalog)
        except ImportError as exc:
            errors.append(f"{candidate}: {exc}")
            continue
        errors.append(f"unknown engine {candidate!r}")
    from denpex.errors import DenpexInputError

    hint = "" if name == "auto" else "; `--engine auto` picks the fastest one installed"
    raise DenpexInputError(f"no usable scanning engine ({'; '.join(errors)}){hint}")
