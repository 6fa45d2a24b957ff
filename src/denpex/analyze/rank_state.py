"""Per-rank state for multi-rank jobs: lines, last healthy line, first warning, first error, exit code.

Exit codes come from torchrun's agent (`failed (exitcode: -9) local_rank: 1`) and its ChildFailedError
summary (`rank : 2 (local_rank: 2)` followed by `exitcode : -6 (pid: ...)`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from denpex.model import Evidence, Finding, Line, RankState, Role

_AGENT_FAILED = re.compile(r"failed \(exitcode: (?P<code>-?\d+)\) local_rank: (?P<rank>\d+)")
_SUMMARY_RANK = re.compile(r"^\s*rank\s*: (?P<rank>\d+) \(local_rank: \d+\)")
_SUMMARY_EXIT = re.compile(r"^\s*exitcode\s*: (?P<code>-?\d+)")
_SUMMARY_HOST = re.compile(r"^\s*host\s*: (?P<host>\S+)")
_SUMMARY_TIME = re.compile(r"^\s*time\s*: (?P<time>\S+)")
_SUMMARY_PID = re.compile(r"\(pid: (?P<pid>\d+)\)")
# Ray Train's worker table, printed when the group starts (v1: `Started distributed worker processes:`, v2: `Started
# training worker group of size 4:`): `- (ip=10.0.0.5, pid=22158) world_rank=2, local_rank=2, node_rank=0`
WORKER_TABLE_ROW = re.compile(r"\((?:[^()]*?\bip=(?P<ip>[^,()\s]+), )?pid=(?P<pid>\d+)\) world_rank=(?P<rank>\d+)\b")
# a launcher's line that pairs a rank with its process (`started rank 2 pid 24329`, `rank 2 (pid 24329) exited`,
# `pid=812 rank=3`, a job's own `rank 2 started, pid 32337`: a word or two between): a later report about that pid
# (the shell's `line 16: 24329 Killed`, the kernel's `Killed process 24329`) is about that rank. `local_rank` is not
# a rank: no word boundary before its `rank`
RANK_PID_PAIR = re.compile(r"\brank[ :=]+(?P<rank>\d+)(?: of (?P<size>\d+)| ?/ ?(?P<size2>\d+))?"
                           r"(?:[ ,(]+[a-z]+){0,2}[ ,(]+pid[ :=]+(?P<pid>\d+)\b"
                           r"|\bpid[ :=]+(?P<pid2>\d+)[ ,)]+rank[ :=]+(?P<rank2>\d+)\b", re.IGNORECASE)


@dataclass
class WorkerTable:
    """A launcher's table of its processes: (host, pid) -> rank. Pids repeat across hosts (every container starts
    its own), so a pid is looked up with its host where the line says one, and alone only where it is unique."""

    ranks: dict[tuple[str | None, int], int] = field(default_factory=dict)
    _ambiguous: set[tuple[str | None, int]] = field(default_factory=set)
    size: int | None = None  # the job's size where a row says it (`rank 0 of 3, pid 32576`)

    def add(self, pid: int, rank: int, host: str | None) -> None:
        key = (host, pid)
        if key in self._ambiguous:
            return
        if self.ranks.setdefault(key, rank) != rank:
            del self.ranks[key]
            self._ambiguous.add(key)

    def rank_of(self, pid: int, host: str | None = None) -> int | None:
        if host is not None and (host, pid) in self.ranks:
            return self.ranks[(host, pid)]
        if host is not None and any(h is not None for h, _ in self.ranks):
            return None  # a host the table does not list for this pid: another node's process
        found = {rank for (_, p), rank in self.ranks.items() if p == pid}
        return found.pop() if len(found) == 1 and not any(p == pid for _, p in self._ambiguous) else None
# where one rank's record of torchrun's failure summary ends: the next record (`[1]:`), a rule, the last line
_RECORD_END = re.compile(r"^\s*(?:\[\d+\]:|[=-]{20,}|<NO_OTHER_FAILURES>)\s*$")
_STEP = re.compile(r"\b(?:step|iter(?:ation)?)\b[\s=:#]*(?P<step>\d+)", re.IGNORECASE)
# a training step, or the end of training, printed by the job itself (any stream, ranked or not)
_PROGRESS = re.compile(
    r"\b(?:[Ss]tep|[Ii]ter(?:ation)?|[Ee]poch)\b[\s=:#\[]*(?P<step>\d+)"
    r"|\b(?:[Tt]raining (?:complete|completed|finished|done)|[Ff]inished training|`Trainer\.fit` stopped)\b"
)
DONE = 1 << 30  # the end of training counts as a step past any other
# a line about stopping that names the step it stopped at (`shutting down: flushing metrics writer (last step 4)`,
# `aborting at step 3`): where the run ended, not a step it went on to (round 55's handlers)
_STOPPING = re.compile(r"\b(?:shutting down|shutdown|cleaning up|abort(?:ing|ed)?|last (?:step|iter\w*|epoch))\b",
                       re.IGNORECASE)


@dataclass
class StreamProgress:
    """Per output stream (file, rank): the highest training step it printed, and its last line of progress.

    decide.py uses it to tell a traceback the job survived (its stream trained on) from one it died of.
    """

    steps: dict[tuple[str, int | None], int] = field(default_factory=dict)
    last: dict[tuple[str, int | None], tuple[int, int]] = field(default_factory=dict)  # (seq, line number)

    def feed(self, line: Line) -> None:
        body = line.body
        if not ("tep" in body or "poch" in body or "ter" in body or "omplete" in body or "inished" in body) \
                or body[:1].isspace():
            return
        found = _PROGRESS.search(body)
        if found and found.group("step") and _STOPPING.search(body):
            return  # where the run stopped, not a step it went on to (the end of training still counts)
        if found:
            stream = (line.file, line.rank)
            step = int(found.group("step")) if found.group("step") else DONE
            self.steps[stream] = max(step, self.steps.get(stream, -1))
            self.last[stream] = (line.seq, line.number)


def _is_progress(line: Line) -> bool:
    """A line the program chose to print (a log record, a message), not part of a traceback being printed."""
    body = line.body
    return bool(body.strip()) and not body[:1].isspace() and not body.startswith(("Traceback", "^", "~"))


def _evidence(line: Line) -> Evidence:
    return Evidence(line.file, line.number, line.text, line.rank, line.timestamp, line.seq)


class RankTracker:
    def __init__(self, progress: StreamProgress | None = None) -> None:
        self.states: dict[int, RankState] = {}
        self.progress = progress if progress is not None else StreamProgress()
        self._summary_rank: int | None = None
        self._record_rank: int | None = None  # the rank whose summary record the agent is printing
        # each failed process's global rank by pid, from the summary (`rank : 2 (local_rank: 0)`, `(pid: 7405)`)
        self.pid_ranks: dict[int, int] = {}
        self._summary_host: str | None = None
        self.worker_table = WorkerTable()  # Ray Train's `(ip=10.0.0.5, pid=22158) world_rank=2` rows
        # torchrun's `Root Cause (first observed failure):` block: (rank, its `time :` as printed, the rank line)
        self.launcher_first: tuple[int, str, Evidence] | None = None
        self._in_root_cause: str | None = None  # inside that block: the time seen so far

    def _state(self, rank: int) -> RankState:
        state = self.states.get(rank)
        if state is None:
            state = self.states[rank] = RankState(rank=rank)
        return state

    def feed(self, line: Line) -> None:
        if line.rank is not None:
            state = self._state(line.rank)
            state.lines += 1
            state.host = state.host or line.host
            ev = _evidence(line)
            state.last_line = ev
            if state.first_error is None and _is_progress(line):
                state.last_healthy = ev
                if state.first_warning is None and line.level == "W":
                    state.first_warning = ev
            if state.first_line is None:
                state.first_line = ev
            if line.level is not None and ("tep" in line.body or "ter" in line.body):
                found = _STEP.search(line.body)
                if found:
                    step = int(found.group("step"))
                    state.last_step = step if state.last_step is None else max(state.last_step, step)
        self.progress.feed(line)
        self._exit_codes(line)

    def summary_rank_of(self, line: Line) -> int | None:
        """The rank an `exitcode : -9 (pid: N)` line of torchrun's failure summary is about: the summary's
        `rank : R (local_rank: L)` line just before it (read before this line is fed)."""
        if self._summary_rank is not None and _SUMMARY_EXIT.match(line.body):
            return self._summary_rank
        return None

    def record_rank_of(self, line: Line) -> int | None:
        """The rank a line of torchrun's failure summary is about: its record's `rank : R` line, for every line
        of the record after it (`error_file`, the quoted traceback, its exception). Only for the agent's own,
        rankless lines: a rank's output printed meanwhile is that rank's."""
        return self._record_rank if line.rank is None else None

    def _exit_codes(self, line: Line) -> None:
        body = line.body
        if "world_rank=" in body:
            found = WORKER_TABLE_ROW.search(body)
            if found:
                self.worker_table.add(int(found.group("pid")), int(found.group("rank")), found.group("ip"))
                return
        if "pid" in body and ("rank" in body or "Rank" in body or "RANK" in body):
            found = RANK_PID_PAIR.search(body)
            if found:
                self.worker_table.add(int(found.group("pid") or found.group("pid2")),
                                      int(found.group("rank") or found.group("rank2")), line.host)
                size = found.group("size") or found.group("size2")
                if size is not None:
                    self.worker_table.size = max(int(size), self.worker_table.size or 0)
        if line.rank is None and self._record_rank is not None and _RECORD_END.match(body):
            self._record_rank = None
        if "exitcode" in body:
            found = _AGENT_FAILED.search(body)
            if found:
                state = self._state(int(found.group("rank")))
                if state.exit_code is None:
                    state.exit_code = int(found.group("code"))
                return
            found = _SUMMARY_EXIT.match(body)
            if found and self._summary_rank is not None:
                pid = _SUMMARY_PID.search(body)
                if pid is not None:
                    self.pid_ranks.setdefault(int(pid.group("pid")), self._summary_rank)
                state = self._state(self._summary_rank)
                if state.exit_code is None:
                    state.exit_code = int(found.group("code"))
                state.host = state.host or self._summary_host
                self._summary_rank = None
                return
        if "first observed failure" in body:
            self._in_root_cause = ""
            return
        if self._in_root_cause is not None and "time" in body:
            found = _SUMMARY_TIME.match(body)
            if found:
                self._in_root_cause = found.group("time")
                return
        if "rank" in body:
            found = _SUMMARY_RANK.match(body)
            if found:
                self._summary_rank = self._record_rank = int(found.group("rank"))
                if self._in_root_cause is not None and self.launcher_first is None:
                    self.launcher_first = (self._summary_rank, self._in_root_cause, _evidence(line))
                self._in_root_cause = None
                return
        if "host" in body:
            found = _SUMMARY_HOST.match(body)
            if found:
                self._summary_host = found.group("host")

    def move_finding(self, finding: Finding, old: int) -> None:
        """A finding renumbered from `old` to its evidence's rank (analyze.slots): the first error or warning it
        gave `old` goes to its new rank where that rank had none; a state it alone made is dropped."""
        before = self.states.get(old)
        for attr in ("first_error", "first_warning"):
            if before is not None and getattr(before, attr) is finding.evidence:
                setattr(before, attr, None)
                self.note_finding(finding)  # sets the new rank's only where it had none
        if before is not None and not before.lines and before.first_error is None and before.first_warning is None:
            del self.states[old]

    def note_finding(self, finding: Finding) -> None:
        """The first fatal finding on a rank is its first error; a warning finding may be its first warning."""
        rank = finding.evidence.rank
        if rank is None:
            return
        state = self._state(rank)
        if finding.role is Role.WARNING and state.first_warning is None:
            state.first_warning = finding.evidence
        if finding.fatal and finding.role is not Role.CONTEXT and state.first_error is None:
            state.first_error = finding.evidence
