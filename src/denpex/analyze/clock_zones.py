"""Clocks of several hosts on one time line: each input's zone where its lines say it, else inferred.

A node's logger prints its local time without a zone (`%(asctime)s`, glog's `I1207 15:00:00`), which Denpex reads
in this machine's zone. Two fixes, both noted in the report:
- an input whose own lines say their zone somewhere (`2026-12-08T00:25:28+0900 | ERROR | ...`) was written on a
  host in that zone: its clocks without one are that host's local time too;
- nodes of one job start and stop together, so when one input's first AND last clocks both sit a whole number of
  half-hours (at least an hour) from the others', that is the zone, not the job: its events are moved by that much.
Only then is "which rank failed first" asked across inputs. Inputs that share a rank (restarts, rotated copies)
are never moved against each other, nor is a clock that printed its zone (its time is absolute).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import replace

from denpex.analyze import attempts
from denpex.analyze.collect import Candidate
from denpex.ingest.clock_span import ClockSpan

HALF_HOUR = 1800.0
START_SLACK = 300.0  # seconds between nodes' first lines (launch, rendezvous) beyond the zone's offset
END_SLACK = 900.0  # and between their last ones (a survivor times out or is torn down later)
LEAST_SHIFT = 3600.0  # a half-hour is a timeout's default as often as a zone's offset: not taken alone
MOST_SHIFT = 26 * 3600.0  # zones run from UTC-12 to UTC+14; more is a date (a year glog does not print), not a zone
LEAST_SPAN = 3.0  # an input whose clocks cover less (one clock, a traceback's teardown) says nothing of a zone


def align(cands: list[Candidate], spans: dict[str, ClockSpan]) -> list[str]:
    """Put every input's events on one clock where the logs allow; the notes say what was moved."""
    spans, notes = _read_in_own_zone(cands, spans)
    whole = {name: span for name, span in spans.items() if span.last is not None}
    if len(whole) < 2:
        return notes
    files = list(whole)
    order = sorted(files, key=lambda f: whole[f].first)
    firsts = [whole[f].first for f in order]
    zoned_before = [0]  # how many of the inputs in `order` up to each point began with a clock that said its zone
    for name in order:
        zoned_before.append(zoned_before[-1] + (whole[name].first_wall is None))

    def together(name: str) -> tuple[int, int]:
        first = whole[name].first
        return bisect_left(firsts, first - START_SLACK), bisect_right(firsts, first + START_SLACK)

    # the reference: the most inputs that started together (clocks with their zone first, then input order)
    position = {name: i for i, name in enumerate(files)}

    def weight(name: str) -> tuple[int, bool, int]:
        low, high = together(name)
        return high - low, zoned_before[high] > zoned_before[low], -position[name]

    ref = max(files, key=weight)
    low, high = together(ref)
    group = order[low:high]
    first = min(whole[g].first for g in group)
    # each input of the group ends when its own part of the job did (a concatenation of two nodes' logs ends where
    # the second does): another input's end may match any of theirs
    lasts = sorted(whole[g].last or 0.0 for g in group)
    if lasts[-1] - first < LEAST_SPAN:
        return notes
    ranks = _ranks_by_file(cands)
    group_ranks = set().union(*(ranks.get(g, set()) for g in group))
    group_attempts = {attempts.file_attempt(g) for g in group}
    in_group = set(group)
    shifts: dict[str, float] = {}
    for name in files:
        span = whole[name]
        if (name in in_group or span.first_wall is None or span.last_wall is None
                or (span.last or 0.0) - span.first < LEAST_SPAN or ranks.get(name, set()) & group_ranks
                or attempts.file_attempt(name) not in group_attempts):
            continue
        offset = round((span.first - first) / HALF_HOUR) * HALF_HOUR
        end = (span.last or 0.0) - offset
        if (LEAST_SHIFT <= abs(offset) <= MOST_SHIFT and abs(span.first - first - offset) <= START_SLACK
                and bisect_right(lasts, end + END_SLACK) > bisect_left(lasts, end - END_SLACK)):
            shifts[name] = offset
    for cand in cands:
        ev = cand.finding.evidence
        if ev.file in shifts and ev.timestamp is not None and ev.wall is not None:
            ev.timestamp -= shifts[ev.file]
    return notes + [_note(name, offset, ref) for name, offset in shifts.items()]


def _read_in_own_zone(cands: list[Candidate], spans: dict[str, ClockSpan]) -> tuple[dict[str, ClockSpan], list[str]]:
    """Clocks without a zone in an input whose other clocks say one: read in that zone, as absolute times."""
    out: dict[str, ClockSpan] = {}
    notes: list[str] = []
    by_file: dict[str, list[Candidate]] = {}
    for cand in cands:
        by_file.setdefault(cand.finding.evidence.file, []).append(cand)
    for name, span in spans.items():
        zone = span.zone
        if zone is None:
            out[name] = span
            continue
        moved = False
        for cand in by_file.get(name, []):
            ev = cand.finding.evidence
            if ev.timestamp is not None and ev.wall is not None:
                when = ev.wall - zone
                moved = moved or when != ev.timestamp
                ev.timestamp, ev.wall = when, None
        out[name] = replace(span, first=span.first if span.first_wall is None else span.first_wall - zone,
                            last=span.last if span.last is None or span.last_wall is None else span.last_wall - zone,
                            first_wall=None, last_wall=None)
        if moved:
            notes.append(f"the clocks of {name} that print no zone were read in the zone its other lines print "
                         f"(UTC{_hours(zone)}), as one host's local time")
    return out, notes


def _hours(zone: int) -> str:
    sign = "-" if zone < 0 else "+"
    minutes = abs(zone) // 60
    return f"{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def _ranks_by_file(cands: list[Candidate]) -> dict[str, set[int]]:
    found: dict[str, set[int]] = {}
    for cand in cands:
        if cand.finding.evidence.rank is not None:
            found.setdefault(cand.finding.evidence.file, set()).add(cand.finding.evidence.rank)
    return found


def _note(name: str, offset: float, ref: str) -> str:
    minutes = round(abs(offset) / 60)
    size = f"{minutes // 60} h" + (f" {minutes % 60} min" if minutes % 60 else "")
    way = "ahead of" if offset > 0 else "behind"
    return (f"the clock of {name} reads {size} {way} that of {ref} at both ends of the logs, as a node set to "
            f"another time zone prints its local time without the zone: its events were moved {size} "
            f"{'back' if offset > 0 else 'forward'} before comparing their times with the others'")
