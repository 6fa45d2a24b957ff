"""Compare a failed run with healthy runs of the same job (`diagnose --baseline`), or its ranks with each other.

Why: the catalog knows the failures PyTorch prints; a job that fails its own way (a config that differs on one
rank, a rank that leaves the loop early, an exception of the job's own) is found by what the failed run said
that a healthy run of the same job never did. Lines are compared as keys with what varies from run to run
masked (fleet.fingerprint.normalise_line: timestamps, paths, hosts, hex, ports); against a healthy run numbers
keep their shape (`lr=0.5` is not `lr=0.05`), between ranks they are masked (each rank's loss differs).
"""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterable

from denpex.analyze.phases import phase_at
from denpex.ingest import Source
from denpex.ingest.lines import framed
from denpex.masking import normalise_line
from denpex.model import Comparison, Evidence, Line, RankDivergence

# framing every line costs ~0.4 s a MB: --baseline (asked for) reads up to MAX_BYTES; a plain diagnosis compares
# ranks only up to SPATIAL_BYTES, so the fast path on big logs stays as fast as it was
MAX_BYTES = 16 << 20
SPATIAL_BYTES = 256 << 10
MIN_RANKS_FOR_MAJORITY = 3  # comparing ranks with each other needs a majority to stand for "normal"
ROUTINE_REPEATS = 3  # a line a rank prints this often is its routine (rank 0's own progress lines), not a departure
_TRACEBACK = "Traceback (most recent call last):"
_EXCEPTION = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning|Failure|Fault)\b(?::|$)"
                        r"|^[A-Za-z_][\w.]*\.[A-Z]\w*: ")

Streams = dict[int | None, list[Line]]


def small_enough(sources: list[Source], limit: int = MAX_BYTES) -> bool:
    """Whether the sources can be read again (a long pipe cannot: it was read once, as it came) and are small."""
    return all(s.stream is None for s in sources) and sum(s.size_hint() for s in sources) <= limit


def read_lines(sources: Iterable[Source]) -> list[Line]:
    """Every line of the sources, framed as the diagnosis frames them (rank prefixes parsed)."""
    lines: list[Line] = []
    seq = 0
    for source in sources:
        for _, line in framed(source, start_seq=seq):
            seq = line.seq
            lines.append(line)
    return lines


def streams(lines: Iterable[Line]) -> Streams:
    """The lines of each rank, in order; lines that name no rank under None."""
    out: Streams = defaultdict(list)
    for line in lines:
        out[line.rank].append(line)
    return dict(out)


def _key(line: Line, keep_shape: bool) -> str:
    return normalise_line(line.body, keep_shape=keep_shape)


def _evidence(line: Line) -> Evidence:
    return Evidence(file=line.file, line=line.number, text=line.text, rank=line.rank, timestamp=line.timestamp,
                    seq=line.seq)


def _in_traceback(stream: list[Line], index: int) -> bool:
    """Whether the line is a traceback's header or one of its frames (indented lines after the header)."""
    for j in range(index, max(-1, index - 400), -1):
        body = stream[j].body
        if _TRACEBACK in body:
            return True
        if j != index and not body[:1].isspace():
            return False
    return False


def _telling(stream: list[Line], index: int) -> Line:
    """The line that says what a divergence is: a traceback's header and frames say little, its exception line
    says what went wrong."""
    if not _in_traceback(stream, index):
        return stream[index]
    for line in stream[index + 1 : index + 400]:
        body = line.body.strip()
        if _EXCEPTION.match(body) and not line.body[:1].isspace():
            return line
    return stream[index]


def _first_extra(failed: list[Line], known: set[str], keep_shape: bool) -> int | None:
    for i, line in enumerate(failed):
        if not line.body.strip():
            continue
        if _key(line, keep_shape) not in known:
            return i
    return None


def _missing(failed: list[Line], healthy: list[Line]) -> tuple[Line, Line] | None:
    """Where a stream stopped early: (the failed run's last line, the healthy run's next line after the line
    that matched it), found by walking both in order with the keys of the lines they share."""
    if not failed or not healthy:
        return None
    positions: dict[str, list[int]] = defaultdict(list)
    for i, line in enumerate(healthy):
        positions[_key(line, True)].append(i)
    at = -1
    for line in failed:
        found = positions.get(_key(line, True))
        if not found:
            continue
        nxt = bisect.bisect_right(found, at)
        if nxt < len(found):
            at = found[nxt]
    later = [line for line in healthy[at + 1 :] if line.body.strip()]
    return (failed[-1], later[0]) if at >= 0 and later else None


def _order(divergences: list[RankDivergence], echoes: set[tuple[str, int]]) -> list[RankDivergence]:
    """Earliest first, in tiers: a new line that is no echo of another rank's failure, then a rank that stopped
    short, then echoes (timeouts, lost peers: a rank that hangs stops first, its peers time out later). Within a
    tier by timestamp where every line has one, else by position in the input."""
    def tier(d: RankDivergence) -> int:
        if d.kind == "missing":
            return 1
        return 2 if (d.evidence.file, d.evidence.line) in echoes else 0

    stamped = all(d.evidence.timestamp is not None for d in divergences)
    return sorted(divergences, key=lambda d: (tier(d), d.evidence.timestamp if stamped else 0, d.evidence.seq))


def _ranked_only(failed: Streams, found: list[RankDivergence]) -> list[RankDivergence]:
    """On a multi-rank job the launcher's lines (no rank) diverge only after a rank did: they go last."""
    if any(r is not None for r in failed):
        return [d for d in found if d.rank is not None] + [d for d in found if d.rank is None]
    return found


def against_baseline(failed_lines: list[Line], healthy_runs: list[list[Line]], names: list[str],
                     echoes: set[tuple[str, int]] | None = None) -> Comparison:
    """Each rank's first line that no healthy run printed for that rank (numbers kept in shape), or, for a rank
    that printed none, where it stopped short of the healthy run. `echoes`: (file, line) of the diagnosis's
    collateral findings, ordered last."""
    failed = streams(failed_lines)
    healthy = [streams(run) for run in healthy_runs]
    found: list[RankDivergence] = []
    for rank, stream in failed.items():
        refs = [run.get(rank) or run.get(None) or [] for run in healthy]
        known = {_key(line, True) for ref in refs for line in ref}
        extra = _first_extra(stream, known, keep_shape=True)
        if extra is not None:
            line = _telling(stream, extra)
            found.append(RankDivergence(rank, "extra", _evidence(line), phase=phase_at(failed_lines, line.seq, rank)))
            continue
        short = next((m for m in (_missing(stream, ref) for ref in refs) if m is not None), None)
        if short is not None:
            last, expected = short
            found.append(RankDivergence(rank, "missing", _evidence(last), _evidence(expected),
                                        phase_at(failed_lines, last.seq, rank)))
    return Comparison("baseline", names, _ranked_only(failed, _order(found, echoes or set())))


def between_ranks(lines: list[Line], echoes: set[tuple[str, int]] | None = None) -> Comparison | None:
    """Each rank's first line (numbers masked) that fewer than half of the other ranks printed: the rank that
    departs from the majority first is a candidate culprit. None below MIN_RANKS_FOR_MAJORITY ranks."""
    by_rank = {r: s for r, s in streams(lines).items() if r is not None}
    if len(by_rank) < MIN_RANKS_FOR_MAJORITY:
        return None
    keys = {r: [_key(line, False) for line in s] for r, s in by_rank.items()}
    holders: dict[str, int] = defaultdict(int)
    for ks in keys.values():
        for k in set(ks):
            holders[k] += 1
    routine = {r: {k for k, n in Counter(ks).items() if n >= ROUTINE_REPEATS} for r, ks in keys.items()}
    majority = len(by_rank) // 2 + 1  # a line most ranks printed is normal
    found: list[RankDivergence] = []
    for rank, stream in by_rank.items():
        for i, line in enumerate(stream):
            key = keys[rank][i]
            if line.body.strip() and holders[key] < majority and key not in routine[rank]:
                told = _telling(stream, i)
                found.append(RankDivergence(rank, "extra", _evidence(told), phase=phase_at(lines, told.seq, rank)))
                break
    return Comparison("ranks", [], _order(found, echoes or set())) if found else None
