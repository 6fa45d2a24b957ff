"""Which rank started it: the evidence that names the initiating rank, and which kind of evidence it was.

Why: the rank that *reports* a failure is often not the rank the failure is *about*. In order: a rank alone in
its collective fingerprint (desynchronised), a rank named inside the message, a rank absent from the others'
timeout reports or behind them (a straggler), the decisive line's own rank, its ranked neighbours, and last the
launcher's first observed exit (a hint). Each decision records its kind in `Finding.rank_evidence`.
"""

from __future__ import annotations

import re
from collections import Counter

from denpex.analyze.baseline import MIN_RANKS_FOR_MAJORITY
from denpex.analyze.collect import FAILED_RANKS_FIELD, Candidate, Collection, named_rank, rank_list
from denpex.analyze.silence import alive_at_teardown, lone_quiet_rank
from denpex.ingest.headers import parse
from denpex.masking import normalise_line
from denpex.model import Finding, Role
from denpex.scan.linear_regex import compile_linear

_TIMEOUT_CATEGORY = "dist.collective_timeout"
# a rank's report that it was left waiting in a collective: timed out, or its peer's connection closed
_WAITING_CATEGORIES = (_TIMEOUT_CATEGORY, "dist.peer_or_store_failure")


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


def _stopped_elsewhere(collection: Collection) -> tuple[int, str, str] | None:
    """(rank, the others' last line, its own), masked: the single rank whose last line differs from the one kind of
    line every other rank last logged (`step 41 loss ...` on all ranks but one, whose last words were `refreshing
    shard index`). The others waited in a collective after that line; the odd rank never came to it."""
    # each rank's last line before its own first error: what it was doing, not how it reported the failure
    last = {rank: normalise_line(parse(state.last_healthy.text).body)
            for rank, state in collection.ranks.items() if state.last_healthy is not None}
    alone = _alone(last)
    return None if alone is None else (alone[0], alone[2], alone[1])


def _alone(values: dict[int, str]) -> tuple[int, str, str] | None:
    """(rank, its value, every other rank's): the one rank whose value differs when all the others (a majority of
    3+ ranks) share one."""
    if len(values) < MIN_RANKS_FOR_MAJORITY:
        return None
    groups: dict[str, list[int]] = {}
    for rank, value in values.items():
        groups.setdefault(value, []).append(rank)
    if len(groups) != 2:
        return None
    (odd, odd_ranks), (usual, _) = sorted(groups.items(), key=lambda item: len(item[1]))
    return (odd_ranks[0], odd, usual) if len(odd_ranks) == 1 else None


def _named_by_most(root: Candidate, cands: list[Candidate]) -> bool:
    """Every rank's report of one check names the rank it disagrees with (`DDP expects same model across all
    ranks, but Rank 0 has 10 params, while rank 1 has inconsistent 8 params` on ranks 0, 2 and 3; `... while rank
    0 has inconsistent 10 params` on rank 1): the rank most of them name is the odd one, whatever the first
    report says."""
    if named_rank(root.finding.fields) is None:
        return False
    votes = Counter(r for c in cands if c.finding.entry_id == root.finding.entry_id and c.finding.fatal
                    for r in [named_rank(c.finding.fields)] if r is not None)
    if len(votes) < 2:
        return False
    (top, most), (_, second) = votes.most_common(2)
    if most <= second or top == root.finding.rank:
        return False
    root.finding.initiating_rank = top
    root.finding.rank_evidence = "named_in_message"
    root.finding.rank_reason = (f"named in {most} of {sum(votes.values())} reports of this error; the rest name rank "
                                f"{span(sorted(r for r in votes if r != top))}, which rank {top} compared itself with")
    return True


_LISTED = re.compile(r"(\d+): (.+)")


def _odd_in_listing(root: Candidate) -> bool:
    """A report that lists what every process passed (Accelerate's debug check: `- Process 0: [8]`, `- Process 2: [3]`,
    its entry's detail `listed`): with 3+ processes, the one alone in its value is the one out of step."""
    listed = root.finding.fields.get("listed")
    if not isinstance(listed, list):
        return False
    values: dict[int, str] = {}
    for item in listed:
        found = _LISTED.fullmatch(str(item))
        if found:
            values.setdefault(int(found.group(1)), found.group(2))
    alone = _alone(values)
    if alone is None:
        return False
    rank, odd, usual = alone
    root.finding.initiating_rank, root.finding.rank_evidence = rank, "desynchronised"
    root.finding.rank_reason = f"the report lists what each process passed: process {rank} {odd}, every other {usual}"
    return True


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


# the torch.distributed call a traceback was in (`distributed_c10d.py", line 5356, in barrier`); DDP's gradient
# all_reduce runs from C++ under `backward`, with no such frame
_POINT_TO_POINT = {"send", "recv", "isend", "irecv", "batch_isend_irecv", "_coalescing_manager"}
_C10D_FRAME = re.compile(r'distributed_c10d\.py"?, line \d+, in (\w+)')
_BACKWARD_FRAME = re.compile(r"[/\\]torch[/\\](?:_tensor|autograd[/\\]__init__)\.py\"?, line \d+, in backward")


def _collectives_of(cand: Candidate) -> tuple[str | None, str | None]:
    """(the torch.distributed call its traceback was in, the collective the report names) for a timeout report.

    The two are never compared with each other: NCCL runs a barrier as an ALLREDUCE (`OpType=ALLREDUCE`), and
    gloo's `op` is a send or a recv, not a collective."""
    frames = cand.block.frames if cand.block is not None else []
    calls = [m.group(1) for m in map(_C10D_FRAME.search, frames) if m]
    call = calls[-1] if calls else None
    if call in _POINT_TO_POINT:  # a pipeline's ranks send and receive by design: no collective to compare
        call = None
    if call is None and any(_BACKWARD_FRAME.search(frame) for frame in frames):
        call = "backward (DDP's gradient all_reduce)"
    op = cand.finding.fields.get("op")
    named = str(op) if op is not None and cand.entry is not None and cand.entry.ring_peer is None else None
    return call, named


def _odd_collective(cands: list[Candidate]) -> tuple[Candidate, str, str] | None:
    """(its report, its collective, the others'): the one rank whose collective, when it timed out or lost its
    peer, differs from every other rank's (3+ ranks, the others agree, at the same sequence number where the
    reports give one)."""
    by_frame: dict[int, str] = {}
    by_name: dict[int, str] = {}
    reports: dict[int, Candidate] = {}
    seqs: set[str] = set()
    for c in sorted(cands, key=lambda c: c.finding.evidence.seq):
        rank = c.finding.evidence.rank
        if c.finding.category not in _WAITING_CATEGORIES or c.finding.role is not Role.COLLATERAL or rank is None:
            continue
        call, named = _collectives_of(c)
        if call is not None:
            by_frame.setdefault(rank, call)
        if named is not None:
            by_name.setdefault(rank, named)
        if call is not None or named is not None:
            reports.setdefault(rank, c)
            if "seq" in c.finding.fields:
                seqs.add(str(c.finding.fields["seq"]))
    if len(seqs) > 1:
        return None
    for calls in (by_frame, by_name):
        if len(calls) < MIN_RANKS_FOR_MAJORITY:
            continue
        alone = _alone(calls)
        return None if alone is None else (reports[alone[0]], alone[1], alone[2])
    return None


# e.g. gloo aborts the *receiving* rank of a mismatched collective: its SIGABRT may name the victim
_VICTIM_EXITS = ("dist.collective_mismatch", "dist.collective_timeout", "dist.peer_or_store_failure")
_CLOCK_SLACK = 1.0  # seconds an echo may appear stamped before its cause without raising doubt


def clock_doubts(root: Candidate, cands: list[Candidate]) -> list[str]:
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


def odd_one_out(root: Candidate, cands: list[Candidate]) -> Candidate:
    """Ranks that report what each of them ran (collective fingerprints): the one that differs started it.

    With a majority (3+ ranks) the rank alone in its fingerprint is the culprit and its line becomes the
    evidence; with two ranks that disagree nobody can tell, and the report says so.
    """
    if root.finding.category in _WAITING_CATEGORIES and root.finding.role is Role.COLLATERAL:
        out_of_step = _odd_collective(cands)
        if out_of_step is not None:
            odd, call, others = out_of_step
            rank = odd.finding.evidence.rank
            odd.finding.reason = root.finding.reason
            odd.finding.rank_evidence = "desynchronised"
            odd.finding.rank_reason = (
                f"rank {rank} was waiting in {call} when it failed, every other rank in {others}: the ranks were in "
                f"different collectives, and rank {rank} is the one out of step")
            return odd
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
        # one report only: its printer compared itself with every rank in order and names the first that differs
        reporter, odd = next(iter(by_rank)), int(str(other))
        lowest_other = 1 if reporter == 0 else 0
        root.finding.initiating_rank = odd
        root.finding.rank_evidence = "named_in_message"
        if odd != lowest_other:
            root.finding.rank_reason = (
                f"named in the message: rank {odd}'s collective differs from that of rank {reporter}, the only rank "
                f"whose report is in the log; rank {reporter} compares itself with the ranks in order and rank "
                f"{lowest_other} matched it, so rank {odd} is the one that differs")
        else:
            root.finding.rank_reason = (
                f"named in the message: rank {odd}'s collective differs from that of rank {reporter}, the only rank "
                f"whose report is in the log; each rank names the lowest rank that differs from it, so the report "
                f"cannot tell whether rank {odd} or rank {reporter} is the odd one (the other ranks' reports can)")
        return root
    reference = root.finding.fields.get("reference_rank")
    if reference is not None and len(groups) == 1 and len(by_rank) >= 2 and int(str(reference)) not in by_rank:
        # each report compares its printer with one reference process (DDP's `... in process 0`); printers that
        # agree with each other and all differ from it leave the reference as the odd one
        odd = int(str(reference))
        root.finding.initiating_rank = odd
        root.finding.rank_evidence = "named_in_message"
        root.finding.rank_reason = (
            f"named in the messages: ranks {span(sorted(by_rank))} each report the same difference from process "
            f"{odd} (a rank is compared with process {odd} only), so process {odd} is the one that differs")
        return root
    if len(groups) < 2:
        return root
    alone = [ranks[0] for ranks in groups.values() if len(ranks) == 1]
    majority = max(len(ranks) for ranks in groups.values())
    if len(alone) == 1 and majority >= 2:
        odd = by_rank[alone[0]]
        odd.finding.reason = root.finding.reason
        odd.finding.rank_evidence = "desynchronised"
        odd.finding.rank_reason = (
            f"rank {alone[0]} is the only rank whose collective differs from the others' "
            f"({len(by_rank) - 1} ranks agree)"
        )
        return odd
    root.finding.rank_unknown = True
    root.finding.rank_evidence = "unknown"
    root.finding.rank_reason = f"{len(by_rank)} ranks disagree on the collective and none is alone: cannot tell which"
    return root


def _waited_for(cands: list[Candidate], collection: Collection,
                reporters: set[int | None]) -> tuple[int, str, str] | None:
    """(rank, evidence kind, reason): the rank the ranks that reported a collective timeout were waiting for."""
    known = set(collection.ranks) | reporters
    # the job's size, where it printed one, says which ranks exist even when some never wrote a ranked line (Ray's
    # workers tag their lines with a pid only)
    size = max([r + 1 for r in known if r is not None] + [collection.world_size or 0])
    missing = [r for r in range(0, size) if r not in reporters]
    # one report, no size printed, and a missing rank that printed nothing: the ranks below the reporter exist,
    # but so may any number above it, so the one missing below it is not the only one absent
    sized = collection.world_size is not None or len([r for r in reporters if r is not None]) >= 2 \
        or all(r in collection.ranks for r in missing)
    if len(missing) == 1 and sized:
        return missing[0], "absent_from_timeouts", (
            f"rank {missing[0]} is the only rank absent from the timeout reports of ranks "
            f"{span(sorted(r for r in reporters if r is not None))}: the others waited for it")
    quiet = lone_quiet_rank(cands, collection)
    if quiet is not None and alive_at_teardown(collection.ranks[quiet[0]]):
        return quiet[0], "silent", (
            f"rank {quiet[0]} printed no error while ranks {span(quiet[1])} timed out or lost it, and the launcher's "
            "summary shows it alive until the teardown (ended by its SIGTERM): it hung, and they waited for it")
    ring = _ring_peer(cands, collection, reporters)
    stopped = _stopped_elsewhere(collection) if ring is None or ring[1] == 1 else None
    if stopped is not None:  # one surviving report's ring peer may itself have been waiting further round
        rank, others, own = stopped
        return rank, "stopped_elsewhere", (
            f"every other rank's last line before the timeout was `{others}`; rank {rank} last logged `{own}` and "
            "was heard from no more: the others waited in a collective it never came to")
    if ring is not None:
        peer, votes, collective = ring
        spawned = _spawned_world(cands) if collection.world_size is None else None
        size = (f"; world size {spawned}: the failed process and the {spawned - 1} that mp.spawn tore down after it"
                if spawned is not None else "")
        world = collection.world_size or spawned or 0
        # in a ring every rank behind a hung one blocks too, and a launcher that tears the job down at the first
        # failure leaves one report: the rank it waited on may itself have been waiting further round
        doubt = (f" (only {votes} report survived the teardown: with {world} ranks the hung rank may be further "
                 "round the ring)" if votes == 1 and world > 2 and _torn_down(cands) else "")
        return peer, "waited_on", (
            f"{votes} rank(s) timed out in {collective} waiting on rank {peer} (gloo's ring: each rank receives "
            f"from the next rank and sends to the previous one); rank {peer} reported no timeout{size}{doubt}")
    slow = _behind_in_steps(collection, reporters)
    if slow is not None:
        rank, step, others = slow
        return rank, "behind_in_steps", (
            f"rank {rank} never logged a step past {step} while the ranks that timed out reached {others}: "
            "it fell behind")
    behind = _lowest_seq(cands)
    if behind is not None:
        rank, seq = behind
        return rank, "lowest_sequence", (
            f"every rank timed out, and rank {rank} is the only one stuck at the lowest collective sequence "
            f"number ({seq}): the others had moved past it")
    return None


_RING_CONTEXT = 40  # lines before a timeout report searched for the collective it was in (its traceback)


# torch.multiprocessing.spawn: the failed child's header (`-- Process 2 terminated with the following error:`) and,
# once a child failed, its teardown of the others (`Terminating process 4600 via signal SIGTERM`)
# torch's own multi-process tests (torch.testing._internal.common_distributed, MultiProcessTestCase) print a child's
# traceback the same way: `Process 1 exited with error code 10 and exception:`
SPAWN_HEADERS = ("terminated with the following error", "exited with error code")
_SPAWN_TEARDOWN = "Terminating process"
# what every report of spawn's about one child says: that header, `... terminated with exit code 1`, `... with signal
# SIGABRT` (the catalog's launcher entries read the rank; this only tells spawn's reports from other launchers')
_SPAWN_REPORT = "terminated with "


def _death_report(finding: Finding) -> bool:
    """A report that a process died without a traceback of its own: killed, crashed, or an exit code alone."""
    return finding.category == "mem.host_oom" or any(k in finding.fields for k in ("exitcode", "signal", "exit_type"))


def _torn_down(cands: list[Candidate]) -> bool:
    """Did a launcher stop the other processes once one failed (mp.spawn's SIGTERMs, torchrun's survivors)?"""
    return any(c.entry is not None and c.entry.layer == "launcher" and c.finding.role is Role.COLLATERAL
               and ("pid" in c.finding.fields or "signal" in c.finding.fields) for c in cands)


def _spawned_world(cands: list[Candidate]) -> int | None:
    """An mp.spawn job's size when it printed none: the failed process plus every process spawn tore down after
    it (spawn terminates all the children still alive; a hang leaves them all alive)."""
    failed = {named_rank(c.finding.fields) for c in cands if c.entry is not None and c.entry.layer == "launcher"
              and _SPAWN_REPORT in c.finding.evidence.text}
    torn_down = {str(c.finding.fields["pid"]) for c in cands if c.entry is not None and "pid" in c.finding.fields
                 and c.entry.layer == "launcher" and _SPAWN_TEARDOWN in c.finding.evidence.text}
    failed.discard(None)
    return len(failed) + len(torn_down) if failed and torn_down else None


def _absent_from_barrier(root: Candidate, cands: list[Candidate],
                         collection: Collection) -> tuple[int, str, str] | None:
    """A store barrier that timed out says how many ranks joined (`world_size=4, num_workers_joined=3`): the one
    rank missing from its reporters when all that joined reported, else the one rank absent from the whole log."""
    fields = root.finding.fields
    try:
        world, joined = int(str(fields["world_size"])), int(str(fields["joined"]))
    except (KeyError, ValueError):
        return None
    if not 0 < joined < world or root.entry is None:
        return None
    reports = [c for c in cands if c.entry is root.entry and "joined" in c.finding.fields]
    arrived = {r for c in reports for r in (c.finding.evidence.rank, _int(c.finding.fields.get("reporting_rank")))
               if r is not None}
    if len(arrived) == joined:  # every rank that reached the barrier timed out in it and said so
        missing = [r for r in range(world) if r not in arrived]
        said = f"ranks {span(sorted(arrived))} reported waiting in it"
    else:  # or: the ranks missing from the barrier are missing from the whole log
        missing = [r for r in range(world) if r not in arrived | set(collection.ranks)]
        said = "the only rank of the job that printed nothing"
    if len(missing) != world - joined or len(missing) != 1:
        return None
    return missing[0], "absent_from_barrier", (
        f"the store barrier counted {joined} of {world} ranks; {said}, so rank {missing[0]} never reached it")


# the key ProcessGroupGloo's rendezvous waits on for rank 0's address (`/default_pg/0//cpu//0/0`, `/0//cuda//0/0`)
_GROUP_KEY_OF_RANK_0 = re.compile(r"//(?:cpu|cuda)//\d+/0$")


def _under_torchrun(cands: list[Candidate]) -> bool:
    """Did torchelastic's agent launch the job (its own log records, its ChildFailedError summary)?"""
    return any(c.entry is not None and c.entry.layer == "launcher"
               and ("distributed/elastic" in c.finding.evidence.text or "ChildFailedError" in c.finding.evidence.text)
               for c in cands)


def _absent_from_store(root: Candidate, cands: list[Candidate],
                       collection: Collection) -> tuple[int, str, str] | None:
    """A wait on rank 0's key of the group's rendezvous (the catalog names no culprit for it). Under torchrun the
    agent hosts the store and rank 0 itself never came. Where rank 0 hosts it (env:// under mp.spawn, mpirun, a
    shell loop: `Timed out after 16 seconds waiting for clients. 2/3 clients joined`), rank 0 waits for every
    client before it creates the group: the one rank that neither reported nor hosts never joined."""
    fields = root.finding.fields
    key = str(fields.get("key", ""))
    if not _GROUP_KEY_OF_RANK_0.search(key) or named_rank(fields) is not None \
            or root.finding.category != "dist.peer_or_store_failure":
        return None
    hosted = any("joined" in c.finding.fields and "world_size" in c.finding.fields for c in cands)
    if not hosted and _under_torchrun(cands):
        # torchrun's agent hosts the store: rank 0 waits for no one, so its key is missing because rank 0 itself
        # never reached the group
        return 0, "named_in_message", (
            "named in the message: the ranks waited on rank 0's key of the group's rendezvous; under torchrun the "
            "agent hosts the store, so rank 0 never created the group")
    reporters = {c.finding.evidence.rank for c in cands
                 if c.finding.category == root.finding.category and c.finding.evidence.rank is not None}
    if not reporters:
        return None
    known = set(collection.ranks) | set(range(collection.world_size or 0))
    missing = sorted(known - reporters - {0})
    if not missing and 0 not in reporters and len(known) >= 2:
        # every other rank waited on rank 0's key and rank 0 said nothing: rank 0 never got to the group
        return 0, "absent_from_barrier", (
            f"ranks {span(sorted(reporters))} timed out waiting on rank 0's key of the group's rendezvous and rank 0 "
            "reported nothing: it never created the group")
    if len(missing) != 1 or max(known) < max(reporters):
        return None
    return missing[0], "absent_from_barrier", (
        f"ranks {span(sorted(reporters))} timed out waiting on rank 0's key of the group's rendezvous; rank 0 hosts "
        f"the store and waits for every rank to connect before it creates the group, and rank {missing[0]} is the "
        "only other rank of the job and reported nothing: it never joined")


def _int(value: object) -> int | None:
    return int(str(value)) if value is not None and str(value).isdigit() else None


def _ring_peer(cands: list[Candidate], collection: Collection,
               reporters: set[int | None]) -> tuple[int, int, str] | None:
    """(rank, votes, collective): the rank that the timeout reports of a ring collective waited on.

    The catalog says, per entry (`ring_peer`), which peer an operation waits on. A peer that reported a timeout
    itself was only waiting further down the ring. Without a printed world size a peer past either end of the
    ranks seen is not guessed, except the next rank up: a silent last rank is the straggler itself.
    """
    highest = max((r for r in list(collection.ranks) + list(reporters) if r is not None), default=0)
    printed = collection.world_size if collection.world_size is not None else _spawned_world(cands)
    size = printed if printed is not None and printed > highest else None
    votes: dict[int, int] = {}
    collective = ""
    for cand in cands:
        ring = cand.entry.ring_peer if cand.entry is not None else None
        rank = cand.finding.evidence.rank
        if ring is None or rank is None or cand.finding.category != _TIMEOUT_CATEGORY:
            continue
        offset = ring.offsets.get(str(cand.finding.fields.get(ring.field, "")))
        if offset is None:
            continue
        own = [ln.text for ln in cand.finding.context_before[-_RING_CONTEXT:]
               if ln.file == cand.finding.evidence.file and ln.rank in (rank, None)]
        found = next((m for m in map(compile_linear(ring.collective).search, own) if m), None)
        if found is None:
            continue
        peer = rank + offset
        if size is not None:
            peer %= size
        elif peer < 0 or peer > highest + 1:
            continue
        if peer in reporters or peer == rank:
            continue
        votes[peer] = votes.get(peer, 0) + 1
        collective = collective or ("DDP's gradient all_reduce" if "backward" in found.group() else "all_reduce")
    if not votes:
        return None
    best = max(votes.values())
    top = [peer for peer, count in votes.items() if count == best]
    return (top[0], best, collective) if len(top) == 1 else None


_SAME_FAILURE_REACH = 20  # lines after a rankless decisive line where a ranked report of it still counts


def attribute_rank(root: Candidate, cands: list[Candidate], collection: Collection) -> None:
    """Name the initiating rank when the decisive line alone does not.

    1. A collective timeout is reported by the ranks that arrived: the rank absent from those reports,
       though present in the job, is the straggler.
    2. A line without a rank prefix inherits the rank of its neighbours when they all agree.
    3. Last resort: the launcher's first observed failure (`failed (exitcode: N) local_rank: R`), a hint only.
    """
    finding = root.finding
    if finding.rank_unknown:  # ranks disagree and none is alone: only torchrun's hint is left
        _agent_hint(finding, cands, prefix=finding.rank_reason + "; ")
        return
    if finding.rank_reason:  # already decided (odd one out)
        return
    absent = _absent_from_barrier(root, cands, collection) or _absent_from_store(root, cands, collection)
    if absent is not None:
        finding.initiating_rank, finding.rank_evidence, finding.rank_reason = absent
        return
    if _named_by_most(root, cands) or _odd_in_listing(root):
        return
    if root.entry is not None and root.entry.stops_every_rank and finding.evidence.rank is None:
        # every rank was stopped from outside at once: the one whose training steps stop short of the others' hung
        slow = _behind_in_steps(collection, set(collection.ranks))
        if slow is not None:
            rank, step, others = slow
            finding.initiating_rank, finding.rank_evidence = rank, "behind_in_steps"
            finding.rank_reason = (f"every rank was stopped at once; rank {rank} never logged a step past {step} "
                                   f"while the others reached {others}: it hung and they waited for it")
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
            # a launcher's list of the ranks that failed (Ray Train's `[Rank 0,1,2 Error Snippet]`, one snippet for
            # the identical errors it folded): those ranks reached the collective and failed in it
            reporters |= {r for c in cands if c.entry is not None and c.entry.layer == "launcher"
                          for r in rank_list(c.finding.fields.get(FAILED_RANKS_FIELD, ""))}
        waited_for = _waited_for(cands, collection, reporters) if reporters else None
        if waited_for is not None:
            finding.initiating_rank, finding.rank_evidence, finding.rank_reason = waited_for
            return
    if named_rank(finding.fields) is None:
        # a later line of the same message may name the rank it is about (`... did not receive grad for rank 3`)
        in_message = [named_rank(c.finding.fields) for c in cands if c.event == root.event and c is not root]
        about = {r for r in in_message if r is not None}
        if len(about) == 1:
            finding.initiating_rank = about.pop()
            finding.rank_evidence = "named_in_message"
            finding.rank_reason = (
                f"named in the message: a later line of the same error is about rank {finding.initiating_rank}"
            )
            return
    if finding.evidence.rank is None:
        # the same failure reported again after it by a line that says its rank: a few lines on for any entry of
        # the category (a device assert's kernel lines carry no rank, the `[Rank 1] ... CUDA error: device-side
        # assert triggered` after them does), however far on for the same entry naming the process it is about
        # (`Fatal Python error: Segmentation fault` ... `process 2 terminated with signal SIGSEGV`)
        again = {c.finding.rank for c in cands
                 if c is not root and c.finding.category == finding.category and c.finding.rank is not None
                 and c.finding.evidence.file == finding.evidence.file
                 and c.finding.evidence.seq > finding.evidence.seq
                 and (c.finding.evidence.seq - finding.evidence.seq <= _SAME_FAILURE_REACH
                      or (c.finding.entry_id == finding.entry_id and named_rank(c.finding.fields) is not None))}
        if len(again) == 1:
            finding.initiating_rank = again.pop()
            finding.rank_evidence = "named_in_message"
            finding.rank_reason = (
                f"the decisive line has no rank; the same failure, reported again after it, is rank "
                f"{finding.initiating_rank}'s"
            )
            return
    if finding.evidence.rank is not None:
        named = named_rank(finding.fields) is not None
        later = sorted({c.finding.rank for c in cands if c.finding.fatal and c.finding.role is Role.CAUSE
                        and c.finding.rank not in (None, finding.rank)})
        if named and "local_rank" in finding.fields:
            finding.rank_evidence = "named_in_message"
            finding.rank_reason = (
                f"named in the launcher's report as local rank {finding.fields['local_rank']}; its failure summary "
                f"gives that process (same pid) global rank {finding.evidence.rank}")
        elif named:
            finding.rank_evidence = "named_in_message"
            finding.rank_reason = "named in the message: the decisive line is about this rank"
        elif later:
            finding.rank_evidence = "first_in_time"
            finding.rank_reason = (
                f"the decisive line is this rank's own output, before the errors of rank(s) {span(later)}"
            )
        else:
            finding.rank_evidence = "own_output"
            finding.rank_reason = "the decisive line is this rank's own output"
            _message_peer(root, cands, collection, finding.evidence.rank)
        return
    header = root.block.header if root.block is not None else None
    if header is not None and header.rank is not None and header.file == finding.evidence.file:
        # a traceback is one process's output: a logger that prefixes a record's first line only (SGLang's
        # `[2025-12-06 02:08:52 TP7] Scheduler hit an exception: Traceback ...`, `logger.exception` under a
        # rank-tagged format) leaves its frames and exception line bare
        finding.initiating_rank = header.rank
        finding.rank_evidence = "own_output"
        finding.rank_reason = (f"the decisive line ends a traceback that begins on a line of rank {header.rank} "
                               "(one record, prefixed on its first line only)")
        return
    if root.block is not None and root.block.record_rank is not None and header is not None \
            and header.file == finding.evidence.file:
        finding.initiating_rank = root.block.record_rank
        finding.rank_evidence = "own_output"
        finding.rank_reason = (f"the decisive line ends the traceback of rank {root.block.record_rank}'s error record "
                               "just above it (a logger prints a record's traceback bare, after its message)")
        return
    spared = _spared_by_every_abort(root, cands, collection)
    if spared is not None:
        finding.initiating_rank, finding.rank_evidence, finding.rank_reason = spared
        return
    aborted = _aborted_rank(root, cands, collection)
    if aborted is not None:
        finding.initiating_rank = aborted
        finding.rank_unknown = False
        finding.rank_evidence = "named_in_message"
        finding.rank_reason = (
            f"the abort report has no rank (the C++ runtime writes it straight to stderr); the launcher saw rank "
            f"{aborted} alone die of SIGABRT, which is how that report ends a process")
        _message_peer(root, cands, collection, aborted)
        return
    tagged = root.tag_rank
    if tagged is not None and root.finding.evidence.rank is None:
        # a launcher's per-process tag on every line (`[worker 3] `): its ranked lines say which rank it is
        finding.initiating_rank = tagged.rank
        finding.rank_evidence = "neighbours"
        finding.rank_reason = (
            f"the decisive line has no rank, but its process's tag `[{tagged.tag}]` has: the {tagged.lines} ranked "
            f"lines with that tag just before it are all rank {tagged.rank}'s, and the other tags' are other ranks'")
        return
    # neighbours decide only through ranked lines of the same file (and process, where lines say): lines without
    # a rank are no evidence for any rank
    own_pid = next((ln.pid for ln in finding.context_before[-1:] if ln.file == finding.evidence.file), None)
    after = [ln for ln in finding.context_after[:3] if ln.file == finding.evidence.file]
    near = list(root.ranks_before) + [ln.rank for ln in after if own_pid is None or ln.pid in (None, own_pid)]
    ranked = [r for r in near if r is not None]
    if len(ranked) >= 2 and len(set(ranked)) == 1:
        finding.initiating_rank = ranked[0]
        finding.rank_evidence = "neighbours"
        finding.rank_reason = (
            f"the decisive line has no rank prefix; the {len(ranked)} ranked lines around it all come from this rank"
        )
        return
    quiet = lone_quiet_rank(cands, collection, unheard=True) if _death_report(finding) else None
    if quiet is not None:
        # a death the launcher reported without a usable rank (DeepSpeed's `exits with return code = -9` shows the
        # last command it built, not the dead one's): the one rank that went quiet while the others lost it, or
        # the one rank of the job's printed size never heard from at all
        finding.initiating_rank = quiet[0]
        finding.rank_evidence = "silent"
        heard = quiet[0] in collection.ranks and collection.ranks[quiet[0]].lines > 0
        finding.rank_reason = (f"the report of the death names no rank; rank {quiet[0]} "
                               f"{'printed no error' if heard else 'was never heard from'} while ranks "
                               f"{span(quiet[1])} lost their connection to it")
        return
    sole = _sole_rank(root, cands, collection)
    if sole is not None:
        finding.initiating_rank = sole
        finding.rank_evidence = "own_output"
        finding.rank_reason = (
            f"the log is one process's output: rank {sole} is the only rank in it (no other rank, no world size "
            f"above 1), so its unprefixed lines are that rank's too")
        return
    _agent_hint(finding, cands)


def _sole_rank(root: Candidate, cands: list[Candidate], collection: Collection) -> int | None:
    """The rank of a one-process log: the same file shows one rank alone (torch's own `[rank0]:` warnings of a
    single-GPU server), no line or message names another, no two pids print (NCCL's `host:pid:tid`), and no world
    size above 1 was printed. Its bare traceback is then that process's; with a second rank anywhere, bare lines
    say nothing about a rank."""
    if len(collection.ranks) != 1 or (collection.world_size or 1) > 1:
        return None
    ((rank, state),) = collection.ranks.items()
    if state.first_line is None or state.first_line.file != root.finding.evidence.file:
        return None
    pids: set[int] = set()
    for cand in cands:
        if cand.finding.rank not in (None, rank) or named_rank(cand.finding.fields) not in (None, rank):
            return None
        if (cand.finding.evidence.rank == rank and cand.finding.role is Role.COLLATERAL
                and cand.finding.category.startswith("dist.")):
            # its one ranked line is a report of waiting on (or losing) a peer: the job has other processes, and
            # a bare cause beside it is as likely a peer's (a posted excerpt that kept one rank's watchdog line)
            return None
        pids.update(ln.pid for ln in (*cand.finding.context_before, *cand.finding.context_after) if ln.pid is not None)
    return rank if len(pids) <= 1 else None  # NCCL's host:pid prefixes of several processes: not one process


def _message_peer(root: Candidate, cands: list[Candidate], collection: Collection, rank: int) -> None:
    """Name the peer whose data the report is about (entry.message_peer) beside the reporter, and name it as the
    culprit when it went silent.

    The peer is the reporter's rank plus the catalog's offset, modulo the printed world size, else mp.spawn's, else
    the ranks the log shows (a last rank that never printed would be missed); it lands in the fields
    (`peer_rank`). Either rank may have called the other collective: the reporter received more than it asked
    for, or the peer sent more than the others. Silence can tell them apart: a peer that printed no error of its
    own while a third rank reported losing its connection was stuck in a collective of its own, the odd one. A
    peer that reported the loss like the rest tells nothing: in gloo's ring the sender of a larger message goes on
    to wait on its own next peer and loses the connection as the others do (round 17's mpirun and srun runs).
    The sizes can: a reporter that expected one or two elements was in the scalar collective (a loss, a flag)
    every rank runs each step, so the sender's larger one is the odd collective (dev rounds 19, 23, 49: the sender
    in each); a larger expected buffer leaves it open, and the reporter keeps the rank.
    """
    finding = root.finding
    peer = root.entry.message_peer if root.entry is not None else None
    if peer is None:
        return
    offset = peer.offsets.get(str(finding.fields.get(peer.field, "")))
    size = collection.world_size if collection.world_size is not None else _spawned_world(cands)
    if size is None and collection.ranks:  # no printed size: the ranks the job's lines show
        size = max(collection.ranks) + 1
    if offset is None or size is None or size <= max(rank, 1):
        return
    sender = (rank + offset) % size
    if rank > 0 and _point_to_point(cands):
        # a pipeline's stage receives its activations from the stage before it, not gloo's ring neighbour: the
        # size check failed on the first message of the step, the forward one. A likely sender, not a certain one:
        # an interleaved schedule, stages spread over data-parallel groups or a gradient's receive differ
        sender = rank - 1
        finding.fields["peer_rank"] = str(sender)
        finding.initiating_rank = sender
        finding.rank_evidence = "desynchronised"
        finding.rank_reason = (
            f"rank {rank} reported a message larger than it had posted a receive for, in a job whose ranks only "
            f"send and receive point to point (a pipeline): its forward input most likely comes from rank "
            f"{sender}, which would have sent the mismatched tensor (rank {rank} is the other candidate)")
        return
    finding.fields["peer_rank"] = str(sender)
    speaking = _ranks_with_own_errors(cands)
    others = sorted(speaking - {rank, sender})
    if sender not in speaking and others:
        finding.initiating_rank = sender
        finding.rank_evidence = "silent"
        finding.rank_reason = (
            f"rank {rank} reported the bad message; rank {sender} {peer.says} and then printed no error of its "
            f"own while rank(s) {span(others)} lost their connection: it was stuck in a collective the others "
            "did not call")
        return
    expected = _int_field(finding.fields, "expected_bytes")
    sent = _int_field(finding.fields, "sent_bytes")
    if expected is not None and sent is not None and expected <= _SCALAR_BYTES < sent:
        finding.initiating_rank = sender
        finding.rank_evidence = "desynchronised"
        finding.rank_reason = (
            f"rank {rank} reported the bad message; rank {sender} {peer.says}: {sent} bytes where rank {rank} "
            f"expected {expected}, a one- or two-element collective (a loss, a flag) that every rank runs, so the "
            f"odd one out is rank {sender}'s larger collective (rank {rank} is the other candidate)")
        return
    finding.rank_reason += (
        f"; rank {sender} {peer.says}: one of ranks {min(rank, sender)} and {max(rank, sender)} called a different "
        "collective (the reporter a smaller one, or the sender a larger one), and the log does not say which")


_PIPELINE_FRAME = re.compile(r"[/\\]distributed[/\\]pipelining[/\\]")


def _point_to_point(cands: list[Candidate]) -> bool:
    """Did the job's ranks wait in point-to-point calls (`dist.recv`, `isend`), as their tracebacks show, or run
    torch.distributed.pipelining (its frames, or its logger's lines near a report)? Then a message's sender is the
    stage it came from, not a ring neighbour."""
    seen = False
    for cand in cands:
        frames = cand.block.frames if cand.block is not None else []
        calls = [m.group(1) for m in map(_C10D_FRAME.search, frames) if m]
        if calls and calls[-1] not in _POINT_TO_POINT:
            return False  # a rank waited in a collective (a pipeline with data parallelism): not only sends
        if (calls and calls[-1] in _POINT_TO_POINT) or any(_PIPELINE_FRAME.search(frame) for frame in frames):
            seen = True
        near = (cand.finding.evidence, *cand.finding.context_before, *cand.finding.context_after)
        seen = seen or any(_PIPELINE_FRAME.search(ln.text) for ln in near)
    return seen


_SCALAR_BYTES = 8  # a receive buffer this small holds one or two fp32/int64 elements: a per-step scalar collective


def _int_field(fields: dict[str, object], name: str) -> int | None:
    value = fields.get(name)
    return int(value) if isinstance(value, str) and value.isdigit() else None


def _ranks_with_own_errors(cands: list[Candidate]) -> set[int]:
    """Ranks that printed a fatal error of their own (a launcher's report about a rank is not the rank's own)."""
    return {c.finding.evidence.rank for c in cands
            if c.finding.fatal and c.finding.evidence.rank is not None and c.finding.role is not Role.WRAPPER
            and not (c.entry is not None and c.entry.layer == "launcher")}


_SIGABRT_EXIT = -6  # a process's exit code when SIGABRT ended it (torchrun's `exitcode: -6`)


def _aborted_rank(root: Candidate, cands: list[Candidate], collection: Collection) -> int | None:
    """The rank of an unprefixed C++ abort report (`terminate called after throwing ...` / `what(): ...`): the one
    process the launcher saw die of SIGABRT (torchrun's exitcode -6, mp.spawn's `terminated with signal SIGABRT`,
    mpirun's `exited on signal 6`)."""
    finding = root.finding
    native = [ln.text for ln in finding.context_before[-2:] if ln.file == finding.evidence.file]
    if "what():" not in finding.evidence.text and not any("terminate called" in t for t in native):
        return None
    aborted = sigabrt_ranks(cands, collection)
    return aborted.pop() if len(aborted) == 1 else None


def _spared_by_every_abort(root: Candidate, cands: list[Candidate],
                           collection: Collection) -> tuple[int, str, str] | None:
    """Several ranks aborted on gloo's size check (each received a message larger than it had posted) and one rank
    of the job did not: in an exchange where every rank receives from every other (all_to_all, an expert-parallel
    dispatch) that rank is the one whose messages were too large."""
    peer = root.entry.message_peer if root.entry is not None else None
    if peer is None or peer.field not in root.finding.fields:
        return None
    # the reports' copies, counted whether kept or not (the C++ runtime's abort lines carry no rank)
    reports = max([root.finding.count] + [c.finding.count for c in cands
                                          if c.entry is root.entry and peer.field in c.finding.fields])
    aborted = sigabrt_ranks(cands, collection)
    if len(aborted) < 2 or reports < len(aborted):
        return None
    known = set(collection.ranks) | set(range(collection.world_size or 0))
    spared = sorted(known - aborted)
    if len(spared) != 1 or not aborted <= known:
        return None
    return spared[0], "desynchronised", (
        f"ranks {span(sorted(aborted))} each aborted on a message larger than it had posted a receive for (the "
        f"launcher saw them die of SIGABRT) and rank {spared[0]}, the job's only other rank, did not: its messages "
        "were the oversized ones")


def sigabrt_ranks(cands: list[Candidate], collection: Collection) -> set[int]:
    """The ranks the launcher saw die of SIGABRT (torchrun's exitcode -6, mp.spawn's `terminated with signal
    SIGABRT`, mpirun's `exited on signal 6`): where an unprefixed C++ abort report came from."""
    aborted = {rank for rank, state in collection.ranks.items() if state.exit_code == _SIGABRT_EXIT}
    for cand in cands:
        rank = named_rank(cand.finding.fields)
        code = str(cand.finding.fields.get("exitcode", ""))
        sig = str(cand.finding.fields.get("signal", ""))
        if rank is not None and (code == str(_SIGABRT_EXIT) or sig in ("SIGABRT", "6")):
            aborted.add(rank)
    return aborted



def _agent_hint(finding: Finding, cands: list[Candidate], prefix: str = "") -> None:
    """The launcher's first observed failure (torchrun's agent, mp.spawn, Lightning), when nothing better
    exists: a hint, and the report says so."""
    # the launcher's report names the rank in its text (`local_rank: 2`) or in its prefix (Lightning's
    # `[rank: 2] Child process ... terminated`)
    agent = [c for c in cands if c.entry is not None and c.entry.launcher_exit_report
             and (named_rank(c.finding.fields) is not None or c.finding.evidence.rank is not None)]
    if not agent:
        return
    first = min(agent, key=lambda c: c.finding.evidence.seq)
    where = f"{first.finding.evidence.file}:{first.finding.evidence.line}"
    finding.initiating_rank = first.finding.evidence.rank
    finding.rank_unknown = False
    finding.rank_evidence = "launcher_hint"
    caveat = (
        " — low confidence: in a collective the first to exit can be the rank that noticed, not the one that"
        " started it" if finding.category in _VICTIM_EXITS else ""
    )
    finding.rank_reason = (
        prefix + f"from the launcher's first observed failure ({where}, a hint: a launcher reports the first exit "
        "it saw)" + caveat
    )


def span(ranks: list[int]) -> str:
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
