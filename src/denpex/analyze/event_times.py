"""When a rank's error happened, where its lines give only bounds: copies of one error dated once, and timeouts
dated by the wait they state. The rest of the analysis compares these times across inputs (decide._pick)."""

from __future__ import annotations

import posixpath
import re

from denpex.analyze import attempts
from denpex.analyze.collect import Candidate, named_rank
from denpex.ingest.headers import parse
from denpex.model import Evidence


def date_copies_once(cands: list[Candidate]) -> None:
    """A rank's error printed in several places of its folder (stderr's traceback, the logger's record of it in
    stdout, its torchelastic error file; same rank, entry, text and restart attempt) is dated once for all of them.
    A line's own clock with a fraction of a second says when; else every time at hand is a bound the error came
    after (a line inherits its stream's last clock; an error file's time is cut to the second), so the latest of
    them is the closest. A copy with no rank (`logger.exception` under a record whose format has none) joins the
    one rank whose copy has its text there; a launcher's summary quoting the error is not a copy (it is printed
    after the process died)."""
    # the same error (entry, role, text, attempt, folder) -> each rank's copies of it
    copies: dict[tuple[object, ...], dict[int, list[Candidate]]] = {}
    rankless: list[tuple[tuple[object, ...], Candidate]] = []
    for cand in cands:
        ev = cand.finding.evidence
        if not cand.finding.fatal or (cand.entry is not None and cand.entry.layer == "launcher"):
            continue
        key = (cand.finding.entry_id, cand.finding.role, parse(ev.text).body.strip(), attempts.file_attempt(ev.file),
               posixpath.dirname(ev.file))
        if ev.rank is None:
            rankless.append((key, cand))
        elif named_rank(cand.finding.fields) is None:
            copies.setdefault(key, {}).setdefault(ev.rank, []).append(cand)
    for key, cand in rankless:
        owners = copies.get(key, {})
        if len(owners) == 1:
            next(iter(owners.values())).append(cand)
    for group in (group for by_rank in copies.values() for group in by_rank.values()):
        if len(group) < 2 or (len({c.finding.evidence.file for c in group}) < 2
                              and all(c.finding.evidence.rank is not None for c in group)):
            continue
        bounds = [t for c in group if (t := c.finding.evidence.timestamp) is not None]
        if not bounds:
            continue
        exact = [t for c in group if _own_fine_clock(c.finding.evidence) and (t := c.finding.evidence.timestamp)]
        when = min(exact) if exact else max(bounds)
        for cand in group:
            if not _own_fine_clock(cand.finding.evidence):
                cand.finding.evidence.timestamp = when


# how long a report says it waited: `Timed out after 21 seconds`, `wait timeout after 20000ms`, `Timed out waiting
# 15000ms for recv`, `Timeout(ms)=600000`, `ran for 600123 milliseconds before timing out`
_WAITED = re.compile(r"(?:[Tt]imed out (?:after|waiting)|[Tt]imeout after|ran for)\s+(?P<n>\d+(?:\.\d+)?)"
                     r"\s*(?P<unit>ms|milliseconds|s|sec|seconds)\b|Timeout\(ms\)=(?P<ms>\d+)")


def waits_after_their_bound(cands: list[Candidate]) -> None:
    """A timeout's report with no clock of its own carries its stream's last clock, a time before the wait even
    began (a rank's `Timed out after 21 seconds waiting for clients` under its last log record); the report came at
    least the wait it states later. Against another input's error with a clock of its own, the bound alone made the
    timeout look first (round 70's store host, 20 s before the rank it waited for failed)."""
    for cand in cands:
        ev = cand.finding.evidence
        if ev.clocked or ev.timestamp is None or not cand.finding.fatal:
            continue
        found = _WAITED.search(parse(ev.text).body)
        if found is None:
            continue
        if found.group("ms"):
            seconds = float(found.group("ms")) / 1000
        else:
            seconds = float(found.group("n")) / (1000 if found.group("unit") in ("ms", "milliseconds") else 1)
        ev.timestamp += seconds


def _own_fine_clock(ev: Evidence) -> bool:
    """The line printed its own clock, finer than a whole second."""
    return ev.clocked and ev.timestamp is not None and not ev.timestamp.is_integer()
