"""Match every catalog signature against lines: literal anchors first, the regex only on candidates.

This is the simple, always-available path. A faster engine (Hyperscan over chunks) must give the same hits.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from denpex.catalog.loader import Catalog
from denpex.catalog.schema import Entry, Signature
from denpex.model import Line


@dataclass(frozen=True, slots=True)
class Hit:
    entry: Entry
    signature: Signature
    fields: dict[str, str]


@dataclass(slots=True)
class _Compiled:
    entry: Entry
    signature: Signature
    anchor: str
    source: str | None  # compiled on the first line holding the anchor: up front, ~240 regexes cost ~40 ms
    flags: int
    regex: re.Pattern[str] | None = None

    def search(self, subject: str) -> re.Match[str] | None:
        if self.regex is None:
            assert self.source is not None
            self.regex = re.compile(self.source, self.flags)
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
                )
                (self._folded if sig.ignore_case else self._plain).append(compiled)
        # a cheap first gate: a line shorter than the shortest anchor cannot hit
        anchors = [c.anchor for c in self._plain + self._folded]
        self._min_len = min((len(a) for a in anchors), default=0)

    def match(self, line: Line) -> list[Hit]:
        text = line.text
        if len(text) < self._min_len:
            return []
        hits: list[Hit] = []
        seen: set[str] = set()
        lowered: str | None = None
        for group in (self._plain, self._folded):
            for compiled in group:
                if compiled.entry.id in seen:
                    continue
                if compiled.signature.ignore_case:
                    if lowered is None:
                        lowered = text.lower()
                    haystack = lowered
                else:
                    haystack = text
                if compiled.anchor not in haystack:
                    continue
                subject = line.body if compiled.signature.in_body else text
                if compiled.source is None:
                    fields: dict[str, str] = {}
                else:
                    found = compiled.search(subject)
                    if not found:
                        continue
                    fields = {k: v for k, v in found.groupdict().items() if v is not None}
                hits.append(Hit(compiled.entry, compiled.signature, fields))
                seen.add(compiled.entry.id)
        return hits
