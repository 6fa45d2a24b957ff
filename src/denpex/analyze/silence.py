"""Silence and bare exits are evidence: the rank that stopped talking, or exited without a traceback.

Why: when one rank dies without a Python traceback (a SIGKILL from the OOM killer, a segfault, `os._exit`),
the only errors in the log are the *other* ranks' reports of losing it, and those name no culprit. Two
things still point at it: the launcher's report of its exit (`failed (exitcode: 1) local_rank: 2`, mp.spawn's
`process 2 terminated with exit code 1`) when that rank printed no error of its own, and, where the launcher's
lines are absent (per-rank files), the rank's silence while every other rank reports the loss.
"""

from __future__ import annotations

import re
import signal as signal_module

from denpex.analyze.collect import TORN_DOWN_FIELD, Candidate, Collection, named_rank, rank_list
from denpex.catalog.loader import Catalog
from denpex.catalog.schema import Entry
from denpex.ingest.headers import parse
from denpex.model import Finding, RankState, Role

# the collateral a rank's sudden death causes on its peers (lost connections, stores that went away)
_LOSS_CATEGORIES = ("dist.peer_or_store_failure", "dist.nccl_error")
_OWN_ERRORS = (Role.CAUSE, Role.SYMPTOM)
# how a launcher that cannot name the signal says a process died (Ray's `Worker exit type: SYSTEM_ERROR`)
ABNORMAL_EXIT_TYPES = frozenset({"SYSTEM_ERROR", "NODE_DIED", "OUT_OF_MEMORY"})
# a quiet rank's last words that say it left on purpose: the run as a whole is over for it (`training finished
# after 6 steps`, `done: 5 steps, leaving`, `no more batches`, `my work is done, shutting down rpc now`), not one
# step or epoch (`step 5 done`), after which
# a kill is as likely as ever
_FINISHED = re.compile(
    r"\b(?:training|train|run|job|loop|worker|rank\s?\d+)\s*(?:is\s+|has\s+)?(?:done|finished|complete|completed|over)\b"
    r"|\b(?:my|all(?:\s+the)?)\s+work\s+is\s+(?:done|finished|over)\b"
    r"|\bfinished\s+(?:training|the\s+run|after\s+\d+|all\b)"
    r"|\bdone\b\W{0,3}(?:after\s+)?\d+\s+(?:steps|iterations|iters|batches|epochs)\b"
    r"|\b(?:leaving|exiting)\b|\bshutting\s+down\s+(?:rpc|now|cleanly)\b"
    r"|\b(?:out\s+of|no\s+more|exhausted(?:\s+its|\s+the)?)\s+(?:data|batches|samples)\b"
    r"|\bend\s+of\s+(?:data|dataset|training)\b",
    re.IGNORECASE,
)


def promote_bare_exits(cands: list[Candidate]) -> None:
    """A launcher's report that rank R exited non-zero, when R printed no error itself, is the cause."""
    own = [c for c in cands if c.finding.fatal and c.finding.role is not Role.WRAPPER
           and named_rank(c.finding.fields) is None and not _echo_after_failure(c, cands)]
    if any(c.finding.evidence.rank is None and c.finding.role is not Role.COLLATERAL for c in own):
        return  # an error line without a rank could be that rank's own: its exit is not bare
    silent_errors = {c.finding.evidence.rank for c in own}
    raised = _the_one_raiser(cands)
    if raised is not None and any(c.finding.evidence.rank is None and _ends_a_traceback(c) for c in own):
        silent_errors.add(raised)  # an unranked traceback ended a process: the one that exited with an error code
    for cand in cands:
        finding = cand.finding
        code = finding.fields.get("exitcode")
        signal = _signal_number(str(finding.fields.get("signal", "")))
        if code is None and signal is not None:
            code = -signal  # the launcher's report of a death by signal (`got signal: 15`, `with signal SIGTERM`)
        if code is None and finding.fields.get("exit_type"):
            code = str(finding.fields["exit_type"])  # a death the launcher could not name (Ray's SYSTEM_ERROR)
        rank = _reported_rank(finding)
        if finding.role is not Role.WRAPPER or code is None or rank is None or rank in silent_errors:
            continue
        if str(code).lstrip("-").isdigit():
            if int(str(code)) == 0:
                continue
        elif str(code) not in ABNORMAL_EXIT_TYPES:
            continue
        finding.role = Role.CAUSE
        finding.fatal = True
        finding.reason = (
            f"rank {rank} exited with code {code} and printed no error of its own: its exit is the first event; "
            "the other ranks' errors answer it"
        )
        finding.rank_reason = f"named in the launcher's exit report, and silent: rank {rank} printed no traceback"
        finding.rank_evidence = "silent"


def _reported_rank(finding: Finding) -> int | None:
    """The rank a launcher's report is about: named in it, or the rank its line is tagged with when it reports an
    exit code (`[rank: 2] ... exitcode 1`)."""
    rank = named_rank(finding.fields)
    if rank is None and "exitcode" in finding.fields:
        rank = finding.evidence.rank
    return rank


def _ends_a_traceback(cand: Candidate) -> bool:
    """Is the finding the exception line of a Python traceback (what an uncaught exception prints as it ends)?"""
    exception = cand.block.exception if cand.block is not None else None
    evidence = cand.finding.evidence
    return exception is not None and (exception.file, exception.number) == (evidence.file, evidence.line)


def _the_one_raiser(cands: list[Candidate]) -> int | None:
    """The only rank the launcher saw exit with an error code (not a signal), when the others it reported were
    signalled: a Python traceback printed without a rank prefix ended that process (an exception exits with 1; the
    ranks the launcher then terminated print none)."""
    codes: dict[int, int] = {}
    for cand in cands:
        code = str(cand.finding.fields.get("exitcode", ""))
        rank = _reported_rank(cand.finding)
        if rank is not None and code.lstrip("-").isdigit():
            codes[rank] = int(code)
    raisers = [rank for rank, code in codes.items() if code > 0]
    return raisers[0] if len(raisers) == 1 else None


def _signal_number(text: str) -> int | None:
    """15 for `15`, `SIGTERM` or `TERM`; None for anything else."""
    if text.isdigit():
        return int(text)
    name = text if text.startswith("SIG") else f"SIG{text}"
    try:
        return int(signal_module.Signals[name])
    except KeyError:
        return None


def last_words(cands: list[Candidate], collection: Collection) -> None:
    """A rank that logged an error record as its last line and then exited non-zero (`CRITICAL validation check
    failed ...; aborting`, then sys.exit(2)) said why: that record, not the launcher's report of the exit, is the
    decisive line. A signal's death says nothing of the kind (a kill cuts the rank off mid-word)."""
    for cand in cands:
        finding = cand.finding
        code = finding.fields.get("exitcode")
        if finding.role is not Role.CAUSE or finding.rank_evidence != "silent" or code is None:
            continue
        if not str(code).isdigit() or int(str(code)) == 0:
            continue  # a negative code is a signal's
        rank = named_rank(finding.fields)
        state = collection.ranks.get(rank) if rank is not None else None
        last = state.last_line if state is not None else None
        if last is None or last.seq >= finding.evidence.seq or parse(last.text).level not in ("E", "F"):
            continue
        finding.fields.setdefault("stated_after", finding.evidence.text[:200])
        finding.evidence = last
        finding.context_before, finding.context_after = [], []
        finding.reason = (f"rank {rank} logged this error as its last line, then exited with code {code} without a "
                          "traceback: its own statement of why; the other ranks' errors answer it")
        finding.rank_evidence = "own_output"
        finding.rank_reason = (f"its own output: rank {rank}'s last line, before the launcher reported its exit "
                               f"(code {code})")


def _echo_after_failure(cand: Candidate, cands: list[Candidate]) -> bool:
    """An abort on the way out (`terminate called without an active exception`) printed after other errors: what
    any process torn down by SIGABRT may print once the job has failed, so it is no rank's error of its own. (With
    no error before it, it is the failure itself: a teardown abort after the work was done.)"""
    if cand.entry is None or not cand.entry.echo_of_earlier_error:
        return False
    seq = cand.finding.evidence.seq
    return any(c is not cand and c.finding.fatal and c.finding.role is not Role.WRAPPER
               and not (c.entry is not None and c.entry.echo_of_earlier_error)  # another abort is no failure before
               and c.finding.evidence.seq < seq for c in cands)


def silent_rank(cands: list[Candidate], collection: Collection, catalog: Catalog) -> Candidate | None:
    """When every error is a peer's report of a lost rank, the one rank that reported nothing is the culprit."""
    fatal = [c for c in cands if c.finding.fatal]
    if not fatal or any(c.finding.role in _OWN_ERRORS for c in fatal):
        return None
    quiet = lone_quiet_rank(cands, collection)
    if quiet is None or alive_at_teardown(collection.ranks[quiet[0]]):
        return None  # it hung, and the others' timeouts (attribution) name it; it did not die
    state = collection.ranks[quiet[0]]
    finished = _said_it_was_done(state)
    entry = catalog.generic("rank_finished" if finished else "rank_silence")
    if entry is None:
        return None
    return _silence_candidate(state, quiet[1], entry, finished)


def lone_quiet_rank(cands: list[Candidate], collection: Collection,
                    unheard: bool = False) -> tuple[int, list[int]] | None:
    """(rank, reporters): the one rank that printed no error while other ranks reported losing a peer, if one.
    With `unheard`, a rank of the job's printed size that wrote no ranked line at all counts as quiet too (a
    launcher whose ranks are prefixed only on their tracebacks: DeepSpeed's `[rank0]:`): the caller has a report of
    a death that names no rank."""
    fatal = [c for c in cands if c.finding.fatal]
    # a rank's own report of losing a peer; the launcher tearing the survivors down (its summary names each rank
    # it SIGTERMed) reports nothing lost
    losses = [c for c in fatal if c.finding.role is Role.COLLATERAL and c.finding.category in _LOSS_CATEGORIES
              and not (c.entry is not None and c.entry.layer == "launcher" and c.finding.evidence.rank is not None
                       and named_rank(c.finding.fields) is not None)]
    reporters = {c.finding.evidence.rank for c in losses if c.finding.evidence.rank is not None}
    if not reporters:
        return None
    # a rank's advisory warnings (torch's UserWarnings at start-up) say nothing about the failure
    speaking = {c.finding.evidence.rank for c in cands if c.finding.evidence.rank is not None
                and not (c.entry is not None and c.entry.advisory)}
    # a rank the launcher tore down after the failure was alive until then: it did not die without a word
    alive = {rank for c in cands for rank in rank_list(c.finding.fields.get(TORN_DOWN_FIELD, ""))}
    heard_or_alive = speaking | alive
    quiet = [state for rank, state in collection.ranks.items() if rank not in heard_or_alive and state.lines > 0]
    size = (collection.world_size or collection.worker_table.size or 0) if unheard else 0
    # a rank the launcher's summary names has a state, but no line of its own
    never = [rank for rank in range(size) if rank not in heard_or_alive
             and (rank not in collection.ranks or collection.ranks[rank].lines == 0)]
    if len(quiet) + len(never) > 1:
        # a launcher that tears the rest down without naming them (mp.spawn's SIGTERMs name pids) leaves every
        # survivor quiet too; the one whose last words say it had left went first (`no more batches, leaving`)
        quiet, never = [state for state in quiet if _said_it_was_done(state)], []
    if len(quiet) + len(never) != 1:
        return None
    return (quiet[0].rank if quiet else never[0]), sorted(reporters)


def alive_at_teardown(state: RankState) -> bool:
    """The launcher's summary shows the rank ended by its SIGTERM (`exitcode : -15 (pid: 14381)  (SIGTERM)`): it was
    alive when the job was torn down, hung perhaps, not dead without a word."""
    return state.exit_code == -signal_module.SIGTERM


def _said_it_was_done(state: RankState) -> bool:
    last = state.last_line or state.first_line
    return last is not None and _FINISHED.search(parse(last.text).body) is not None


def _silence_candidate(state: RankState, reporters: list[int], entry: Entry, finished: bool = False) -> Candidate:
    last = state.last_line or state.first_line
    assert last is not None
    span = ",".join(str(r) for r in reporters)
    how = ("its last line says it was done: it left while they still called collectives" if finished
           else "it died without a Python traceback")
    finding = Finding(
        entry_id=entry.id, category=entry.category, title=entry.title, role=Role.CAUSE, fatal=True,
        evidence=last, fields={"silent_rank": state.rank, "reporting_ranks": span}, confidence="low",
        reason=(
            f"every error in the log is another rank's report of losing a peer (ranks {span}); rank {state.rank} "
            f"printed no error at all: {how}"
        ),
        rank_reason=f"silent: rank {state.rank} stopped at its last line while ranks {span} lost their connection "
        "to it",
        context_before=[],
        rank_evidence="silent",
    )
    finding.ranks = {state.rank}
    return Candidate(finding, entry, ("silence", state.rank), entry.priority)
