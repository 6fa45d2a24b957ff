"""Plain data passed between the pipeline stages (ingest -> match -> analyze -> report).

Kept free of behaviour so that every stage can be swapped (fast scanner vs simple scanner) and compared.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


class Role(str, Enum):
    """What a finding is to the failure: the strongest role decides the root cause."""

    CAUSE = "cause"
    SYMPTOM = "symptom"  # a generic report of something more specific (e.g. "device-side assert triggered")
    COLLATERAL = "collateral"  # an echo of another rank's failure (timeouts, lost peers, SIGTERMs)
    WRAPPER = "wrapper"  # an outer exception that carries a nested cause
    WARNING = "warning"  # a non-fatal problem worth reporting (graph break on .item(), recompile limit)
    CONTEXT = "context"  # informative only; never changes the verdict


class Verdict(str, Enum):
    FAILURE = "failure"
    WARNING = "warning"
    CLEAN = "clean"


@dataclass(slots=True)
class Line:
    """One framed log line with what its headers say about where it came from."""

    file: str
    number: int  # 1-based, in its file
    text: str  # as it stands in the file (CR and ANSI colour codes removed)
    body: str  # text with rank/log/time headers stripped
    rank: int | None = None
    local_rank: int | None = None
    host: str | None = None
    pid: int | None = None
    level: str | None = None  # D/I/W/E/F or a logging level name
    timestamp: float | None = None  # seconds; comparable within one run (see ingest.headers)
    compile_id: str | None = None
    seq: int = 0  # global arrival order across all inputs
    year: int | None = None  # the year in force (from the last full date seen), for glog stamps without one
    origin: str | None = None  # the source location a glog/vLLM header names (`ProcessGroupNCCL.cpp:607`)
    slot: int | None = None  # the launcher's number for the process (ingest.headers.Header.slot)
    rank_is_slot: bool = False  # the rank is only that number (analyze.slots may renumber it)
    claimed: int | None = None  # the rank the job's own columns give after that number (ingest.headers)
    # a clock without a zone: its digits read as UTC (timestamp reads them in this machine's zone); None for a clock
    # that said its zone or an error file's epoch time (absolute) and for no clock
    wall: float | None = None


@dataclass(slots=True)
class Evidence:
    file: str
    line: int
    text: str
    rank: int | None = None
    timestamp: float | None = None
    seq: int = 0
    clocked: bool = False  # the timestamp is the line's own, not the last one its stream printed before it
    wall: float | None = None  # as Line.wall, for the timestamp (its own or inherited): None if absolute


@dataclass(slots=True)
class Finding:
    """A catalog entry's (or the generic traceback rule's) judgement about one log line."""

    entry_id: str
    category: str
    title: str
    role: Role
    fatal: bool
    evidence: Evidence
    fields: dict[str, object] = field(default_factory=dict)
    generic: bool = False  # produced by the generic exception rule, not a specific catalog entry
    in_traceback: bool = False  # the line ends an uncaught Python traceback
    count: int = 1  # how many lines repeated this finding (same entry, same rank)
    ranks: set[int] = field(default_factory=set)
    context_before: list[Line] = field(default_factory=list)
    context_after: list[Line] = field(default_factory=list)
    reason: str = ""  # why this finding won, or how it relates to the root cause
    initiating_rank: int | None = None  # set when the initiating rank differs from the evidence line's rank
    rank_reason: str = ""  # which evidence decided the initiating rank
    # its kind: own_output | named_in_message | silent | desynchronised | absent_from_timeouts | waited_on |
    # behind_in_steps | stopped_elsewhere | lowest_sequence | first_in_time | neighbours | launcher_hint | unknown
    rank_evidence: str = ""
    rank_unknown: bool = False  # the log cannot tell which rank started it (e.g. two ranks disagree)
    # "high": the signature's regex confirmed the line (or it has none); "low": only its anchor matched (a
    # wording the regex does not know), or a generic rule classified the exception by its layer
    confidence: str = "high"
    classified_by: str = ""  # for a generic finding: the evidence that chose its layer's entry

    @property
    def rank(self) -> int | None:
        if self.rank_unknown:
            return None
        return self.initiating_rank if self.initiating_rank is not None else self.evidence.rank


@dataclass(slots=True)
class RankState:
    rank: int
    host: str | None = None
    lines: int = 0
    first_line: Evidence | None = None
    last_line: Evidence | None = None
    last_healthy: Evidence | None = None  # the last line before its first error
    first_warning: Evidence | None = None
    first_error: Evidence | None = None
    exit_code: int | None = None
    last_step: int | None = None  # the highest training step this rank logged ("step 12", "step=12")


@dataclass(slots=True)
class CollateralGroup:
    """Echoes of the root cause, grouped by kind: "3 ranks: watchdog timeout on ALLREDUCE SeqNum=4178"."""

    entry_id: str
    title: str
    ranks: list[int]
    count: int
    first: Evidence
    summary: str


@dataclass(slots=True)
class Phase:
    """Where the job was when it failed: launch, rendezvous, model load, compile, step, checkpoint, shutdown."""

    name: str
    step: int | None = None  # the training step it was in, where the log counts steps


@dataclass(slots=True)
class RankDivergence:
    """One rank's first departure from the reference (a healthy run, or the other ranks of the same job)."""

    rank: int | None  # None: lines that name no rank (the launcher, or a single-process job)
    kind: str  # "extra": a line the reference never printed; "missing": the stream stopped early
    evidence: Evidence  # the differing line; for "missing", the rank's last line
    expected: Evidence | None = None  # "missing": the reference's next line after the one that matched last
    phase: Phase | None = None


@dataclass(slots=True)
class Comparison:
    """The failed run compared line by line (keys masked by fleet.fingerprint) with a reference."""

    against: str  # "baseline": healthy runs of the same job; "ranks": the other ranks of this job
    baselines: list[str]
    ranks: list[RankDivergence]  # per rank stream, in the order their divergence happened
    decisive: bool = False  # the first divergence was made the root cause (no specific entry matched)

    @property
    def first(self) -> RankDivergence | None:
        return self.ranks[0] if self.ranks else None


@dataclass(slots=True)
class FlightRecorderSummary:
    """What the Flight Recorder dumps of the job say (analyze.flight_recorder): who never joined, who differs."""

    dumps: list[str]
    ranks: list[int]  # the ranks a dump was read for
    culprit: int | None = None  # the rank the dumps name: never joined, lags, or alone in a differing op
    kind: str | None = None  # never_joined | mismatch | lagging
    seq: int | None = None  # the collective sequence number it happened at
    op: str | None = None  # profiling_name: nccl:all_reduce
    process_group: str | None = None  # `0:default_pg`
    missing: list[int] = field(default_factory=list)  # ranks that never joined collective `seq`
    summary: str = ""  # one sentence, naming the dumps
    last_completed: dict[int, int | None] = field(default_factory=dict)  # rank -> last completed collective
    mismatches: list[str] = field(default_factory=list)  # one line per differing collective
    partial: bool = False  # some dump was truncated or corrupt: the answer covers what was read


@dataclass(slots=True)
class Diagnosis:
    verdict: Verdict
    root_cause: Finding | None
    findings: list[Finding]
    inputs: list[str]
    lines_read: int
    ranks: dict[int, RankState] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    collateral: list[CollateralGroup] = field(default_factory=list)
    phase: Phase | None = None
    comparison: Comparison | None = None
    flight_recorder: FlightRecorderSummary | None = None
    torch_trace: object = None  # trace_model.TorchTraceOut when TORCH_TRACE files were among the inputs

    def by_role(self, role: Role) -> list[Finding]:
        return [f for f in self.findings if f.role is role and f is not self.root_cause]
