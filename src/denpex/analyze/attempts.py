"""torchelastic restarts: which attempt of a restarted job the diagnosis is about.

A job run with `--max-restarts` can fail once per attempt. The job died of its last attempt, but that attempt
may only have failed because of the restart (its ranks could not re-form the group: a lost peer, a store or
rendezvous timeout), or it may repeat the first attempt's error. So the last attempt decides only when it
failed of a cause of its own that no earlier attempt had; otherwise where it began, the earliest, decides.

Attempts are told apart by the `attempt_N/` folder of per-rank files (`--log-dir`), and in one console log by
torchelastic's agent record that ends a failed attempt (`failed (exitcode: 1) local_rank: 1 (pid: ...)`) when
ranks fail again after it.
"""

from __future__ import annotations

import re

from denpex.analyze.collect import Candidate
from denpex.analyze.rank_state import DONE, StreamProgress
from denpex.model import Role

_ATTEMPT_DIR = re.compile(r"[/\\]attempt_(\d+)[/\\]")
_AGENT_FAILED = "failed (exitcode: "
# failures a restarted attempt gets from the restart itself, not from a cause of its own
_WAITING = ("dist.peer_or_store_failure", "dist.collective_timeout")
_DIGITS = re.compile(r"\d+")


def file_attempt(file: str) -> int:
    """The torchelastic restart a per-rank file belongs to (`.../attempt_1/3/stderr.log`); 0 otherwise."""
    found = _ATTEMPT_DIR.search(file)
    return int(found.group(1)) if found else 0


def _own_line(cand: Candidate) -> bool:
    """A rank's own failure (its prefix says whose), not a launcher's line or its summary quoting a rank."""
    launcher = cand.entry is not None and cand.entry.layer == "launcher"
    return cand.finding.fatal and not launcher and "rank" not in cand.finding.fields  # the summary sets `rank`


def _console_attempts(cands: list[Candidate]) -> dict[int, int]:
    """Attempt index per candidate (by id) in console logs: agent failure records followed by more failures."""
    attempt: dict[int, int] = {}
    by_file: dict[str, list[Candidate]] = {}
    for cand in cands:
        by_file.setdefault(cand.finding.evidence.file, []).append(cand)
    for group in by_file.values():
        group.sort(key=lambda c: c.finding.evidence.seq)
        ends = [c.finding.evidence.seq for c in group if c.entry is not None and c.entry.layer == "launcher"
                and _AGENT_FAILED in c.finding.evidence.text]
        # an attempt ends at an agent record only if a rank fails again after it
        boundaries = [end for end in ends
                      if any(_own_line(c) and c.finding.evidence.seq > end and c.finding.evidence.rank is not None
                             for c in group)]
        # one record per failed local rank: records with no rank's failure between them end the same attempt
        boundaries = [end for k, end in enumerate(boundaries) if k == 0 or any(
            _own_line(c) and boundaries[k - 1] < c.finding.evidence.seq < end for c in group)]
        for cand in group:
            attempt[id(cand)] = sum(1 for end in boundaries if cand.finding.evidence.seq > end)
    return attempt


def _shape(cand: Candidate) -> tuple[str, str]:
    return cand.finding.entry_id, _DIGITS.sub("0", cand.finding.evidence.text.split("]:")[-1].strip())


def attempt_numbers(cands: list[Candidate]) -> dict[int, int]:
    """The restart attempt of each candidate (by id): its `attempt_N/` folder, or its place among a console's agent
    records."""
    console = _console_attempts(cands)
    return {id(c): max(file_attempt(c.finding.evidence.file), console[id(c)]) for c in cands}


def earlier_attempts(cands: list[Candidate], attempt: dict[int, int]) -> tuple[list[Candidate], str | None]:
    """(the earlier attempts' fatal findings to treat as lived through, a note) when the last attempt decides."""
    last = max((attempt[id(c)] for c in cands if _own_line(c)), default=0)
    if last == 0:
        return [], None
    own = [c for c in cands if attempt[id(c)] == last and _own_line(c) and c.finding.role is Role.CAUSE
           and c.finding.category not in _WAITING and not _left_by_a_crash(c)]
    if not own:
        return [], None  # the last attempt only failed to come back: the first attempt's cause decides
    earlier = [c for c in cands if attempt[id(c)] < last and c.finding.fatal]
    first_own = min(own, key=lambda c: (c.finding.evidence.timestamp or 0.0, c.finding.evidence.seq))
    if any(_shape(c) == _shape(first_own) for c in earlier):
        return [], None  # the same failure again: it began in the earlier attempt
    where = f"{first_own.finding.evidence.file}:{first_own.finding.evidence.line}"
    note = (f"torchelastic restarted the job {last} time(s); its last attempt failed of its own cause ({where}), "
            "which is the diagnosis; the earlier attempts' failures are listed as lived through")
    return earlier, note


def left_by_the_crash(cands: list[Candidate], attempt: dict[int, int]) -> list[Candidate]:
    """Findings of a restarted attempt (not the first) that read what an earlier attempt's crash left behind (a
    checkpoint cut short while it was written): echoes of that crash, not causes of their own."""
    if not any(attempt[id(c)] == 0 and c.finding.fatal and c.finding.role is Role.CAUSE for c in cands):
        return []
    return [c for c in cands if attempt[id(c)] > 0 and _left_by_a_crash(c)]


def _left_by_a_crash(cand: Candidate) -> bool:
    """Its entry reads what a crash leaves behind (catalog flag `left_by_a_crash`: a checkpoint cut short)."""
    return cand.entry is not None and cand.entry.left_by_a_crash


def recovered(cands: list[Candidate], progress: StreamProgress) -> tuple[list[Candidate], str | None]:
    """(the failures a restart recovered from, a note): after the agent's record of a failed attempt, nothing
    failed again and the job trained to its end (any rank: the whole group restarts, often only rank 0 logs)."""
    for end in sorted((c for c in cands if c.entry is not None and c.entry.layer == "launcher"
                       and _AGENT_FAILED in c.finding.evidence.text),
                      key=lambda c: c.finding.evidence.seq, reverse=True):
        ev = end.finding.evidence
        if any(c.finding.fatal and c.finding.evidence.file == ev.file and c.finding.evidence.seq > ev.seq
               for c in cands):
            continue  # something failed after it: a later attempt failed, or this is the job's end
        # the end of training after it (`training finished`): a rank's last step lines flushed late are no restart
        later = [(seq, line) for stream, (seq, line) in progress.last.items()
                 if stream[0] == ev.file and seq > ev.seq and progress.steps.get(stream) == DONE]
        if not later:
            return [], None
        line = max(later)[1]
        lived = [c for c in cands if c.finding.fatal and c.finding.evidence.file == ev.file
                 and c.finding.evidence.seq <= ev.seq]
        return lived, (f"torchelastic restarted the workers after the failure ending at line {ev.line}, and the "
                       f"job trained on (line {line}): it recovered")
    return [], None
