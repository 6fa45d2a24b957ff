"""When an input's clock starts and ends: its first and last lines that carry a clock.

Nodes that print local time in different zones (`TZ=Asia/Tokyo` on one, UTC on another) start and end a
whole number of half-hours apart; analyze.clock_zones compares these spans to notice it. Only the input's
first and last SPAN_BYTES are read, the same bytes whichever path scans the rest, so both paths agree.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from denpex.errors import DenpexInputError
from denpex.ingest.headers import ANSI, Header, parse
from denpex.ingest.host_column import tagged_head
from denpex.ingest.sources import Source, read_head

SPAN_BYTES = 16 << 10
_MOST_LINES = 200  # lines tried at each end before giving up on a clock there


@dataclass(frozen=True, slots=True)
class ClockSpan:
    first: float
    last: float
    first_zoned: bool  # that clock said its zone (`+09:00`, `Z`): its time is absolute
    last_zoned: bool
    zone: int | None  # seconds east of UTC of a clock near either end that said its zone: the host's local zone


def clock_span(source: Source) -> ClockSpan | None:
    """The first and last clocked lines' times of a log file or text; None for a pipe (read once, as it comes),
    a compressed file (its end is not at hand without reading it all) or an input without clocks."""
    if source.kind != "log" or source.stream is not None or source.compression:
        return None
    try:
        head, tail = _ends(source)
    except (DenpexInputError, OSError):
        return None  # the reading proper reports what is wrong with it
    host_column = tagged_head(head)
    first = _clocks(head.split(b"\n")[:_MOST_LINES], host_column)
    tail_lines = tail.split(b"\n")
    if len(tail) == SPAN_BYTES:
        tail_lines = tail_lines[1:]  # the first piece may be a line's end
    last = _clocks(reversed(tail_lines[-_MOST_LINES:]), host_column, first[0].year if first else None)
    if first is None or last is None:
        return None
    zone = first[1] if first[1] is not None else last[1]
    return ClockSpan(first[0].timestamp or 0.0, last[0].timestamp or 0.0, first[0].zone is not None,
                     last[0].zone is not None, zone)


def _ends(source: Source) -> tuple[bytes, bytes]:
    if source.data is not None:
        return source.data[:SPAN_BYTES], source.data[-SPAN_BYTES:]
    head = read_head(source, SPAN_BYTES)[:SPAN_BYTES]
    assert source.path is not None
    with open(source.path, "rb") as handle:
        handle.seek(max(0, os.fstat(handle.fileno()).st_size - SPAN_BYTES))
        return head, handle.read(SPAN_BYTES)


def _clocks(raws: Iterable[bytes], host_column: bool, year: int | None = None) -> tuple[Header, int | None] | None:
    """The header of the first line among `raws` that carries a clock, and the zone of the first that says one."""
    found: Header | None = None
    for raw in raws:
        head = parse(ANSI.sub("", raw.decode("utf-8", "replace").rstrip("\r")), year, host_column)
        if head.timestamp is None:
            continue
        found = found or head
        if head.zone is not None:
            return found, head.zone
    return (found, None) if found is not None else None
