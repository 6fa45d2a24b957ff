"""Candidate finders for the fast path: find, in big byte buffers, where a catalog signature might hit.

They only have to be *complete* (never miss a line the line matcher would match); the line matcher then
confirms each candidate line, so every engine gives the same findings. Three engines, fastest first:

- Hyperscan: one compiled database of every anchor plus the structural patterns, scanned in C.
- RE2 (google-re2): every anchor in one alternation; for machines without Hyperscan (e.g. ARM).
- Python: `bytes.find` per anchor; always available, slow with many anchors.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol

from denpex.cachefiles import cache_path, read_cached, write_cached
from denpex.catalog.loader import Catalog

# Besides the catalog's anchors, the analysis needs these lines framed: traceback headers (to know a
# line's place in a traceback), exception lines of any kind (uncaught exceptions no entry explains),
# and torchrun's exit summaries (per-rank exit codes).
TRACEBACK = b"Traceback (most recent call last)"
STRUCTURAL_LITERALS = (TRACEBACK, b"exitcode", b"Error", b"Exception", b"Interrupt", b"SystemExit", b"Failed")
# A rank marker the straggler rule needs to know a rank exists even when it logged nothing special.
_RANK_MARKER = re.compile(rb"\[(?:rank|default|Rank )(\d{1,5})\]")


@dataclass(slots=True)
class ScanResult:
    candidates: list[int]  # end offsets (exclusive) of possible hits
    tracebacks: list[int]  # byte offsets of traceback headers
    ranks: set[int]  # ranks seen in rank markers


class CandidateEngine(Protocol):
    name: str

    def scan(self, data: bytes) -> ScanResult: ...


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


def _ranks_in(data: bytes, max_rank: int = 65535) -> set[int]:
    return {int(m) for m in set(_RANK_MARKER.findall(data)) if int(m) <= max_rank}


class PythonEngine:
    """bytes.find per anchor: correct everywhere, O(anchors x bytes)."""

    name = "python"

    def __init__(self, catalog: Catalog) -> None:
        plain, folded = anchors_of(catalog)
        self._plain = plain + list(STRUCTURAL_LITERALS)
        self._folded = folded

    def scan(self, data: bytes) -> ScanResult:
        found: list[int] = []
        tracebacks: list[int] = []
        for anchor in self._plain:
            start = data.find(anchor)
            while start >= 0:
                found.append(start + len(anchor))
                if anchor == TRACEBACK:
                    tracebacks.append(start)
                start = data.find(anchor, start + 1)
        if self._folded:
            lowered = data.lower()
            for anchor in self._folded:
                start = lowered.find(anchor)
                while start >= 0:
                    found.append(start + len(anchor))
                    start = lowered.find(anchor, start + 1)
        return ScanResult(found, sorted(tracebacks), _ranks_in(data))


class Re2Engine:
    """Every anchor in one alternation, run by RE2 (google-re2): linear time, no backtracking."""

    name = "re2"

    def __init__(self, catalog: Catalog) -> None:
        import re2

        plain, folded = anchors_of(catalog)
        literals = plain + list(STRUCTURAL_LITERALS)
        self._plain = re2.compile(b"|".join(re.escape(key) for key in literals))
        self._folded = re2.compile(b"(?i)" + b"|".join(re.escape(key) for key in folded)) if folded else None

    def scan(self, data: bytes) -> ScanResult:
        found: list[int] = []
        tracebacks: list[int] = []
        for match in self._plain.finditer(data):
            found.append(match.end())
            if match.group() == TRACEBACK:
                tracebacks.append(match.start())
        if self._folded is not None:
            found.extend(match.end() for match in self._folded.finditer(data))
        return ScanResult(found, tracebacks, _ranks_in(data))


def _cached_database(hyperscan: Any, expressions: list[bytes], flags: list[int]) -> Any:
    """Compiling ~10,000 patterns takes ~150 ms; loading the serialized database takes under 1 ms.

    The cache key covers the patterns, their flags and the Hyperscan version, so a changed catalog or
    library compiles anew. Any problem with the cache (read-only home, a damaged file) only costs the compile.
    """
    path = cache_path("hyperscan", (hyperscan.__version__, expressions, flags), ".db")
    cached = read_cached(path)
    if cached is not None:
        try:
            return hyperscan.loadb(cached, hyperscan.HS_MODE_BLOCK)
        except Exception:  # a damaged or foreign file: compile instead
            pass
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=expressions, ids=list(range(len(expressions))), elements=len(expressions), flags=flags)
    write_cached(path, hyperscan.dumpb(db))
    return db


class HyperscanEngine:
    """One Hyperscan database: anchors as literals, plus the structural patterns."""

    name = "hyperscan"

    def __init__(self, catalog: Catalog) -> None:
        import hyperscan

        plain, folded = anchors_of(catalog)
        expressions: list[bytes] = []
        flags: list[int] = []
        for key in plain + list(STRUCTURAL_LITERALS):
            expressions.append(re.escape(key))
            flags.append(0)
        for key in folded:
            expressions.append(re.escape(key))
            flags.append(hyperscan.HS_FLAG_CASELESS)
        self._traceback_id = len(plain) + STRUCTURAL_LITERALS.index(TRACEBACK)
        self._rank_base = len(expressions)
        # one single-match literal per rank marker: a rank that logs at all is known, at no per-line cost
        self._rank_limit = 4096
        for rank in range(self._rank_limit):
            for form in (b"[rank%d]" % rank, b"[Rank %d]" % rank):
                expressions.append(re.escape(form))
                flags.append(hyperscan.HS_FLAG_SINGLEMATCH)
        self._db = _cached_database(hyperscan, expressions, flags)
        self._scratch = hyperscan.Scratch(self._db)

    def scan(self, data: bytes) -> ScanResult:
        found: list[int] = []
        tracebacks: list[int] = []
        ranks: set[int] = set()
        traceback_id = self._traceback_id
        rank_base = self._rank_base

        def on_match(pattern_id: int, start: int, end: int, flags: int, context: object) -> None:
            if pattern_id >= rank_base:
                ranks.add((pattern_id - rank_base) // 2)
                return
            found.append(end)
            if pattern_id == traceback_id:
                tracebacks.append(end - len(TRACEBACK))

        self._db.scan(data, match_event_handler=on_match, scratch=self._scratch)
        if any(r >= self._rank_limit - 1 for r in ranks):
            ranks |= _ranks_in(data)
        return ScanResult(found, tracebacks, ranks)


_BUILT: dict[tuple[int, str], tuple[Catalog, CandidateEngine]] = {}


def best_engine(catalog: Catalog, name: str = "auto") -> CandidateEngine:
    """The fastest engine installed, or the one asked for; built once per catalog (a database compile)."""
    key = (id(catalog), name)
    built = _BUILT.get(key)
    if built is None or built[0] is not catalog:  # the id of a collected catalog can be reused
        built = _BUILT[key] = (catalog, _build(catalog, name))
    return built[1]


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
    raise ValueError("; ".join(errors))
