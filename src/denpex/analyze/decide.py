"""Choose the root cause by causal role, then time, then specificity; set the verdict.

Order of evidence (see DESIGN.md):
  1. role: a specific cause > an uncaught exception no entry explains > a symptom > collateral > a wrapper;
  2. among those, the earliest event wins (an event is one traceback chain or one multi-line log record);
  3. inside one event, the most specific entry (priority) wins, so `Python.h: No such file` beats the
     `CppCompileError` that carries it, and `Data-dependent branching` beats the bare `Unsupported`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace

from denpex.analyze import attempts, attribution, clock_zones, event_times, layers, silence
from denpex.analyze.collect import Candidate, Collection, named_rank
from denpex.catalog.loader import Catalog
from denpex.ingest.headers import parse
from denpex.model import CollateralGroup, Diagnosis, Evidence, Finding, Line, Role, Verdict
from denpex.scan.linear_regex import compile_linear

_TIER = {Role.CAUSE: 0, Role.SYMPTOM: 2, Role.COLLATERAL: 3, Role.WRAPPER: 5}
_LAST_RESORT = 6


def _tier(cand: Candidate) -> int:
    role = cand.finding.role
    if role is Role.CAUSE and cand.finding.generic:
        return 1
    if role is Role.SYMPTOM and cand.finding.generic:
        return _LAST_RESORT  # an unexplained error record of torch's C++ side: only when nothing else is there
    if role is Role.COLLATERAL and cand.entry is not None and cand.entry.layer == "launcher":
        return 4  # the launcher tearing the survivors down answers the ranks' own reports, which come first
    return _TIER.get(role, 9)


def _apply_details(cand: Candidate) -> None:
    if cand.entry is None or not cand.entry.details:
        return
    lines = [cand.finding.evidence.text] + [ln.text for ln in cand.finding.context_after]
    for detail in cand.entry.details:
        pattern = compile_linear(detail.regex)
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


_QUOTED = 60  # characters of the text a refinement matched, quoted in the reason


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
        if refinement.evidence is not None and not compile_linear(refinement.evidence).search(ev.text):
            continue
        # the traceback the finding belongs to, and `within` lines on each side of it
        window = before[-refinement.within :] + frames + [ev.text] + after[: refinement.within]
        when = compile_linear(refinement.when)
        shown = next((m.group(0).strip() for m in map(when.search, window) if m), None)
        if shown is not None:
            target = catalog.get(refinement.entry)
            if target is None:
                continue
            cand.entry = target
            cand.priority = target.priority + cand.priority / 1000  # keep the original order among re-filed
            cand.finding.entry_id = target.id
            cand.finding.category = target.category
            cand.finding.title = target.title
            # in words: the text the log showed, never the refinement's regex
            said = f"the log shows “{shown[:_QUOTED]}{'…' if len(shown) > _QUOTED else ''}”" if shown else (
                f"the lines around it point to {target.title}")
            cand.finding.reason = f"re-filed from {entry.id} ({entry.title}): {said}"
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
        # the event it reports on came before it: a report inside its own traceback chain only repeats it
        before = [c for c in earlier if c.event != cand.event] or earlier
        target = max(before, key=lambda c: c.finding.evidence.seq)
        target.finding.fatal = True
        target.finding.role = Role.CAUSE
        target.finding.reason = f"made fatal by the later {cand.entry.id} at line {ev.line}"
        cand.finding.role = Role.WRAPPER


_ORIGINAL_GAP = 3  # lines from a re-raise report to the `Original Traceback` header it prints
# the headers under which a re-raise report prints the original exception: DataLoader's worker traceback, and the
# TorchScript interpreter's (`The following operation failed in the TorchScript interpreter.` then `Traceback of
# TorchScript (most recent call last):`, the scripted frames, and the original `RuntimeError: ...`)
_ORIGINAL_HEADERS = ("Original Traceback", "Traceback of TorchScript")
_ORIGINAL_REACH = 60  # lines from that header to the original exception, when the tracker split them


def _originals_below(cands: list[Candidate]) -> None:
    """A report that re-raises another process's exception and prints it below (`Caught ValueError in DataLoader
    worker process 2.`, `Original Traceback (most recent call last):`, the worker's frames, `ValueError: corrupt
    record 34 ...`): the original exception says what failed. The last exception of that traceback (a chain prints
    the raised one last) becomes the report's evidence, the entry's fix staying, and the chain's findings no entry
    explains are left as context; a specific entry's finding there stands on its own. No `Original Traceback` right
    below the report (a cut excerpt): the report keeps its own line."""
    for cand in cands:
        kind = cand.finding.fields.get("exception")  # the original's type, where the report names it
        if cand.entry is None or not cand.entry.original_below:
            continue
        ev = cand.finding.evidence
        header = next((ln.seq for ln in cand.finding.context_after[:_ORIGINAL_GAP]
                       if ln.body.lstrip().startswith(_ORIGINAL_HEADERS)), None)
        if header is None or cand.block is None:
            continue
        # Python prints it as the report's message: the same traceback block, after that header (or blocks that
        # begin at or after it, where it reads as a traceback of its own: TorchScript's, whose scripted source lines
        # end Python's frames), up to the next traceback of another report
        below = [c for c in cands if c is not cand and c.block is not None and c.finding.evidence.seq > header
                 and c.finding.evidence.file == ev.file and c.printed_by == cand.printed_by]
        chain = [c for c in below if c.block is not None and c.block.block_id == cand.block.block_id]
        split = [c for c in below if c.block is not None and header <= c.block.header.seq <= header + _ORIGINAL_REACH]
        if not chain and split:  # the first block below the header only
            first = min(split, key=lambda c: c.block.header.seq if c.block is not None else 0).block
            chain = [c for c in split if c.block is first]
        if not chain or not all(c.finding.generic for c in chain):
            continue
        original = max(chain, key=lambda c: c.finding.evidence.seq)
        if isinstance(kind, str) and not re.match(rf"\s*(?:[\w.]+\.)?{re.escape(kind)}\b",
                                                  parse(original.finding.evidence.text).body):
            continue
        cand.finding.evidence = replace(original.finding.evidence, rank=ev.rank if ev.rank is not None
                                        else original.finding.evidence.rank)
        for found in chain:
            found.finding.fatal = False
            found.finding.role = Role.CONTEXT
            found.finding.reason = f"the original exception {cand.entry.id}'s report re-raised: its evidence"


def _a_cause_of_its_own(cand: Candidate) -> bool:
    """A cause a rank printed, not a wait or a lost peer that a launcher's kill of some process would itself cause."""
    return (cand.finding.role is Role.CAUSE and cand.finding.category not in _WAIT_CATEGORIES
            and not (cand.entry is not None and cand.entry.lost_peer))


def _echoes(cands: list[Candidate], collection: Collection) -> None:
    """An abort on the way out, after a fatal error of its own stream (same file and rank), is that error's echo.
    The C++ runtime writes its abort report unprefixed: its rank is then the one rank the launcher saw die of
    SIGABRT, if one did. A launcher's unranked report on all its processes (MPICH's `Killed (signal 9)` after its
    clean-up) echoes a cause any of them printed before; the lost peers that the kill itself causes do not count."""
    aborted: set[int] | None = None
    for cand in cands:
        if cand.entry is None or not cand.entry.echo_of_earlier_error or not cand.finding.fatal:
            continue
        ev = cand.finding.evidence
        rank = ev.rank
        every_process = rank is None and cand.entry.launcher_exit_report
        if rank is None and not every_process:
            aborted = attribution.sigabrt_ranks(cands, collection) if aborted is None else aborted
            rank = next(iter(aborted)) if len(aborted) == 1 else None
        earlier = [c for c in cands if c is not cand and c.finding.fatal
                   and c.finding.role in (Role.CAUSE, Role.SYMPTOM, Role.COLLATERAL)
                   and not (c.entry is not None and c.entry.echo_of_earlier_error)
                   and c.finding.evidence.file == ev.file
                   and (_a_cause_of_its_own(c) if every_process else c.finding.evidence.rank == rank)
                   and c.finding.evidence.seq < ev.seq]
        if not earlier:
            continue
        first = min(earlier, key=lambda c: c.finding.evidence.seq)
        cand.finding.role = Role.COLLATERAL
        cand.finding.reason = (f"an echo: its process had already failed at line {first.finding.evidence.line} "
                               f"({first.finding.entry_id})")


_WAIT_CATEGORIES = ("dist.collective_timeout", "dist.peer_or_store_failure")


def _timeouts_before_losses(pool: list[Candidate]) -> list[Candidate]:
    """Among echoes only, a collective's timeout comes before the lost connections it causes: the rank that timed
    out exits, and its peers then find it gone. Printed order says nothing here (each rank's traceback is flushed
    when it exits); only clocks could show a loss first, and only a loss line's own clock: one inside a traceback
    carries its stream's last time, which says only that it came after that (round 53's ring: a rank's loss
    looked 1 ms older than the timeouts it answered, from the step lines printed 15 s before either)."""
    if any(c.finding.role is not Role.COLLATERAL for c in pool):
        return pool
    timeouts = [c for c in pool if c.finding.category == "dist.collective_timeout"]
    losses = [c for c in pool if c.entry is not None and c.entry.lost_peer]
    if not timeouts or not losses:
        return pool
    first_timeout = min((c.finding.evidence.timestamp for c in timeouts if c.finding.evidence.timestamp is not None),
                        default=None)
    if first_timeout is not None and any(c.finding.evidence.clocked and c.finding.evidence.timestamp is not None
                                         and c.finding.evidence.timestamp < first_timeout for c in losses):
        return pool  # the clocks say a connection was lost before any timeout fired
    return [c for c in pool if c not in losses]


def _raised_handling_an_echo(cands: list[Candidate]) -> None:
    """An exception Python chained onto a wait's or a lost peer's report of the same process (`During handling of
    the above exception, another exception occurred:` after `Connection closed by peer`, a fallback the job tried
    when its collective failed; or `raise ... from` it: `The above exception was the direct cause`) was raised
    because of that echo: it is an echo too, whatever its own words."""
    for cand in cands:
        finding = cand.finding
        if not finding.fatal or finding.role is not Role.CAUSE or cand.block is None or not cand.block.chained:
            continue
        echo = next((c for c in cands if c.block is cand.block and c is not cand and c.finding.fatal
                     and c.finding.role is Role.COLLATERAL and c.finding.category in _WAIT_CATEGORIES
                     and c.finding.evidence.seq < finding.evidence.seq), None)
        if echo is None:
            continue
        finding.role = Role.COLLATERAL
        finding.reason = (f"an echo: raised while its process handled the report at line {echo.finding.evidence.line} "
                          f"({echo.finding.entry_id}), which it chains onto")


def _waited_on_the_dead(cands: list[Candidate]) -> None:
    """A report that rank R did not arrive (a timeout or a barrier naming R) where the launcher reports R killed by
    a signal: R's death is the cause, the wait its echo on the ranks that waited, whichever was printed first."""
    dead = {c.finding.evidence.rank if c.finding.evidence.rank is not None else named_rank(c.finding.fields): c
            for c in cands if c.finding.fatal and c.finding.role is Role.CAUSE and c.entry is not None
            and c.entry.kills_a_rank}
    for cand in cands:
        finding = cand.finding
        if not finding.fatal or finding.role is not Role.CAUSE or finding.category not in _WAIT_CATEGORIES:
            continue
        named = named_rank(finding.fields)
        death = dead.get(named) if named is not None else None
        if death is None:
            continue
        finding.role = Role.COLLATERAL
        finding.reason = (f"an echo: rank {named}, which it waited on, was killed (line "
                          f"{death.finding.evidence.line}, {death.finding.entry_id})")


def _out_of_step(root: Candidate, catalog: Catalog) -> None:
    """Timeouts that show one rank in another collective than the rest have a visible cause: the ranks' calls
    disagree (a rank skipped a barrier, took another branch). File the odd rank's report as that mismatch."""
    target = catalog.get("collective-mismatch")
    if root.finding.rank_evidence != "desynchronised" or target is None or root.finding.category not in (
            "dist.collective_timeout", "dist.peer_or_store_failure"):
        return
    was = root.finding.entry_id
    root.entry = target
    root.finding.entry_id, root.finding.category, root.finding.title = target.id, target.category, target.title
    root.finding.role = Role.CAUSE
    root.finding.reason = f"re-filed from {was}: {root.finding.rank_reason}"


def _went_on_after(cands: list[Candidate], collection: Collection) -> None:
    """A traceback after which its own stream trained on (a later step, or the end of training) was handled.

    Only when nothing fatal follows it, or only another rank's own failure and its echoes: a job that dies later
    of something else died of something, and the printed traceback may be its start.
    """
    fatal = [c for c in cands if c.finding.fatal and c.finding.role in _TIER]
    for cand in fatal:
        finding = cand.finding
        # a traceback's cause, or a printed warning standing for an error that follows it (anomaly mode's forward
        # trace): a job that caught that error and trained on leaves the warning behind
        if not (finding.role is Role.CAUSE and cand.block is not None
                or finding.role is Role.SYMPTOM and "Warning: " in finding.evidence.text):
            continue
        if _died_of_it(cand, collection):
            continue
        # its own stream, or that of the ranked line that introduced a rankless traceback (whichever went on later)
        streams = [((finding.evidence.file, finding.evidence.rank), cand.steps_before)]
        intro = _introduced_by(cand, collection)
        if intro is not None:
            streams.append(((finding.evidence.file, intro[0]), intro[1]))
        stream, steps_before = max(streams, key=lambda s: collection.progress.last.get(s[0], (-1, 0))[0])
        progress_at, progress_line = collection.progress.last.get(stream, (-1, 0))
        # step 0 (`Epoch 0:   0%|`, a progress bar redrawn as it closes) is where training starts, not progress
        steps_after = collection.progress.steps.get(stream, -1)
        if progress_at <= finding.evidence.seq or steps_after <= max(steps_before, 0):
            # a rankless traceback, or one printed without a prefix whose header says whose it is (an RPC callee's,
            # under its `On WorkerInfo(id=2, ...)`): the ranks that print progress tell whether the job went on
            quoted = cand.block is not None and cand.block.about_rank is not None and cand.block.header.rank is None
            if (finding.evidence.rank is None or quoted) and (everyone := _all_went_on(finding.evidence, collection)):
                stream, (progress_at, progress_line) = (finding.evidence.file, None), everyone
            else:
                continue
        # what failed after that progress: another rank's own failure (and its echoes) cannot have started here
        later = [c for c in fatal if c is not cand and c.finding.evidence.seq > progress_at]
        causes = [c for c in later if c.finding.role is Role.CAUSE]
        if later and not (causes and all(_another_ranks(c, stream[1]) for c in causes)):
            continue
        _survived(cand, f"the job went on after it: its own output shows later progress (line {progress_line})")


def _died_of_it(cand: Candidate, collection: Collection) -> bool:
    """Python's own report of an uncaught exception (a traceback from `<module>`) on a rank the launcher saw exit
    with a positive code (1: how an uncaught exception ends a process): the rank died of it. Progress lines printed
    after it are output its block-buffered stdout flushed on the way out (torchrun's `--tee`, a pipe), not work it
    went on to do."""
    state = collection.ranks.get(cand.finding.evidence.rank) if cand.finding.evidence.rank is not None else None
    return _from_the_top(cand) and state is not None and state.exit_code is not None and state.exit_code > 0


def _all_went_on(evidence: Evidence, collection: Collection) -> tuple[int, int] | None:
    """A rankless traceback that no process of its file died of: every rank that printed progress in that file
    printed more after it (the earliest of those later lines: (seq, line number)), so whoever printed it lived on,
    whatever line came before it (logger.exception at a script's top level prints a traceback from `<module>`)."""
    progress = collection.progress
    ranked = [stream for stream in progress.last if stream[0] == evidence.file and stream[1] is not None]
    if not ranked or any(progress.last[s][0] <= evidence.seq or progress.steps.get(s, -1) <= 0 for s in ranked):
        return None
    return min(progress.last[s] for s in ranked)


def _another_ranks(cause: Candidate, rank: int | None) -> bool:
    """A later cause (an uncaught exception, a kill) that cannot be what a handled traceback started: it is another
    rank's own, where both ranks are known."""
    other = cause.finding.evidence.rank
    return other is not None and rank is not None and other != rank


_RUNPY_FRAMES = 2  # frames `python -m` puts above a module's own (`<frozen runpy>` or runpy.py)


def _from_the_top(cand: Candidate) -> bool:
    """A traceback that starts at `<module>`: the program's own crash, not an exception caught and logged where it
    happened (its traceback starts at the frame that caught it), whatever record came before it."""
    frames = cand.block.frames if cand.block is not None else []
    # `python -m torch.distributed.run ...` starts at runpy's frames, then the module's `<module>`
    top = [f for f in frames[:_RUNPY_FRAMES + 1] if "runpy" not in f]
    return bool(top) and "in <module>" in top[0]


def _introduced_by(cand: Candidate, collection: Collection) -> tuple[int, int] | None:
    """(rank, its step count then) of the ranked line that introduced a rankless traceback (analyze.collect), unless
    the traceback starts at `<module>`: a caught exception's traceback starts where it was caught, the program's
    own crash at its top, and a crash is no rank's handled error whatever line came before it."""
    if cand.block is None or cand.finding.evidence.rank is not None:
        return None
    intro = collection.introduced_by.get(cand.block.block_id)
    return None if intro is None or _from_the_top(cand) else intro


_REPL_PROMPT = ">>> "
# the frame of a statement typed at the prompt: `File "<stdin>"`, Python 3.13's `File "<python-input-3>"`
_TYPED_FRAME = re.compile(r'File "<(?:stdin|python-input-\d+)>"')
_REPL_REACH = 4  # lines from an interactive session's error to its next prompt, and up to its typed frame


def _session_went_on(cands: list[Candidate]) -> None:
    """An error typed into an interactive Python session, after which the session prompted for the next statement
    (`>>> `) and a later statement failed too, ended nothing: the user went on, and the later error is the one
    they met (a typo's SyntaxError before the real failure). The session's last error stays: it is what the
    paste is about, whatever prompt follows it."""
    typed: list[Candidate] = []
    for cand in cands:
        finding = cand.finding
        if not finding.fatal or finding.role is not Role.CAUSE:
            continue
        frames = cand.block.frames if cand.block is not None else []
        near = [ln.text for ln in finding.context_before[-_REPL_REACH:] if ln.file == finding.evidence.file]
        if not any(_TYPED_FRAME.search(text) for text in (*frames, *near)):
            continue
        after = [ln for ln in finding.context_after[:_REPL_REACH] if ln.file == finding.evidence.file]
        if any(ln.body.startswith(_REPL_PROMPT) or ln.text.startswith(_REPL_PROMPT) for ln in after):
            typed.append(cand)
    for cand in typed:
        ev = cand.finding.evidence
        later = any(c.finding.fatal and c.finding.role is Role.CAUSE and c.event != cand.event
                    and c.finding.evidence.file == ev.file and c.finding.evidence.seq > ev.seq for c in cands)
        if later:
            _survived(cand, "an interactive Python session printed it, prompted for the next statement (`>>> `), "
                            "and a later statement failed: the session went on")


def _survived(cand: Candidate, reason: str) -> None:
    """A failure the job lived through is a warning at most; an exception of the job's own code that it caught
    and went on from (a metrics push that failed, a malformed data record it skipped: unexplained, or filed by an
    entry of the user-code layer) says nothing about PyTorch: context, outside the verdict."""
    cand.finding.fatal = False
    # the job's own layer (a worker of its own process pool lost, whatever killed it), or an exception no entry
    # explains that the job's own code raised
    own_code = ((cand.entry is not None and cand.entry.layer == "user_code")
                or (cand.finding.generic and cand.finding.category == "user.code_error"))
    cand.finding.role = Role.CONTEXT if own_code else Role.WARNING
    cand.finding.reason = reason


def _restarts(cands: list[Candidate], collection: Collection) -> list[str]:
    """torchelastic restarts (analyze.attempts): the attempts that do not decide are lived through; notes."""
    notes: list[str] = []
    attempt = attempts.attempt_numbers(cands)
    for cand in attempts.left_by_the_crash(cands, attempt):
        cand.finding.role = Role.COLLATERAL
        cand.finding.reason = "a restarted attempt read what the earlier attempt's crash left behind"
    restarted, restart_note = attempts.earlier_attempts(cands, attempt)
    for cand in restarted:
        _survived(cand, "an earlier attempt: torchelastic restarted the workers, and the last attempt failed of "
                        "another cause")
    lived, recovery_note = attempts.recovered(cands, collection.progress)
    for cand in lived:  # the job lived through them thanks to the restart: the cause is a warning, echoes context
        cand.finding.fatal = False
        cand.finding.role = Role.WARNING if cand.finding.role is Role.CAUSE else Role.CONTEXT
        cand.finding.reason = "torchelastic restarted the workers after it, and the job trained on"
    notes.extend(note for note in (restart_note, recovery_note) if note)
    return notes


def _explained_below(fatal: Iterable[Candidate]) -> list[Candidate]:
    """Drop an exception no entry explains when a finding in its own message lines does: torch_npu and other
    runtimes append their report under the exception (`RuntimeError: ACL stream synchronize failed.`, then
    `EI9999: ... hccl fftsplus task timeout occurred ...`); that report is what the exception was, whatever its role
    (a timeout stays collateral to a cause elsewhere). Below means in that exception's message, not in a traceback
    chained after it (`During handling of the above exception ...`), nor a summary quoting it."""
    pool = list(fatal)
    explained = {c.under_exception for c in pool if not c.finding.generic and c.under_exception is not None
                 and c.finding.role is not Role.WRAPPER and not (c.entry is not None and c.entry.layer == "launcher")}
    return [c for c in pool if not (c.finding.role is Role.CAUSE and c.finding.generic
                                    and c.finding.evidence.seq in explained)]


def _pick(pool: list[Candidate], notes: list[str]) -> Candidate:
    """Earliest event first; inside it the most specific entry; then the earliest line.

    Across inputs (per-rank files) "earliest" needs clocks: timestamps order the events when every
    candidate has one; otherwise each input's first event competes on specificity, never on the inputs' order,
    and a note says so; the inputs whose every event has a clock are first ordered by it, so only their earliest
    event enters that competition.
    """
    files = {c.finding.evidence.file for c in pool}
    timed = all(c.finding.evidence.timestamp is not None for c in pool)
    untimed_files = len(files) > 1 and not timed
    if untimed_files:
        notes.append(
            "events from several inputs lack timestamps, so which came first cannot be told: the order of the "
            "files says nothing about time; the most specific of each file's first event was taken"
        )
    file_rank: dict[str, tuple[int, float]] = {}
    if untimed_files:  # each file's first event competes on specificity alone, not on the files' order
        firsts: dict[str, Candidate] = {}
        for cand in pool:
            known = firsts.get(cand.finding.evidence.file)
            if known is None or cand.finding.evidence.seq < known.finding.evidence.seq:
                firsts[cand.finding.evidence.file] = cand
        unclocked = {c.finding.evidence.file for c in pool if c.finding.evidence.timestamp is None}
        clocked = [f for f in firsts if f not in unclocked]
        if len(clocked) > 1:
            # the files whose every event has a clock are ordered by it: only their earliest event competes with
            # the unclocked files' first ones (a job's per-rank logs beside its clockless traceback files)
            earliest = min((firsts[f] for f in clocked), key=lambda c: c.finding.evidence.timestamp or 0.0)
            firsts = {f: c for f, c in firsts.items() if f not in clocked or c is earliest}
            notes.append(f"the {len(clocked)} inputs whose events carry clocks were ordered by them: their earliest "
                         "event competed with the first events of the inputs without")
        same_event = {f: [c for c in pool if c.event == first.event] for f, first in firsts.items()}
        best = {f: max(c.priority for c in group) for f, group in same_event.items()}
        # torchelastic's --log-dir keeps each restart in attempt_<N>/: an earlier attempt came first in time
        file_rank = {f: (attempts.file_attempt(f), -p) for f, p in best.items()}

    def when(cand: Candidate) -> tuple[tuple[int, float], float, int]:
        ev = cand.finding.evidence
        if untimed_files:
            return (file_rank.get(ev.file, (0, 0.0)), 0.0, ev.seq)
        return ((0, 0.0), (ev.timestamp or 0.0) if timed and len(files) > 1 else 0.0, ev.seq)

    first: dict[tuple[object, ...], tuple[tuple[int, float], float, int]] = {}
    for cand in pool:
        key = when(cand)
        if cand.event not in first or key < first[cand.event]:
            first[cand.event] = key
    return min(pool, key=lambda c: (first[c.event], -c.priority, c.finding.evidence.seq))


_AGENT_EXIT = re.compile(r"local_rank: (?P<local>\d+) \(pid: (?P<pid>\d+)\)")


def _global_ranks(cands: list[Candidate], collection: Collection) -> None:
    """torchrun's agent names a failed process by its local rank (`failed (exitcode: -9) local_rank: 0 (pid:
    7405)`); on a node other than the first that is not its rank. The summary printed after it maps the pid to
    the global rank (`rank : 2 (local_rank: 0)`, `exitcode : -9 (pid: 7405)`)."""
    if not collection.pid_ranks:
        return
    for cand in cands:
        found = _AGENT_EXIT.search(cand.finding.evidence.text)
        if found is None or named_rank(cand.finding.fields) != int(found.group("local")):
            continue
        rank = collection.pid_ranks.get(int(found.group("pid")))
        if rank is None or rank == int(found.group("local")):
            continue
        cand.finding.fields["rank"] = str(rank)
        cand.finding.fields["local_rank"] = found.group("local")
        cand.finding.evidence = replace(cand.finding.evidence, rank=rank)


_NAMED_PID = re.compile(r"\(pid=(\d+)(?:, ip=([^,)\s]+))?[,)]")


def _the_rank_without_a_pid(pid: int, collection: Collection) -> int | None:
    """The one rank of a job of known size that never paired itself with a pid, when every other rank did and none
    with this one (a killed rank's buffered banner is lost with it)."""
    table = collection.worker_table
    size = collection.world_size or table.size
    if size is None or any(p == pid for _, p in table.ranks):
        return None
    missing = set(range(size)) - set(table.ranks.values())
    return missing.pop() if len(missing) == 1 and len(set(table.ranks.values())) == size - 1 else None


def _ranks_by_pid(cands: list[Candidate], collection: Collection) -> None:
    """Where a launcher printed a table of its processes (Ray Train's `(ip=10.0.0.5, pid=22158) world_rank=2`), a
    report about a pid (the raylet's `Worker IP address: 10.0.0.5 ... Worker PID: 22158`) names that rank, and a
    line that carries only its process's pid (`(RayTrainWorker pid=22158) KeyError: ...`, or a process its message
    names as Ray's task errors do: `ray::RayTrainWorker.train_func() (pid=22158, ip=10.0.0.5)`) is that rank's.
    A pid counts with its host where the line says one (pids repeat across nodes)."""
    table = collection.worker_table
    if not table.ranks:
        return
    for cand in cands:
        finding = cand.finding
        pid = finding.fields.get("pid")
        if pid is not None and named_rank(finding.fields) is None:
            host = finding.fields.get("host")
            rank = table.rank_of(int(pid), str(host) if host is not None else None) if str(pid).isdigit() else None
            if rank is not None:  # as a message's named rank is recorded (collect): its evidence's rank
                finding.fields["rank"] = str(rank)
                finding.evidence = replace(finding.evidence, rank=rank)
                finding.rank_evidence = "named_in_message"
                finding.rank_reason = (f"named in the message by its pid {pid}: the launcher's own lines give that "
                                       f"process rank {rank}")
            elif str(pid).isdigit() and (unnamed := _the_rank_without_a_pid(int(pid), collection)) is not None:
                finding.fields["rank"] = str(unnamed)
                finding.evidence = replace(finding.evidence, rank=unnamed)
                finding.rank_evidence = "silent"
                finding.rank_reason = (f"the pid {pid} is none of those the other ranks announced, and rank {unnamed} "
                                       "announced none: it is the one the report is about")
            continue
        if finding.evidence.rank is None:
            head = parse(finding.evidence.text)
            named = [(int(p), h or None) for p, h in _NAMED_PID.findall(finding.evidence.text)]
            pids = ([(head.pid, head.host)] if head.pid is not None else []) + named
            rank = next((r for r in (table.rank_of(p, h) for p, h in pids) if r is not None), None)
            if rank is not None:
                finding.evidence = replace(finding.evidence, rank=rank)


_SPAWN_REACH = 3  # lines from that header to the `Traceback` it introduces


def _spawned_tracebacks(cands: list[Candidate]) -> None:
    """mp.spawn prints a failed process's own traceback under `-- Process N terminated with the following
    error:` (torch's MultiProcessTestCase under `Process N exited with error code 10 and exception:`); its lines
    carry no prefix, yet they are process N's output (the process index is its rank)."""
    headers = [c for c in cands if c.entry is not None and c.entry.layer == "launcher"
               and any(h in c.finding.evidence.text for h in attribution.SPAWN_HEADERS)
               and named_rank(c.finding.fields) is not None]
    for header in headers:
        ev = header.finding.evidence
        rank = named_rank(header.finding.fields)
        for cand in cands:
            block = cand.block
            if (block is not None and cand.finding.evidence.rank is None and cand.finding.evidence.file == ev.file
                    and ev.seq < block.header.seq <= ev.seq + _SPAWN_REACH):
                cand.finding.evidence = replace(cand.finding.evidence, rank=rank)


def decide(collection: Collection, catalog: Catalog, inputs: list[str]) -> Diagnosis:
    cands = collection.candidates
    notes: list[str] = []
    _global_ranks(cands, collection)
    _ranks_by_pid(cands, collection)
    notes.extend(clock_zones.align(cands, collection.clock_spans))
    _spawned_tracebacks(cands)
    for cand in cands:
        _apply_refinements(cand, catalog)
        _apply_details(cand)
    _follow_pointers(cands)
    _originals_below(cands)
    notes.extend(_restarts(cands, collection))
    _went_on_after(cands, collection)
    _session_went_on(cands)
    for cand in cands:
        if (cand.event in collection.handled_events and cand.finding.fatal and cand.finding.role is Role.CAUSE
                and not _from_the_top(cand)):
            _survived(cand, "its log record says the error was handled (a choice skipped, a fallback taken)")
        if (cand.event in collection.handled_events and cand.finding.role in (Role.WARNING, Role.CAUSE)
                and not cand.finding.fatal and parse(cand.finding.evidence.text).level in ("I", "D")):
            # logged as information, and handled by the program that logged it: neither a failure nor a warning
            cand.finding.role = Role.CONTEXT
            cand.finding.reason = "logged at INFO level by a program that says it handled it (a fallback taken)"
    for cand in cands:
        if cand.event in collection.ignored_events and cand.finding.fatal:
            _survived(cand, "Python printed it as an exception it ignored (`Exception ignored in ...`: a destructor, "
                            "an atexit callback): the program went on")
    event_times.date_copies_once(cands)
    event_times.waits_after_their_bound(cands)
    _echoes(cands, collection)  # after the errors the job lived through stopped being fatal: no echo of those
    _waited_on_the_dead(cands)
    _raised_handling_an_echo(cands)  # after the waits on the dead became echoes
    if not any(c.finding.fatal and _tier(c) <= 1 for c in cands):
        silence.promote_bare_exits(cands)
        silence.last_words(cands, collection)
        quiet = silence.silent_rank(cands, collection, catalog)
        if quiet is not None:
            cands = [*cands, quiet]
    if collection.error_records and not any(c.finding.fatal and c.finding.role in _TIER for c in cands):
        cands = [*cands, *collection.error_records]  # nothing else failed: the C++ side's error records decide
    fatal = _explained_below(c for c in cands if c.finding.fatal and c.finding.role in _TIER)
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
        root = _own_copy(_pick(_timeouts_before_losses([c for c in fatal if _tier(c) == best]), notes), fatal)
        root.finding.reason = root.finding.reason or _why(root, fatal)
    elif warnings:
        verdict = Verdict.WARNING
        root = max(warnings, key=lambda c: (c.priority, -c.finding.evidence.seq))
        root.finding.reason = root.finding.reason or "the only problems are non-fatal; this is the most specific"
    else:
        verdict = Verdict.CLEAN
    if root is not None:
        root = attribution.odd_one_out(root, cands)
        _out_of_step(root, catalog)
        attribution.attribute_rank(root, cands, collection)
        root = _caught_before(root, cands, collection, catalog)
        notes.extend(attribution.clock_doubts(root, cands))
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


def _own_copy(root: Candidate, fatal: list[Candidate]) -> Candidate:
    """A rank's error that another rank quoted (torch.distributed.checkpoint re-raises every failed rank's
    traceback on every rank, under `(RANK 2)`) is best shown as the failed rank printed it: the same error, from
    the same entry, on a line of that rank's own."""
    rank = root.finding.evidence.rank
    printer = root.printed_by
    quoted = root.block is not None and root.block.about_rank is not None and root.block.about_rank == rank
    if rank is None or printer is None or printer == rank or not quoted:
        return root
    body = parse(root.finding.evidence.text).body
    own = [c for c in fatal if c.finding.entry_id == root.finding.entry_id and c.finding.role is root.finding.role
           and c.finding.evidence.rank == rank and c.printed_by == rank
           and parse(c.finding.evidence.text).body == body]
    return min(own, key=lambda c: c.finding.evidence.seq) if own else root


# what the other ranks report when one rank stopped keeping step: timeouts, lost peers, collectives that disagree
_OUT_OF_STEP_ECHOES = ("dist.collective_timeout", "dist.collective_mismatch", "dist.peer_or_store_failure")
_EXCEPTION_NAMED = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b")


def _caught_before(root: Candidate, cands: list[Candidate], collection: Collection, catalog: Catalog) -> Candidate:
    """The rank the others waited for, or whose collective disagreed, caught an error of the job's and logged it
    before (`WARNING skipping batch at step 3: ValueError: corrupt sample 55`, a logger.exception traceback under
    an ERROR record): it went on out of step, and the others' timeouts or mismatches answer that error, which is
    the cause."""
    rank = root.finding.rank
    if rank is None or root.finding.category not in _OUT_OF_STEP_ECHOES:
        return root
    ev = root.finding.evidence
    caught = [c for c in cands if c.finding.role in (Role.CAUSE, Role.WARNING, Role.CONTEXT) and c is not root
              and not (c.entry is not None and c.entry.advisory) and c.finding.category == "user.code_error"
              and rank in (c.finding.evidence.rank, c.block.record_rank if c.block is not None else None)
              and c.finding.evidence.file == ev.file and c.finding.evidence.seq < ev.seq
              and _EXCEPTION_NAMED.search(c.finding.evidence.text)]
    state = collection.ranks.get(rank)
    warned = state.first_warning if state is not None and not caught else None
    entry = catalog.fallback(layers.Layer.USER.value) if warned is not None else None
    if (warned is not None and entry is not None and warned.file == ev.file and warned.seq < ev.seq
            and _EXCEPTION_NAMED.search(warned.text)):
        # a one-line record that names the exception it caught: no traceback, so no finding of its own yet
        finding = Finding(entry_id=entry.id, category=entry.category, title=entry.title, role=Role.WARNING,
                          fatal=False, evidence=warned, confidence="low")
        caught = [Candidate(finding, entry, ("caught", rank), entry.priority)]
    if not caught:
        return root
    first = min(caught, key=lambda c: c.finding.evidence.seq)
    finding = first.finding
    finding.role, finding.fatal = Role.CAUSE, True
    finding.initiating_rank = rank
    finding.rank_evidence, finding.rank_reason = root.finding.rank_evidence, root.finding.rank_reason
    finding.reason = (f"rank {rank} caught and logged this error of the job's and went on out of step; the other "
                      f"ranks' {root.finding.title[:1].lower() + root.finding.title[1:]} answers it "
                      f"({ev.file}:{ev.line})")
    return first


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
        who = f"{len(ranks)} rank(s) [{attribution.span(ranks)}]" if ranks else "no rank prefix"
        summary = f"{who}, {count} line(s): {first.title}" + (f" ({detail})" if detail else "")
        groups.append(CollateralGroup(entry_id, first.title, ranks, count, first.evidence, summary))
    return sorted(groups, key=lambda g: g.first.seq)


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

