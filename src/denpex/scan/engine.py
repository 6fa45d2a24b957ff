"""Match every catalog signature against lines: literal anchors first, the regex only on candidates.

This is the simple, always-available path. A faster engine (Hyperscan over chunks) must give the same hits.
"""

from __future__ import annotations

import bisect
import builtins
import re
from dataclasses import dataclass
from typing import Any

from denpex.catalog.loader import Catalog, derived
from denpex.catalog.schema import Entry, Signature
from denpex.model import Line
from denpex.scan.linear_regex import LiteralSet, Searcher, compile_linear


@dataclass(frozen=True, slots=True)
class Hit:
    entry: Entry
    signature: Signature
    fields: dict[str, str]
    # the signature's regex matched too; False when only the anchor did (a wording the regex does not know):
    # the regex extracts fields, it does not veto the anchor, and the analysis weighs the hit lower
    confirmed: bool = True


# a path or source location: `/site-packages/torch/_inductor/cudagraph_trees.py:12`, `C:\x\triton\cache`
# a token of a line, between the characters that end a path; a token holding a slash is a path. Tokens are found
# first and tested for a slash after: `[^D]*[/\\][^D]*` backtracks through every slash-free token (O(n^2) on a
# long one)
_TOKEN = re.compile(r"""[^\s"'()\[\]<>,;=]+""")


# a token no ordinary sentence holds: CamelCase, an acronym, snake_case, a name with digits (LoweringException,
# ncclSystemError, CUDA, SIGKILL, cudaErrorLaunchFailure, c10d)
_DISTINCTIVE_TOKEN = re.compile(r"[A-Z]{3,}|[a-z][A-Z]|[A-Z][a-z]+[A-Z]|[a-z]_[a-z]|[A-Za-z]\d|\d[A-Za-z]")


# a message of five or more words and 36+ characters, with no punctuation a path or a format would bring
# (`Watchdog caught collective operation timeout`): no ordinary line says that by chance
_LONG_PHRASE = re.compile(r"(?=.{36,})[A-Za-z]+(?: [A-Za-z]+){4,}")


# Python's own exception classes (PermissionError, OSError...) name a kind of error, not a message: an entry
# anchored on one relies on its regex (e.g. a cache path in the message) to be about that entry at all
_BUILTIN_EXCEPTIONS = frozenset(
    name for name, value in vars(builtins).items() if isinstance(value, type) and issubclass(value, BaseException)
)


def distinctive(anchor: str) -> bool:
    """An anchor specific enough to stand alone when its regex misses; `error: ` or `Killed` is not, nor is a
    short English phrase (`No such file or directory: '`), nor a builtin exception's name; a message of five
    words or more is."""
    if anchor.strip().rstrip(":") in _BUILTIN_EXCEPTIONS:
        return False
    return bool(_DISTINCTIVE_TOKEN.search(anchor)) or _LONG_PHRASE.fullmatch(anchor.strip()) is not None


def path_spans(text: str) -> list[tuple[int, int]]:
    """Where the line's file paths are, in order: computed once per line, whatever the number of anchors."""
    if "/" not in text and "\\" not in text:
        return []
    return [m.span() for m in _TOKEN.finditer(text) if "/" in m.group() or "\\" in m.group()]


def _only_in_paths(text: str, anchor: str, spans: list[tuple[int, int]], starts: list[int]) -> bool:
    """Every occurrence of the anchor lies inside a file path: the path names a module, not the message.
    `starts`: where each of `spans` begins, for the bisection."""
    if not spans:
        return False
    start = text.find(anchor)
    while start >= 0:
        at = bisect.bisect_right(starts, start) - 1  # the last path that begins at or before the anchor
        if at < 0 or start + len(anchor) > spans[at][1]:
            return False
        start = text.find(anchor, start + 1)
    return True


@dataclass(slots=True)
class _Compiled:
    entry: Entry
    signature: Signature
    anchor: str
    source: str | None  # compiled on the first line holding the anchor: up front, ~240 regexes cost ~40 ms
    flags: int
    path_free: bool = True  # the anchor names a message, not a file: a hit only inside a path is no hit
    stands_alone: bool = True  # the anchor is distinctive: a hit whose regex misses is kept, weighed lower
    regex: Searcher | None = None

    def search(self, subject: str) -> Any:
        if self.regex is None:
            assert self.source is not None
            self.regex = compile_linear(self.source, bool(self.flags & re.IGNORECASE))
        return self.regex.search(subject)




class LineMatcher:
    """Finds the signatures that hit one line. Anchors are plain substrings (lower-cased when ignore_case)."""

    def __init__(self, catalog: Catalog) -> None:
        self._plain: list[_Compiled] = []
        self._folded: list[_Compiled] = []
        for entry in catalog.entries:
            for sig in entry.signatures:
                flags = re.IGNORECASE if sig.ignore_case else 0
                compiled = _Compiled(
                    entry=entry,
                    signature=sig,
                    anchor=sig.anchor.lower() if sig.ignore_case else sig.anchor,
                    source=sig.regex,
                    flags=flags,
                    path_free=not any(c in sig.anchor for c in "/\\") and ".py" not in sig.anchor,
                    stands_alone=distinctive(sig.anchor) and not sig.requires_regex,
                )
                (self._folded if sig.ignore_case else self._plain).append(compiled)
        # a cheap first gate: a line shorter than the shortest anchor cannot hit
        anchors = [c.anchor for c in self._plain + self._folded]
        self._min_len = min((len(a) for a in anchors), default=0)
        self._sets: tuple[LiteralSet, LiteralSet] | None = None  # built at the first line

    def _present(self, text: str, lowered: str | None) -> tuple[list[int] | None, list[int] | None]:
        """The indexes, in catalog order, of the plain and folded anchors the line holds, each group found in one
        pass: only those signatures are tried. Testing ~420 anchors one by one cost 44 us per line (a 1.6 MB
        line: 0.25 s), the set 17 us, and the loop grows with the catalog where the set barely does. None for a
        group: no set (RE2 missing), test every anchor."""
        if self._sets is None:
            self._sets = (LiteralSet([c.anchor for c in self._plain]), LiteralSet([c.anchor for c in self._folded]))
        plain = self._sets[0].present(text) if self._plain else set()
        folded = self._sets[1].present(lowered) if self._folded and lowered is not None else set()
        return (None if plain is None else sorted(plain)), (None if folded is None else sorted(folded))

    def match(self, line: Line) -> list[Hit]:
        text = line.text
        if len(text) < self._min_len:
            return []
        confirmed_hits: dict[str, Hit] = {}
        anchor_only: dict[str, Hit] = {}
        lowered: str | None = text.lower() if self._folded else None
        present = self._present(text, lowered)
        # the paths of the text and of its lowered copy, and where each begins: once per line, not per anchor
        paths: dict[bool, tuple[list[tuple[int, int]], list[int]]] = {}
        for group, holds in ((self._plain, present[0]), (self._folded, present[1])):
            for compiled in group if holds is None else map(group.__getitem__, holds):
                known = confirmed_hits.get(compiled.entry.id)
                if known is not None and len(known.signature.anchor) >= len(compiled.signature.anchor):
                    continue
                if compiled.signature.ignore_case:
                    if lowered is None:
                        lowered = text.lower()
                    haystack = lowered
                else:
                    haystack = text
                if compiled.anchor not in haystack:
                    continue
                if compiled.path_free:
                    folded = haystack is not text
                    if folded not in paths:
                        spans = path_spans(haystack)
                        paths[folded] = (spans, [lo for lo, _ in spans])
                    if _only_in_paths(haystack, compiled.anchor, *paths[folded]):
                        continue
                subject = line.body if compiled.signature.in_body else text
                if compiled.source is None:
                    confirmed_hits[compiled.entry.id] = Hit(compiled.entry, compiled.signature, {})
                    continue
                found = compiled.search(subject)
                if found:
                    fields = {k: v for k, v in found.groupdict().items() if v is not None}
                    confirmed_hits[compiled.entry.id] = Hit(compiled.entry, compiled.signature, fields)
                elif compiled.stands_alone:
                    anchor_only.setdefault(compiled.entry.id, Hit(compiled.entry, compiled.signature, {}, False))
        # an anchor whose regex missed (a wording it does not know) is kept, weighed lower, unless a signature that
        # must match its whole wording (requires_regex) recognised the line: a message that lists causes it is not
        # (Ray's `A worker died ... (3) the worker crashed unexpectedly due to SIGSEGV`) is that signature's, not
        # each anchor's. Any other confirmed hit (a wrapper's anchor) leaves the nested cause's anchor standing.
        if any(hit.signature.requires_regex for hit in confirmed_hits.values()):
            return list(confirmed_hits.values())
        return list(confirmed_hits.values()) + [h for eid, h in anchor_only.items() if eid not in confirmed_hits]



def matcher_for(catalog: Catalog) -> LineMatcher:
    """One matcher per catalog for the process (catalog.loader.derived): it keeps no per-input state (its
    regexes and sets compile lazily and only grow), so every diagnosis can share it."""
    return derived(catalog, "line-matcher", lambda: LineMatcher(catalog))
