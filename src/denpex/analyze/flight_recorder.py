"""Compare the ranks' Flight Recorder dumps and name the rank that started a hang or a desync.

Why: a collective timeout is reported by the ranks that *arrived*; each rank's dump lists the collectives it
entered, by sequence number, so the rank missing at a sequence number (or running a different op, size or
dtype there) is the culprit, as PyTorch's own analyzer (`torch.distributed.flight_recorder`) reports it. That
evidence outranks what the log lines imply (absent from the timeout reports, lowest SeqNum, the launcher's hint),
but never the failing rank's own error: where both name a rank and disagree, a note says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from denpex.analyze.attribution import span
from denpex.ingest.flight_recorder import FrDump, FrEntry
from denpex.model import Diagnosis, FlightRecorderSummary, Role

# a rank's own failure outranks the dumps: they only say it did not join (it crashed, it was that rank's error)
_OWN_EVIDENCE = ("own_output", "first_in_time", "named_in_message", "silent")
# what the ranks that waited report: the reporter is not the culprit, whatever its line says
_ECHOES = ("dist.collective_timeout", "dist.peer_or_store_failure", "dist.nccl_error")


@dataclass(frozen=True, slots=True)
class _Problem:
    seq: int
    time_ns: int
    kind: str
    culprit: int | None
    missing: list[int]
    entry: FrEntry
    text: str


def summarise(dumps: list[FrDump], notes: list[str]) -> FlightRecorderSummary | None:
    """The dumps compared across ranks; None when no dump had a rank (nothing to compare)."""
    by_rank: dict[int, FrDump] = {}
    for dump in dumps:
        notes.extend(dump.notes)
        if dump.rank is None:
            notes.append(f"{dump.name}: Flight Recorder dump without a rank in its name or data: left out")
        elif dump.rank in by_rank:
            notes.append(f"{dump.name}: a second Flight Recorder dump of rank {dump.rank}: left out")
        else:
            by_rank[dump.rank] = dump
    if not by_rank:
        return None
    names = ", ".join(Path(d.name).name for d in by_rank.values())
    result = FlightRecorderSummary(dumps=[d.name for d in by_rank.values()], ranks=sorted(by_rank),
                                   partial=any(d.partial for d in by_rank.values()))
    result.last_completed = {r: _last_completed(d) for r, d in sorted(by_rank.items())}
    problems: list[_Problem] = []
    for pg in sorted({e.pg for d in by_rank.values() for e in d.entries if not e.is_p2p}):
        problems.extend(_compare(pg, by_rank, notes))
    if not problems:
        problems.extend(_lagging_status(by_rank))
    result.mismatches = [p.text for p in problems if p.kind == "mismatch"]
    if not problems:
        result.summary = f"Flight Recorder dumps ({names}): every rank joined every collective recorded"
        return result
    first = min(problems, key=lambda p: (p.time_ns, p.seq))
    group = f"{first.entry.pg}:{first.entry.pg_desc}" if first.entry.pg_desc else first.entry.pg
    result.culprit, result.kind, result.seq = first.culprit, first.kind, first.seq
    result.op, result.process_group, result.missing = first.entry.op, group, first.missing
    result.summary = f"Flight Recorder dumps ({names}): {first.text}"
    return result


def _last_completed(dump: FrDump) -> int | None:
    """pg_status says it (gloo's entries stay `scheduled` even when done); else the entries' last `completed`."""
    if dump.last_completed:
        return max(dump.last_completed.values())
    done = [e.seq for e in dump.entries if e.state == "completed" and not e.is_p2p]
    return max(done) if done else None


def _members(pg: str, by_rank: dict[int, FrDump]) -> list[int]:
    """The dumped ranks of process group `pg`: from pg_config (gloo writes its one group under the name ``)."""
    configs = [d.pg_ranks for d in by_rank.values() if d.pg_ranks]
    for config in configs:
        if pg in config:
            return [r for r in config[pg] if r in by_rank]
    singles = [next(iter(c.values())) for c in configs if len(c) == 1]
    if singles:
        return [r for r in singles[0] if r in by_rank]
    return sorted(by_rank)


def _compare(pg: str, by_rank: dict[int, FrDump], notes: list[str]) -> list[_Problem]:
    members = _members(pg, by_rank)
    seqs = {r: {e.seq: e for e in by_rank[r].entries if e.pg == pg and not e.is_p2p} for r in members}
    seqs = {r: s for r, s in seqs.items() if s or not by_rank[r].partial}  # a cut-off dump says nothing here
    if len(seqs) < 2:
        return []
    # the buffer is a ring: its oldest entries fall out, so only sequence numbers every rank could still hold
    start = max((min(s) for s in seqs.values() if s), default=0)
    top = max(max(s) for s in seqs.values() if s)
    problems: list[_Problem] = []
    for seq in range(start, top + 1):
        joined = {r: s[seq] for r, s in seqs.items() if seq in s}
        if not joined:
            continue
        entry = min(joined.values(), key=lambda e: e.time_created_ns or 0)
        missing = sorted(r for r in seqs if r not in joined)
        if missing:
            problems.append(_missing(seq, missing, seqs, entry))
            break  # past the first hole the ranks are out of step: later comparisons mean nothing
        mismatch = _mismatch(seq, joined, entry)
        if mismatch is not None:
            problems.append(mismatch)
            break
    return problems


def _missing(seq: int, missing: list[int], seqs: dict[int, dict[int, FrEntry]], entry: FrEntry) -> _Problem:
    last = {r: max(seqs[r], default=0) for r in missing}
    lowest = min(last.values())
    behind = [r for r, s in last.items() if s == lowest]
    culprit = missing[0] if len(missing) == 1 else (behind[0] if len(behind) == 1 else None)
    others = sorted(r for r in seqs if r not in missing)
    text = (f"{_ranks(missing)} never joined collective {seq} ({entry.op}, input sizes {entry.input_sizes}"
            f"{', ' + entry.where if entry.where else ''}) that {_ranks(others)} entered")
    if culprit is not None:
        text += f"; rank {culprit}'s last recorded collective is {last[culprit]}"
    return _Problem(seq, entry.time_created_ns or 0, "never_joined", culprit, missing, entry, text)


def _mismatch(seq: int, joined: dict[int, FrEntry], entry: FrEntry) -> _Problem | None:
    shapes: dict[tuple[str, str, str], list[int]] = {}
    for rank, e in sorted(joined.items()):
        shapes.setdefault((e.op, e.input_sizes, e.input_dtypes), []).append(rank)
    if len(shapes) < 2:
        return None
    alone = [ranks[0] for ranks in shapes.values() if len(ranks) == 1]
    majority = max(len(ranks) for ranks in shapes.values())
    culprit = alone[0] if len(alone) == 1 and majority >= 2 else None
    described = "; ".join(f"{_ranks(ranks)}: {op} sizes {sizes} dtypes {dtypes}"
                          for (op, sizes, dtypes), ranks in shapes.items())
    text = f"the ranks ran different collectives at sequence number {seq} ({described})"
    if culprit is not None:
        text += f": rank {culprit} is the only one that differs"
    else:
        text += ": no rank is alone in its collective, so the dumps cannot tell which one is wrong"
    return _Problem(seq, entry.time_created_ns or 0, "mismatch", culprit, [], joined[culprit] if culprit is not None
                    else entry, text)


def _lagging_status(by_rank: dict[int, FrDump]) -> list[_Problem]:
    """Without comparable entries (cut-off dumps), pg_status' last enqueued collective still shows a laggard."""
    enqueued = {r: max(d.last_enqueued.values()) for r, d in by_rank.items() if d.last_enqueued}
    if len(enqueued) < 2 or len(set(enqueued.values())) < 2:
        return []
    low = min(enqueued.values())
    behind = [r for r, s in enqueued.items() if s == low]
    if len(behind) != 1:
        return []
    others = {r: s for r, s in enqueued.items() if r != behind[0]}
    entry = FrEntry(-1, low + 1, "", "", "?", False, "", "", "scheduled", None, None, "")
    text = (f"rank {behind[0]} enqueued collectives only up to {low} while {_ranks(sorted(others))} reached "
            f"{min(others.values())} (pg_status; the entries themselves could not be compared)")
    return [_Problem(low + 1, 0, "lagging", behind[0], [behind[0]], entry, text)]


def _ranks(ranks: list[int]) -> str:
    return f"rank {ranks[0]}" if len(ranks) == 1 else f"ranks {span(ranks)}"


def merge(diagnosis: Diagnosis, summary: FlightRecorderSummary) -> None:
    """Make the dumps' culprit the initiating rank where the log's own evidence about it is indirect."""
    diagnosis.flight_recorder = summary
    root = diagnosis.root_cause
    if summary.culprit is None:
        if summary.kind is not None:
            diagnosis.notes.append(summary.summary)
        return
    if root is None:
        diagnosis.notes.append(f"{summary.summary} — though no log line read reports a failure")
        return
    own = root.rank_evidence in _OWN_EVIDENCE and root.role is not Role.COLLATERAL
    if own and root.category not in _ECHOES or root.rank_evidence == "desynchronised":
        if root.rank == summary.culprit:
            root.rank_reason += f"; the Flight Recorder dumps agree ({summary.summary})"
        else:
            diagnosis.notes.append(
                f"the Flight Recorder dumps name rank {summary.culprit}, the log's own evidence rank {root.rank}: "
                f"{summary.summary}")
        return
    before = root.rank
    root.initiating_rank = summary.culprit
    root.rank_unknown = False
    root.rank_evidence = "flight_recorder"
    root.rank_reason = summary.summary
    if before is not None and before != summary.culprit:
        diagnosis.notes.append(f"the log's lines alone pointed to rank {before}; the Flight Recorder dumps name rank "
                               f"{summary.culprit}")
