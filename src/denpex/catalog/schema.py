"""The shape of a catalog entry, validated when the catalog loads and in the tests.

An entry is data, like a Ruff or Semgrep rule: a stable id, what it means, how to confirm and fix it,
and the signatures that find it in a log. `denpex catalog --schema` prints the JSON schema.

The types are plain frozen dataclasses: pydantic validates them (field types and constraints from the
annotations, `__pydantic_config__`, the checks in `__post_init__`) only when an entry file is parsed, on a
cache miss (loader.py). A run that finds the validated catalog in its cache never imports pydantic, which
alone costs ~70 ms of a pasted traceback's budget.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

if TYPE_CHECKING:  # read by pydantic only; imported in validator() (~15 ms saved on every warm start)
    from annotated_types import Interval, MinLen

CATEGORIES = (
    "compile.lowering_error",
    "compile.cpp_toolchain_missing",
    "compile.cpp_compile_error",
    "compile.cache_corruption",
    "compile.triton_error",
    "compile.version_mismatch",
    "compile.graph_break_data_dependent",
    "compile.dynamo_unsupported",
    "compile.recompile_limit",
    "compile.dynamic_shape_guard",
    "compile.cudagraph_incompatible",
    "compile.backend_internal_error",
    "dist.collective_timeout",
    "dist.nccl_error",
    "dist.peer_or_store_failure",
    "dist.collective_mismatch",
    "dist.teardown_abort",
    "mem.cuda_oom",
    "mem.host_oom",
    "mem.cpu_alloc_failure",
    "cuda.illegal_memory_access",
    "cuda.device_side_assert",
    "env.cuda_driver_or_arch",
    "user.code_error",
)
Category = Literal[CATEGORIES]  # type: ignore[valid-type]
Layer = Literal[
    "dynamo",
    "aot_autograd",
    "inductor",
    "triton",
    "cpp_toolchain",
    "cache",
    "nccl_gloo",
    "cuda",
    "memory",
    "launcher",
    "user_code",
    "custom_backend",
    "onnx_exporter",
]
RoleName = Literal["cause", "symptom", "collateral", "wrapper", "warning", "context"]
ENTRY_ID = re.compile(r"^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$")
# what an entry's `verify` shows for its `{command}` and `{log}` placeholders until a report knows them
YOUR_COMMAND = "<your command>"
SAVED_LOG = "failed.log"


# TOML keys are singular ([[signature]]), the fields plural; extra keys are errors (typos must not pass)
_ALIASES = {"signatures": "signature", "details": "detail", "refinements": "refine", "siblings": "sibling",
            "fixtures": "fixture"}
_STRICT: dict[str, Any] = {"extra": "forbid", "alias_generator": lambda name: _ALIASES.get(name, name),
                           "populate_by_name": True}


def _check_regex(value: str | None, what: str) -> None:
    if value is not None:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"{what}: invalid regex {value!r}: {exc}") from None


@dataclass(frozen=True)
class Signature:
    """A literal the scanner looks for, confirmed by an optional regex whose named groups become fields."""

    __pydantic_config__ = _STRICT
    anchor: Annotated[str, MinLen(3)]
    regex: str | None = None
    ignore_case: bool = False
    role: RoleName | None = None  # overrides the entry's role for lines this signature finds
    fatal: bool | None = None  # overrides the entry's fatal flag for this signature
    in_body: bool = False  # match against the message with launcher/log headers stripped
    # the regex states a condition the entry needs (a cache path in an OS error), not just fields to extract:
    # a line with the anchor that the regex does not match is no hit (by default a miss keeps the hit, weaker)
    requires_regex: bool = False
    priority: Annotated[int, Interval(ge=0, le=100)] | None = None  # overrides the entry's priority
    # the rank the regex captures is the launcher's number for the process (mpirun's `process rank N`, srun's
    # `task N`): the job's rank unless the job numbered its ranks otherwise (analyze.slots)
    rank_is_slot: bool = False

    def __post_init__(self) -> None:
        _check_regex(self.regex, "signature")


@dataclass(frozen=True)
class Detail:
    """A regex run over the lines after the evidence to pull out context (op, shapes, dtypes)."""

    __pydantic_config__ = _STRICT
    regex: str
    within: Annotated[int, Interval(ge=1, le=500)] = 30
    many: bool = False  # collect every match (e.g. one per argument) instead of the first

    def __post_init__(self) -> None:
        _check_regex(self.regex, "detail")


@dataclass(frozen=True)
class Refinement:
    """Re-file a finding under another entry when the log shows a telling context.

    Example: a g++ error whose traceback passes through the FX-graph cache's hit path is a cache problem.
    """

    __pydantic_config__ = _STRICT
    when: str  # regex searched in the lines around the evidence
    entry: str
    within: Annotated[int, Interval(ge=1, le=5000)] = 200
    # regex the evidence line itself must match too: the kind of error (an OS error, whatever its wording),
    # where `when` gives the place it was raised (a compiler launch)
    evidence: str | None = None

    def __post_init__(self) -> None:
        _check_regex(self.when, "refine")
        _check_regex(self.evidence, "refine.evidence")


@dataclass(frozen=True)
class RingPeer:
    """The rank a report waited on, from the topology of the collective it was in.

    gloo's ring all_reduce (gloo/allreduce.cc) has rank r receive from r+1 and send to r-1, and a send completes
    only once its peer posted the receive: `Timed out waiting ... for recv` on rank r waited on rank r+1, for
    `send` on rank r-1. Reports about a rank that itself reported are chain effects, not the culprit.
    """

    __pydantic_config__ = _STRICT
    field: str  # the finding's field that names the operation (`op`)
    offsets: dict[str, int]  # operation -> the peer's offset from the reporting rank, modulo the world size
    collective: str  # regex over the reporting rank's lines before the report: the collective `offsets` hold for

    def __post_init__(self) -> None:
        _check_regex(self.collective, "ring_peer.collective")


@dataclass(frozen=True)
class MessagePeer:
    """The peer whose data a report is about, though the report names no rank.

    gloo's size check (`op.preamble.length <= op.nbytes. 512 vs 4`) fails on the rank that *received* a message
    larger than it expected; in gloo's ring all_reduce rank r receives from r+1. Either the receiver or that
    sender called a different collective, and the log cannot tell which: the report names both.
    """

    __pydantic_config__ = _STRICT
    field: str  # the finding's field that names the check (`check`)
    offsets: dict[str, int]  # check -> the sending peer's offset from the reporting rank, modulo the world size
    says: str  # what the peer did, for the report (`sent the oversized message`)


@dataclass(frozen=True)
class Sibling:
    __pydantic_config__ = _STRICT
    id: str
    control: str  # the experiment that tells the two apart


@dataclass(frozen=True)
class Fixture:
    __pydantic_config__ = _STRICT
    path: str  # a corpus case folder (tests/corpus/...) or a log file the entry must be found in
    wins: bool = True  # the entry must be the root cause there, not just one finding


@dataclass(frozen=True)
class Entry:
    __pydantic_config__ = _STRICT
    id: str
    category: Category
    title: str
    layer: Layer
    role: RoleName
    fatal: bool
    explanation: str
    checklist: Annotated[list[str], MinLen(1)]
    fix: str
    verify: str
    priority: Annotated[int, Interval(ge=0, le=100)] = 50  # breaks ties between causes; specific beats generic
    # a warning worth listing that never changes the verdict on its own (torch's UserWarnings)
    advisory: bool = False
    # "uncaught_exception" entries have no signature: the analyzer files uncaught exceptions that no other
    # entry explains under them (user code vs PyTorch's compiler internals, told apart by the last frame)
    # "process_exit" entries file a command that `denpex run` saw fail when no line of its output explains it
    # "rank_silence" entries file the one rank that printed nothing while its peers report losing it
    # "rank_finished" entries file that rank when its last line says it was done (it left the loop early)
    # "refinement" entries are reached only through other entries' `refine` rules (a kind of error in a place)
    # "baseline" entries file the first line that differs from a healthy run (diagnose --baseline) when nothing
    # else explains the failure
    matched_by: Literal[
        "signature", "uncaught_exception", "process_exit", "rank_silence", "rank_finished", "refinement",
        "baseline",
    ] = "signature"
    # for "uncaught_exception" entries: the layer whose unexplained exceptions this entry files (each layer
    # falls back to its own generic entry: analyze/layers.py tells which layer raised an exception)
    fallback_for: Literal["compiler", "lowering", "triton", "distributed", "cuda", "user"] | None = None
    signatures: list[Signature] = field(default_factory=list)
    details: list[Detail] = field(default_factory=list)
    refinements: list[Refinement] = field(default_factory=list)
    # a wrapper or symptom whose real cause was logged earlier by another entry (e.g. FailOnRecompileLimitHit
    # after the `hit config.recompile_limit` warning): that earlier finding becomes the fatal cause
    points_to: list[str] = field(default_factory=list)
    # an abort on the way out (`terminate called without an active exception`): after a fatal error of its own
    # process it is that error's echo (collateral), and it is the failure itself only when none came before
    echo_of_earlier_error: bool = False
    siblings: list[Sibling] = field(default_factory=list)
    fixtures: list[Fixture] = field(default_factory=list)
    graph_break_ids: list[str] = field(default_factory=list)
    ring_peer: RingPeer | None = None  # for reports of a wait: which peer the reporting rank waited on
    message_peer: MessagePeer | None = None  # for reports about a peer's data: which peer sent it
    # the report says something outside the ranks stopped all of them at once (a scheduler's time limit): it names
    # no rank, and the rank whose logged steps stop behind every other rank's is the one that hung
    stops_every_rank: bool = False
    # the report is of one rank's process killed by a signal (SIGKILL, a native crash): a report that another rank
    # waited on that rank (a timeout, a barrier naming it) is the death's echo, whichever was printed first
    kills_a_rank: bool = False
    # the report is a lost connection to a peer: among echoes only, a collective's timeout comes before the losses
    # it causes (the rank that timed out exits, and its peers then find it gone)
    lost_peer: bool = False
    # a launcher's report of a child's exit (torchrun's summary, a spawner's kill report): its rank is a hint when
    # no rank's own output names one
    launcher_exit_report: bool = False
    # the report re-raises another process's exception and prints it below (DataLoader's `Caught ValueError in
    # DataLoader worker process 2.` then `Original Traceback ...`): that original exception, of the type its field
    # `exception` names, is the decisive line; the entry's explanation and fix stay
    original_below: bool = False
    # the report reads what a crash leaves behind (a checkpoint cut short while it was written): in a restarted
    # attempt, after an earlier attempt crashed, it is that crash's echo, not a cause of its own
    left_by_a_crash: bool = False
    references: list[str] = field(default_factory=list)

    def verify_shown(self, command: str = YOUR_COMMAND, log: str = SAVED_LOG) -> str:
        """The verify command with its placeholders filled: `{command}` is the user's, `{log}` the failed log."""
        return self.verify.replace("{command}", command).replace("{log}", log)

    def __post_init__(self) -> None:
        if not ENTRY_ID.match(self.id):
            raise ValueError("id: ids are lower-case words joined by '-', '_' or '.'")
        if self.matched_by == "signature" and not self.signatures:
            raise ValueError("an entry matched by signature needs at least one [[signature]]")
        if (self.matched_by == "uncaught_exception") != (self.fallback_for is not None):
            raise ValueError("an entry matched by uncaught_exception names the layer it is the fallback_for")


def validator() -> Any:
    """pydantic's validator for Entry (imports pydantic: only on a cache miss, in tests and for --schema)."""
    import annotated_types
    from pydantic import TypeAdapter

    # the annotations are strings (PEP 563) that pydantic resolves in this module's namespace
    globals().update(Interval=annotated_types.Interval, MinLen=annotated_types.MinLen)
    return TypeAdapter(Entry)
