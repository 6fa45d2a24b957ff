"""When an input's clock starts and ends, and the zone its clocks say, read from its first and last lines.

Nodes that print local time in different zones (`TZ=Asia/Tokyo` on one, UTC on another) start and end a
whole number of half-hours apart, and an input whose records print their zone (`+09:00`) was written on a host
in that zone; analyze.clock_zones uses both. Only the input's first and last SPAN_BYTES are read, the same bytes
whichever path scans the rest, so both paths agree. A compressed input gives its start only (its end is not at
hand without reading it all).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Protocol

import re2

from denpex.errors import DenpexInputError
from denpex.ingest.headers import ANSI, Header, parse
from denpex.ingest.host_column import tagged_head
from denpex.ingest.sources import Source, read_head

SPAN_BYTES = 16 << 10
_MOST_LINES = 64  # lines parsed at each end for a clock and its zone
_END_BYTES = 2048  # where the last clock is sought first
_CLOCK = re2.compile(rb"\d\d:\d\d:\d\d")  # what every clock headers.parse reads has
_ZONED_CLOCK = re2.compile(rb"\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)")  # and one that says its zone


class _Hit(Protocol):
    def start(self) -> int: ...
    def end(self) -> int: ...


@dataclass(frozen=True, slots=True)
class ClockSpan:
    first: float
    last: float | None  # None: the input's end is not at hand (a compressed file)
    first_wall: float | None  # Header.wall of those clocks: their digits read as UTC, None when they said a zone
    last_wall: float | None
    zone: int | None  # seconds east of UTC a clock near either end said: the local zone of the host that wrote it


def clock_span(source: Source) -> ClockSpan | None:
    """The first and last clocks of a log file or text; None for a pipe (read once, as it comes) or an input
    without clocks."""
    if source.kind != "log" or source.stream is not None:
        return None
    try:
        head, tail = _ends(source)
    except (DenpexInputError, OSError):
        return None  # the reading proper reports what is wrong with it
    host_column = tagged_head(head)
    first = next(_clocked(head, _CLOCK.finditer(head), host_column), None)
    if first is None:
        return None
    zone = next((h.zone for h in _clocked(head, _ZONED_CLOCK.finditer(head), host_column) if h.zone is not None),
                None)
    last: Header | None = None
    if tail is not None:
        if len(tail) == SPAN_BYTES:
            tail = tail[tail.find(b"\n") + 1 :]  # the first piece may be a line's end
        end = tail[-_END_BYTES:]
        for piece in (end[end.find(b"\n") + 1 :], tail):  # the last lines first: most logs end on a clock
            last = next(_clocked(piece, reversed(list(_CLOCK.finditer(piece))), host_column, first.year), None)
            if last is not None:
                break
        if zone is None:
            zone = next((h.zone for h in _clocked(tail, _ZONED_CLOCK.finditer(tail), host_column, first.year)
                         if h.zone is not None), None)
    return ClockSpan(first.timestamp or 0.0, last.timestamp if last else None, first.wall,
                     last.wall if last else None, zone)


def _ends(source: Source) -> tuple[bytes, bytes | None]:
    if source.data is not None:
        return source.data[:SPAN_BYTES], source.data[-SPAN_BYTES:]
    head = read_head(source, SPAN_BYTES)[:SPAN_BYTES]
    if source.compression or source.path is None:
        return head, None
    with open(source.path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - SPAN_BYTES))
        return head, handle.read(SPAN_BYTES)


def _clocked(chunk: bytes, found: Iterable[_Hit], host_column: bool, year: int | None = None) -> Iterator[Header]:
    """The headers of the lines of `chunk` where `found` hit that carry a clock (each line parsed once; at most
    _MOST_LINES of them): RE2 finds the candidates in C++, so a chunk without a clock costs no Python per line."""
    seen = -1
    for hit in islice(found, _MOST_LINES):
        start = chunk.rfind(b"\n", 0, hit.start()) + 1
        if start == seen:
            continue
        seen = start
        end = chunk.find(b"\n", hit.end())
        raw = chunk[start : end if end >= 0 else len(chunk)]
        head = parse(ANSI.sub("", raw.decode("utf-8", "replace").rstrip("\r")), year, host_column)
        if head.timestamp is not None:
            yield head
