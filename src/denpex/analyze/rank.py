"""Choose the root cause by causal role, then time, then specificity; set the verdict.

Order of evidence (see DESIGN.md):
  1. role: a specific cause > an uncaught exception no entry explains > a symptom > collateral > a wrapper;
  2. among those, the earliest event wins (an event is one traceback chain or one multi-line log record);
  3. inside one event, the most specific entry (priority) wins, so `Python.h: No such file` beats the
     `CppCompileError` that carries it, and `Data-dependent branching` beats the bare `Unsupported`.
"""

from __future__ import annotations

import re

from denpex.analyze import silence
from denpex.analyze.collect import Candidate, Collection, named_rank
from denpex.catalog.loader import Catalog
from denpex.model import CollateralGroup, Diagnosis, Finding, Line, Role, Verdict

_TIER = {Role.CAUSE: 0, Role.SYMPTOM: 2, Role.COLLATERAL: 3, Role.WRAPPER: 4}


def _tier(cand: Candidate) -> int:
    role = cand.finding.role
    if role is Role.CAUSE and cand.finding.generic:
        return 1
    return _TIER.get(role, 9)


def _apply_details(cand: Candidate) -> None:
    if cand.entry is None or not cand.entry.details:
        return
    lines = [cand.finding.evidence.text] + [ln.text for ln in cand.finding.context_after]
    for detail in cand.entry.details:
        pattern = re.compile(detail.regex)
        window = lines[: detail.within + 1]
        if detail.many:
            collected: dict[str, list[str]] = {}
            for text in window:
                for found in pattern.finditer(text):
                    for key, value in found.groupdict().items():
                        if value is not None:
                            collected.setdefault(key, []).append(value)
            for key, values in collected.items():
                cand.finding.fields.setdefault(key, list(dict.fromkeys(values)))
        else:
            for text in window:
                found = pattern.search(text)
                if found:
                    for key, value in found.groupdict().items():
                        if value is not None:
                            cand.finding.fields.setdefault(key, value)
                    break


def _apply_refinements(cand: Candidate, catalog: Catalog) -> None:
    entry = cand.entry
    if entry is None or not entry.refinements:
        return
    # only the finding's own stream tells its context: another rank's ordinary `pin_memory=True` line next to a
    # CUDA OOM says nothing about that OOM
    ev = cand.finding.evidence
    own_rank = cand.finding.evidence.rank if named_rank(cand.finding.fields) is None else None

    def same_stream(line: Line) -> bool:
        return line.file == ev.file and (line.rank == own_rank or own_rank is None and line.rank is None)

    before = [ln.text for ln in cand.finding.context_before if same_stream(ln)]
    frames = cand.block.frames if cand.block is not None else []
    after = [ln.text for ln in cand.finding.context_after if same_stream(ln)]
    for refinement in entry.refinements:
        # the traceback the finding belongs to, and `within` lines on each side of it
        window = before[-refinement.within :] + frames + [ev.text] + after[: refinement.within]
        if any(re.search(refinement.when, text) for text in window):
            target = catalog.get(refinement.entry)
            if target is None:
                continue
            cand.entry = target
            cand.priority = target.priority + cand.priority / 1000  # keep the original order among re-filed
            cand.finding.entry_id = target.id
            cand.finding.category = target.category
            cand.finding.title = target.title
            cand.finding.reason = f"re-filed from {entry.id}: the log shows /{refinement.when}/"
            return


def _follow_pointers(cands: list[Candidate]) -> None:
    """A reporter of an earlier event hands its fatality to that event (the last one before it, same stream)."""
    for cand in cands:
        if cand.entry is None or not cand.entry.points_to or not cand.finding.fatal:
            continue
        ev = cand.finding.evidence
        earlier = [
            c
            for c in cands
            if c.entry is not None
            and c.entry.id in cand.entry.points_to
            and c.finding.evidence.file == ev.file
            and c.finding.evidence.rank == ev.rank
            and c.finding.evidence.seq < ev.seq
        ]
        if not earlier:
            continue
        target = max(earlier, key=lambda c: c.finding.evidence.seq)
        target.finding.fatal = True
        target.finding.role = Role.CAUSE
        target.finding.reason = f"made fatal by the later {cand.entry.id} at line {ev.line}"
        cand.finding.role = Role.WRAPPER


def _pick(pool: list[Candidate], notes: list[str]) -> Candidate:
    """Earliest event first; inside it the most specific entry; then the earliest line.

    Across inputs (per-rank files) "earliest" needs clocks: timestamps order the events when every
    candidate has one; otherwise the position in the input decides, and a note says so.
    """
    files = {c.finding.evidence.file for c in pool}
    timed = all(c.finding.evidence.timestamp is not None for c in pool)
    untimed_files = len(files) > 1 and not timed
    if untimed_files:
        notes.append(
            "events from several inputs lack timestamps, so which came first cannot be told: the order of the "
            "files says nothing about time; the most specific of each file's first event was taken"
        )
    file_rank: dict[str, float] = {}
    if untimed_files:  # each file's first event competes on specificity alone, not on the files' order
        firsts: dict[str, Candidate] = {}
        for cand in pool:
            known = firsts.get(cand.finding.evidence.file)
            if known is None or cand.finding.evidence.seq < known.finding.evidence.seq:
                firsts[cand.finding.evidence.file] = cand
        same_event = {f: [c for c in pool if c.event == first.event] for f, first in firsts.items()}
        best = {f: max(c.priority for c in group) for f, group in same_event.items()}
        file_rank = {f: -p for f, p in best.items()}

    def when(cand: Candidate) -> tuple[float, int]:
        ev = cand.finding.evidence
        if untimed_files:
            return (file_rank.get(ev.file, 0.0), ev.seq)
        return ((ev.timestamp or 0.0) if timed and len(files) > 1 else 0.0, ev.seq)

    first: dict[tuple[object, ...], tuple[float, int]] = {}
    for cand in pool:
        key = when(cand)
        if cand.event not in first or key < first[cand.event]:
            first[cand.event] = key
    return min(pool, key=lambda c: (first[c.event], -c.priority, c.finding.evidence.seq))


def decide(collection: Collection, catalog: Catalog, inputs: list[str]) -> Diagnosis:
    cands = collection.candidates
    notes: list[str] = []
    for cand in cands:
        _apply_refinements(cand, catalog)
        _apply_details(cand)
    _follow_pointers(cands)
    for cand in cands:
        if cand.event in collection.handled_events and cand.finding.fatal and cand.finding.role is Role.CAUSE:
            cand.finding.fatal = False
            cand.finding.role = Role.WARNING
            cand.finding.reason = "its log record says the error was handled (a choice skipped, a fallback taken)"
    if not any(c.finding.fatal and _tier(c) <= 1 for c in cands):
        silence.promote_bare_exits(cands)
        quiet = silence.silent_rank(cands, collection, catalog)
        if quiet is not None:
            cands = [*cands, quiet]
    fatal = [c for c in cands if c.finding.fatal and c.finding.role in _TIER]
    warnings = [c for c in cands if not c.finding.fatal and c.finding.role is Role.WARNING
                and not (c.entry is not None and c.entry.advisory)]
    advisory = {c.finding.entry_id for c in cands if c.entry is not None and c.entry.advisory}
    if advisory:
        notes.append("advisory warnings listed among the findings, not counted in the verdict: "
                     + ", ".join(sorted(advisory)))
    root: Candidate | None = None
    if fatal:
        verdict = Verdict.FAILURE
        best = min(_tier(c) for c in fatal)
        root = _pick([c for c in fatal if _tier(c) == best], notes)
        root.finding.reason = root.finding.reason or _why(root, fatal)
    elif warnings:
        verdict = Verdict.WARNING
        root = max(warnings, key=lambda c: (c.priority, -c.finding.evidence.seq))
        root.finding.reason = root.finding.reason or "the only problems are non-fatal; this is the most specific"
    else:
        verdict = Verdict.CLEAN
    if root is not None:
        root = _odd_one_out(root, cands)
        _attribute_rank(root, cands, collection)
        notes.extend(_clock_doubts(root, cands))
    findings = _dedupe([c.finding for c in cands])
    if root is not None and not any(f is root.finding for f in findings):
        findings = [root.finding] + [f for f in findings if (f.entry_id, f.evidence.rank, f.role)
                                     != (root.finding.entry_id, root.finding.evidence.rank, root.finding.role)]
    return Diagnosis(
        verdict=verdict,
        root_cause=root.finding if root else None,
        findings=findings,
        inputs=inputs,
        lines_read=collection.lines_read,
        ranks=collection.ranks,
        notes=notes,
        collateral=_collateral_groups(cands, collection),
    )


_TIMEOUT_CATEGORY = "dist.collective_timeout"


def _behind_in_steps(collection: Collection, reporters: set[int | None]) -> tuple[int, int, int] | None:
    """The single rank whose last logged training step is behind all the others (which agree)."""
    steps = {r: st.last_step for r, st in collection.ranks.items() if st.last_step is not None}
    if len(steps) < 3 or not any(r in steps for r in reporters):
        return None
    reached = max(steps.values())
    behind = [r for r, step in steps.items() if step < reached]
    if len(behind) != 1:
        return None
    return behind[0], steps[behind[0]], reached


def _lowest_seq(cands: list[Candidate]) -> tuple[int, int] | None:
    """The single rank whose timed-out collective has the lowest SeqNum, when ranks disagree."""
    seqs: dict[int, int] = {}
    for c in cands:
        ev = c.finding.evidence
        if (c.finding.category == _TIMEOUT_CATEGORY and c.finding.role is Role.COLLATERAL and ev.rank is not None
                and "seq" in c.finding.fields):
            seq = int(str(c.finding.fields["seq"]))
            seqs[ev.rank] = min(seq, seqs.get(ev.rank, seq))
    if len(set(seqs.values())) < 2:
        return None
    low = min(seqs.values())
    lowest = [r for r, s in seqs.items() if s == low]
    return (lowest[0], low) if len(lowest) == 1 else None
_AGENT_ENTRIES = ("torchrun-child-failed", "host-oom-killed")
# e.g. gloo aborts the *receiving* rank of a mismatched collective: its SIGABRT may name the victim
_VICTIM_EXITS = ("dist.collective_mismatch", "dist.collective_timeout", "dist.peer_or_store_failure")


_CLOCK_SLACK = 1.0  # seconds an echo may appear stamped before its cause without raising doubt


def _clock_doubts(root: Candidate, cands: list[Candidate]) -> list[str]:
    """An echo stamped well before its cause on another rank means the clocks disagree: say so."""
    when = root.finding.evidence.timestamp
    if when is None or root.finding.evidence.rank is None or named_rank(root.finding.fields) is not None:
        return []  # only the ranks' own lines carry their own clocks (not the agent's reports about them)
    early = [
        c.finding.evidence
        for c in cands
        if c.finding.role is Role.COLLATERAL
        and c.finding.evidence.timestamp is not None
        and c.finding.evidence.rank is not None
        and c.finding.evidence.rank != root.finding.evidence.rank
        and c.finding.evidence.timestamp < when - _CLOCK_SLACK
    ]
    if not early:
        return []
    first = min(early, key=lambda ev: ev.timestamp or 0.0)
    lead = when - (first.timestamp or 0.0)
    return [
        f"clocks may disagree: an echo on rank {first.rank} ({first.file}:{first.line}) is stamped {lead:.1f} s "
        "before the cause it answers; the order of events across ranks was taken from the causal roles"
    ]


def _odd_one_out(root: Candidate, cands: list[Candidate]) -> Candidate:
    """Ranks that report what each of them ran (collective fingerprints): the one that differs started it.

    With a majority (3+ ranks) the rank alone in its fingerprint is the culprit and its line becomes the
    evidence; with two ranks that disagree nobody can tell, and the report says so.
    """
    if "fingerprint" not in root.finding.fields or root.entry is None:
        return root
    by_rank: dict[int, Candidate] = {}
    for cand in cands:
        rank = cand.finding.evidence.rank
        if cand.entry is root.entry and "fingerprint" in cand.finding.fields and rank is not None:
            by_rank.setdefault(rank, cand)
    groups: dict[str, list[int]] = {}
    for rank, cand in by_rank.items():
        groups.setdefault(str(cand.finding.fields["fingerprint"]), []).append(rank)
    other = root.finding.fields.get("other_rank")
    if len(by_rank) == 1 and other is not None:
        # one report only: its printer compared itself with every rank and names the first that differs
        root.finding.initiating_rank = int(str(other))
        root.finding.rank_reason = (
            f"named in the message: rank {other}'s collective differs from that of rank {next(iter(by_rank))}, the "
            "only rank whose report is in the log (if that rank was the odd one, every other rank differs from it)"
        )
        return root
    if len(groups) < 2:
        return root
    alone = [ranks[0] for ranks in groups.values() if len(ranks) == 1]
    majority = max(len(ranks) for ranks in groups.values())
    if len(alone) == 1 and majority >= 2:
        odd = by_rank[alone[0]]
        odd.finding.reason = root.finding.reason
        odd.finding.rank_reason = (
            f"rank {alone[0]} is the only rank whose collective differs from the others' "
            f"({len(by_rank) - 1} ranks agree)"
        )
        return odd
    root.finding.rank_unknown = True
    root.finding.rank_reason = f"{len(by_rank)} ranks disagree on the collective and none is alone: cannot tell which"
    return root


def _attribute_rank(root: Candidate, cands: list[Candidate], collection: Collection) -> None:
    """Name the initiating rank when the decisive line alone does not.

    1. A collective timeout is reported by the ranks that arrived: the rank absent from those reports,
       though present in the job, is the straggler.
    2. A line without a rank prefix inherits the rank of its neighbours when they all agree.
    3. Last resort: torchrun's first observed failure (`failed (exitcode: N) local_rank: R`), a hint only.
    """
    finding = root.finding
    if finding.rank_unknown:  # ranks disagree and none is alone: only torchrun's hint is left
        _agent_hint(finding, cands, prefix=finding.rank_reason + "; ")
        return
    if finding.rank_reason:  # already decided (odd one out)
        return
    if finding.category == _TIMEOUT_CATEGORY and finding.role is Role.COLLATERAL:
        reporters = {
            c.finding.evidence.rank
            for c in cands
            if c.finding.category == _TIMEOUT_CATEGORY
            and c.finding.role is Role.COLLATERAL
            and c.finding.evidence.rank is not None
        }
        if reporters:
            known = set(collection.ranks) | reporters
            missing = [r for r in range(0, max(known) + 1) if r not in reporters]
            if len(missing) == 1:
                finding.initiating_rank = missing[0]
                finding.rank_reason = (
                    f"rank {missing[0]} is the only rank absent from the timeout reports of ranks "
                    f"{_span(sorted(reporters))}: the others waited for it"
                )
                return
            slow = _behind_in_steps(collection, reporters)
            if slow is not None:
                finding.initiating_rank, step, others = slow
                finding.rank_reason = (
                    f"rank {slow[0]} never logged a step past {step} while the ranks that timed out reached "
                    f"{others}: it fell behind"
                )
                return
            behind = _lowest_seq(cands)
            if behind is not None:
                finding.initiating_rank, seq = behind
                finding.rank_reason = (
                    f"every rank timed out, and rank {behind[0]} is the only one stuck at the lowest "
                    f"collective sequence number ({seq}): the others had moved past it"
                )
                return
    if finding.evidence.rank is not None:
        named = named_rank(finding.fields) is not None
        finding.rank_reason = (
            "named in the message: the decisive line is about this rank" if named
            else "the decisive line is this rank's own output"
        )
        return
    # neighbours decide only through ranked lines of the same file (and process, where lines say): lines without
    # a rank are no evidence for any rank
    own_pid = next((ln.pid for ln in finding.context_before[-1:] if ln.file == finding.evidence.file), None)
    after = [ln for ln in finding.context_after[:3] if ln.file == finding.evidence.file]
    near = list(root.ranks_before) + [ln.rank for ln in after if own_pid is None or ln.pid in (None, own_pid)]
    ranked = [r for r in near if r is not None]
    if len(ranked) >= 2 and len(set(ranked)) == 1:
        finding.initiating_rank = ranked[0]
        finding.rank_reason = (
            f"the decisive line has no rank prefix; the {len(ranked)} ranked lines around it all come from this rank"
        )
        return
    _agent_hint(finding, cands)


def _agent_hint(finding: Finding, cands: list[Candidate], prefix: str = "") -> None:
    """torchrun's first observed failure, when nothing better exists: a hint, and the report says so."""
    agent = [c for c in cands if c.entry is not None and c.entry.id in _AGENT_ENTRIES
             and named_rank(c.finding.fields) is not None]
    if not agent:
        return
    first = min(agent, key=lambda c: c.finding.evidence.seq)
    finding.initiating_rank = first.finding.evidence.rank
    finding.rank_unknown = False
    caveat = (
        " — low confidence: in a collective the first to exit can be the rank that noticed, not the one that"
        " started it" if finding.category in _VICTIM_EXITS else ""
    )
    finding.rank_reason = (
        prefix + "from torchrun's first observed failure (a hint: the agent reports the first exit it saw)" + caveat
    )


_GROUP_FIELDS = ("op", "seq", "timeout_ms", "signal", "exitcode")


def _collateral_groups(cands: list[Candidate], collection: Collection) -> list[CollateralGroup]:
    """Echoes grouped by kind with how many ranks and lines showed them."""
    groups: list[CollateralGroup] = []
    by_entry: dict[str, list[Candidate]] = {}
    for cand in cands:
        if cand.finding.role is Role.COLLATERAL:
            by_entry.setdefault(cand.finding.entry_id, []).append(cand)
    for entry_id, members in by_entry.items():
        ranks = sorted({c.finding.evidence.rank for c in members if c.finding.evidence.rank is not None})
        count = sum(n for (eid, _, role), n in collection.counts.items() if eid == entry_id and role is Role.COLLATERAL)
        first = min(members, key=lambda c: c.finding.evidence.seq).finding
        detail = ", ".join(f"{k}={first.fields[k]}" for k in _GROUP_FIELDS if k in first.fields)
        who = f"{len(ranks)} rank(s) [{_span(ranks)}]" if ranks else "no rank prefix"
        summary = f"{who}, {count} line(s): {first.title}" + (f" ({detail})" if detail else "")
        groups.append(CollateralGroup(entry_id, first.title, ranks, count, first.evidence, summary))
    return sorted(groups, key=lambda g: g.first.seq)


def _span(ranks: list[int]) -> str:
    """0-3,5,7-9: a compact list for 1,000 ranks."""
    parts: list[str] = []
    start = prev = None
    for r in ranks:
        if start is None:
            start = prev = r
        elif r == prev + 1:  # type: ignore[operator]
            prev = r
        else:
            parts.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = r
    if start is not None:
        parts.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(parts)


def _why(root: Candidate, fatal: list[Candidate]) -> str:
    others = [c for c in fatal if c is not root]
    tier = _tier(root)
    if tier == 0:
        kind = "a specific cause"
    elif tier == 1:
        kind = "an uncaught exception that no catalog entry explains"
    else:
        kind = f"the strongest evidence left ({root.finding.role.value})"
    same_event = [c for c in others if c.event == root.event]
    lower = sum(1 for c in others if _tier(c) > tier)
    later = sum(1 for c in others if _tier(c) == tier and c.event != root.event)
    parts = [f"{kind}, earliest of its kind"]
    if root.finding.classified_by:
        parts[0] = f"{kind} ({root.finding.classified_by}), earliest of its kind"
    if same_event:
        parts.append(f"most specific of {len(same_event) + 1} findings in the same error")
    if later:
        parts.append(f"{later} later finding(s) of the same strength")
    if lower:
        parts.append(f"outranks {lower} symptom/collateral/wrapper finding(s)")
    return "; ".join(parts)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    """One finding per (entry, rank, role) in the report: the first, with the count of repeats."""
    seen: dict[tuple[str, int | None, Role], Finding] = {}
    for finding in findings:
        key = (finding.entry_id, finding.evidence.rank, finding.role)
        if key not in seen:
            seen[key] = finding
    return list(seen.values())

