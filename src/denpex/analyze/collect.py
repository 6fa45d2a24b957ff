"""Stream lines through the matcher and the traceback tracker, keeping only what the ranking needs.

Memory is bounded: a ring buffer of context per input, the first few occurrences of each finding
(per entry and rank) with their context, and counters for the rest.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field, replace

from denpex.analyze import layers
from denpex.analyze.cut_lines import cut_anchor
from denpex.analyze.rank_state import RankTracker, StreamProgress, WorkerTable
from denpex.analyze.slots import SlotMap
from denpex.analyze.stream_tags import TAG_REACH, TagRank, tag_rank
from denpex.analyze.tracebacks import Block, Kind, TracebackTracker
from denpex.catalog.loader import Catalog
from denpex.catalog.schema import Entry
from denpex.ingest.clock_span import ClockSpan
from denpex.model import Evidence, Finding, Line, RankState, Role
from denpex.scan.engine import Hit, matcher_for
from denpex.scan.regions import MIN_BEFORE
from denpex.scan.world_size import larger

KEEP_PER_KEY = 3  # occurrences kept in full per (entry, rank); later ones are only counted
AFTER_LINES = 30  # lines kept after a finding's evidence (details like op/shapes live there)
# a backend's exception raised under Dynamo's call into the backend is the compiler's, even in user files
_COMPILER_CALL = re.compile(r"in (?:call_user_compiler|_call_user_compiler|compile_fx|_compile_fx_inner)$")
# an anchor whose regex missed still counts on a line that is itself an error report
_ERROR_WORDS = re.compile(r"\b(?:[Ee]rror|ERROR|[Ff]ailed|FAILED|[Ff]atal|FATAL|[Ee]xception|[Aa]bort(?:ed|ing)?)\b")
# a record that states an exception (`RuntimeError: ...`): logged, but whether it was survived is unknown
_EXCEPTION_STATEMENT = re.compile(r"\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Failed)\b")
_RAISED_STATEMENT = re.compile(r"(?:[a-z_]\w*\.)+[A-Z]\w*: \S")  # `torch._dynamo.exc.Unsupported: ...`
_NATIVE_SOURCE = re.compile(r"\.(?:cpp|cc|cxx|h|hpp|cu|cuh):\d+$")
# a C++ exception nothing caught, which ended its process: libstdc++'s `terminate called after throwing an instance
# of 'c10::Error'` then `  what():  <message>`, and Ray's crash handler's `Unhandled exception: N3c105ErrorE. what():
# <message>` (src/ray/util/logging.cc)
_TERMINATE = re.compile(r"terminate called after throwing an instance of '(?P<cls>[^']+)'")
_WHAT = re.compile(r"^\s*what\(\):\s+(?P<msg>\S.*)")
_UNHANDLED = re.compile(r"(?:^|logging\.cc:\d+: )Unhandled exception: (?P<cls>[\w:]+)\. what\(\): (?P<msg>\S.*)")
UNCONFIRMED_PENALTY = 20  # priority lost by a hit whose regex did not confirm it
# an exception line that only says where (`CompilationError: at 10:4:`, `CppCompileError: C++ compile error`
# then `Output:`) or introduces its message (`RuntimeError: Triton Error:`): the line that says what went wrong
# comes later in the same message; a sentence that ends in a colon (`No operator found for X with inputs:`)
# states the problem itself and keeps the evidence
_LOCATION_ONLY = re.compile(r"(?::\s*at \d+:\d+:?|:)\s*$")
_LONG_INTRO = re.compile(r":\s*(?:\S+\s+){4,}\S*:\s*$")
_STATEMENT = re.compile(
    r"^\s*(?:[\w.]+(?:Error|Exception)\b|(?:\S+: )?(?:fatal )?error\b)"
    r"|\b(?:[Ee]rror|[Ff]ailed|cannot|[Cc]ould not|not (?:supported|found|defined|allowed|implemented)|must be"
    r"|[Uu]nsupported|[Ii]nvalid|[Ee]xpected|out of)\b"
)
# Python's report of an exception it could not raise and went on from (sys.unraisablehook: a destructor, an atexit
# callback, a ctypes callback, a finalizer): `Exception ignored in: <function Tmp.__del__ at 0x...>`, then its traceback
_IGNORED = re.compile(r"^Exception ignored (?:in|on|while)\b")
_IGNORED_REACH = 2  # lines before the traceback's header: another process's line may come between (interleaving)


# a frame of PyTorch or of Python's multiprocessing: the path a peer's loss takes to reach a rank
_COMMUNICATION_FRAME = re.compile(r"[/\\](?:torch|multiprocessing)[/\\]")
# Python's own socket errors: what the job's code (or the standard library under it) raises; a C++ layer's error
# reaches Python as RuntimeError or DistBackendError from a call with no Python frame (`work.wait()`)
_SOCKET_ERRORS = frozenset({"ConnectionResetError", "ConnectionAbortedError", "ConnectionRefusedError",
                            "BrokenPipeError", "TimeoutError", "socket.timeout"})


def _raised_by_the_job(block: Block) -> bool:
    """An exception the job's own code raised, through no frame of PyTorch or multiprocessing (`raise
    ConnectionResetError(104, "Connection reset by peer while fetching shard ...")` in its data client): the words
    of a peer's loss in it are about the job's own I/O, not an echo of a rank that died."""
    if block.logged or block.orphan or block.headless or not block.frames or block.exception_type is None:
        return False
    if not {block.exception_type, block.exception_type.rsplit(".", 1)[-1]} & _SOCKET_ERRORS:
        return False
    if any(_COMMUNICATION_FRAME.search(frame) for frame in block.frames):
        return False
    verdict = layers.by_frames(block.frames)
    return verdict is not None and verdict.layer is layers.Layer.USER and not verdict.weak


def _ignored_by_python(header: Line, ring: deque[Line]) -> bool:
    """The traceback starting at `header` is one Python printed and ignored (the line just before says so)."""
    before = [ln for ln in list(ring)[-_IGNORED_REACH:] if ln.file == header.file]
    return any(_IGNORED.search(ln.body) for ln in before)


# a log record that says its error was handled: one autotuning choice failed and is skipped, a fallback ran
_HANDLED = re.compile(
    r"Ignoring this choice|[Ss]kipping (?:this )?(?:choice|config)|[Ff]alling back to eager|[Ff]all(?:ing)? back to"
    r" (?:the )?(?:eager|aten|python)|suppress(?:ing|ed) (?:the )?(?:error|exception)|will retry"
    r"|(?<!not )(?<!giving up )[Rr]etrying\b"  # but not `not retrying`, `giving up retrying`
    # Inductor's autotuner logs a failed candidate `for benchmark choice ...` and drops only that choice
    r"|for benchmark choice\b"
    # a training loop that catches a failed step and moves on
    r"|caught, skipping (?:this )?(?:step|batch|iteration|sample)"
    r"|[Ss]kipping (?:this |the )?(?:step|batch|iteration|sample|record|example)s?\b"
    # a record that says the program goes on: `could not push metrics to host:9, continuing`
    r"|,\s*continuing\b|[Cc]ontinuing (?:anyway|without)\b"
    # torchelastic's agent after its workers finished: _exit_barrier logs the store's wait timeout with
    # logger.exception and the agent returns its workers' result (torch/distributed/elastic/agent/server/api.py)
    r"|Error waiting on exit barrier\b"
)
# an information record that names the way it takes instead (`[c10d] Failed to bind to ipv6 address, trying ipv4.`):
# that record's own finding was handled; unlike _HANDLED, it says nothing of a traceback printed after it (the other
# way may fail too, and raise)
_FALLBACK = re.compile(r"\b[Ff]ailed to [^.;]{1,80}, (?:now )?trying\b")
MESSAGE_GAP = 2  # plain lines this close, in one stream, belong to one message
BURST_SECONDS = 1.0  # log records of one stream this close together, a few lines apart, report one event
BURST_LINES = 6
STATEMENT_REACH = 60  # message lines searched for the statement after a location-only exception line


@dataclass(slots=True)
class Candidate:
    """A finding plus what the ranking needs to compare it: which event it belongs to."""

    finding: Finding
    entry: Entry | None
    event: tuple[object, ...]
    priority: float  # the entry's; re-filed findings keep their order among the target's
    block: Block | None = None
    after_needed: int = 0
    ranks_before: tuple[int | None, ...] = ()  # ranks of the 3 lines before the evidence, whatever --context
    steps_before: int = -1  # the highest training step its stream had logged before it
    tag_rank: TagRank | None = None  # a rankless line's rank, from the ranked lines of its launcher tag before it
    slot: int | None = None  # its rank is only a launcher's number for the process (analyze.slots)
    # the line of the exception whose message it is in (its block's exception when it was read), else None
    under_exception: int | None = None
    printed_by: int | None = None  # the rank whose output the line is (its prefix, or its per-rank file)


@dataclass
class Collection:
    candidates: list[Candidate] = field(default_factory=list)
    ranks: dict[int, RankState] = field(default_factory=dict)
    lines_read: int = 0
    uncaught_blocks: int = 0
    counts: dict[tuple[str, int | None, Role], int] = field(default_factory=dict)  # every occurrence, kept or not
    handled_events: set[tuple[object, ...]] = field(default_factory=set)  # log records that said they recovered
    # tracebacks Python printed as exceptions it ignored (`Exception ignored in: <function Tmp.__del__ ...>`)
    ignored_events: set[tuple[object, ...]] = field(default_factory=set)
    error_records: list[Candidate] = field(default_factory=list)  # unexplained C++ error records, last resort
    progress: StreamProgress = field(default_factory=StreamProgress)  # training steps per stream (file, rank)
    repeated_lines: int = 0  # copies of analysed candidate lines that were only counted (scan.repeats)
    notes: list[str] = field(default_factory=list)  # what reading the input ran into (ingest.reading)
    world_size: int | None = None  # the largest `world_size=N` / `world size: N` the job printed
    pid_ranks: dict[int, int] = field(default_factory=dict)  # a failed process's global rank, by its pid
    worker_table: WorkerTable = field(default_factory=WorkerTable)  # a launcher's (host, pid) -> rank rows
    # a rankless traceback's block -> (the rank of the ranked line that introduced it, that rank's step count then)
    introduced_by: dict[int, tuple[int, int]] = field(default_factory=dict)
    slots: SlotMap = field(default_factory=SlotMap)  # launcher numbers paired with the job's ranks, per input
    clock_spans: dict[str, ClockSpan] = field(default_factory=dict)  # each input's first and last clock, by name


class Collector:
    def __init__(self, catalog: Catalog, context: int = 100) -> None:
        self.catalog = catalog
        self.matcher = matcher_for(catalog)
        self.context = context
        self.tracker = TracebackTracker()
        self.result = Collection()
        self._rings: dict[str, deque[Line]] = {}
        self._kept: dict[tuple[str, int | None, Role], Candidate] = {}
        self._kept_count: dict[tuple[str, int | None, Role], int] = self.result.counts
        self._own_copy_kept: set[tuple[str, int | None, Role]] = set()  # keys whose quoted rank's own copy is kept
        self._pending_after: list[Candidate] = []
        self._last_time: dict[tuple[str, int | None], float] = {}
        self._last_time_in_file: dict[str, tuple[float, int]] = {}  # (clock, line number)
        self._last_wall: dict[tuple[str, int | None] | str, float | None] = {}  # Line.wall of those last clocks
        self._entry_count: dict[str, int] = {}
        self._after_handled_record: dict[tuple[str, int | None], bool] = {}  # the stream's last line said so
        self.rank_tracker = RankTracker(self.result.progress)
        self.result.ranks = self.rank_tracker.states
        self.result.pid_ranks = self.rank_tracker.pid_ranks
        self.result.worker_table = self.rank_tracker.worker_table
        # findings whose line only said where; the next statement of the same message becomes their evidence
        self._awaiting: dict[tuple[str, int | None], tuple[list[Candidate], int]] = {}
        # findings of an IPython header (`CompilationError   Traceback (most recent call last)`): the block's own
        # `Class: message` line, when it comes, states the error and becomes their evidence
        self._ipython_pending: dict[int, list[Candidate]] = {}
        self._last_record: dict[tuple[str, int | None], tuple[int, float, tuple[object, ...]]] = {}
        self._last_plain: dict[tuple[str, int | None], tuple[int, tuple[object, ...]]] = {}
        self._repeat_key: int | None = None  # the key (scan.repeats) of the line being fed
        self._counts_of_key: dict[tuple[str, int], set[tuple[str, int | None, Role]]] = {}

    def note_world_size(self, size: int | None) -> None:
        """A size the job printed (scan.world_size reads it from every line, on either path)."""
        self.result.world_size = larger(self.result.world_size, size)

    def _note_intro(self, header: Line, block: Block, ring: deque[Line]) -> None:
        """A rankless traceback right after a ranked line that introduces it (a warning or error record, or a line
        that says it goes on: `[rank1] could not decode record 4; skipping sample`, then print_exc's lines): the
        traceback is that rank's output. Kept with that rank's step count then (analyze.decide)."""
        before = ring[-1] if ring else None  # the line fed just before it (the fast path feeds whole regions)
        back = 1
        while (before is not None and back < min(len(ring), _CONTINUATION_REACH) and before.rank is None
               and before.level is None and before.body[:1].isspace() and before.body.strip()):
            # a record's wrapped lines (RichHandler indents them under its message): the record itself introduces
            back += 1
            before = ring[-back] if ring[-back].number == before.number - 1 else None
        if before is None or before.number != header.number - back or before.rank is None:
            return
        says_handled = _HANDLED.search(before.body) is not None
        if before.level not in ("W", "E") and not says_handled:
            return  # an unrelated line (another rank's progress) introduces nothing
        steps = self.result.progress.steps.get((header.file, before.rank), -1)
        self.result.introduced_by[block.block_id] = (before.rank, steps)
        if says_handled and before.level is not None and before.timestamp is not None:
            # logger.exception's layout with the rank in the record only: the record says it goes on (analyze.decide
            # does not believe it of a traceback from the program's top, `<module>`: that is a crash)
            self.result.handled_events.add(("tb", block.block_id))

    # -- streaming -----------------------------------------------------------------------------
    def feed(self, line: Line, match: bool = True, repeat_key: int | None = None) -> None:
        """match=False: context only, no finding from this line: the scanner found no candidate in it, or it
        repeats a line already analysed (scan.repeats). repeat_key: that line's key, so that its later copies,
        only counted, add to the counts of the findings it gave."""
        self.result.lines_read += 1
        self._repeat_key = repeat_key
        if line.slot is not None:
            # the rank the job's own columns claim (or a stacked `[rankN]:`) pairs the number with a rank; the line
            # keeps the number, and its findings are renumbered at the end (_renumber_slots) where the pairs are one
            # to one (taken line by line, a claim changed a held-out case's cause: round 49)
            paired = line.claimed if line.claimed is not None else None if line.rank_is_slot else line.rank
            self.result.slots.observe(line.file, line.slot, paired)
        ring = self._rings.get(line.file)
        if ring is None:
            # whatever the context shown, the analysis reads back 3 lines (ranks_before) and TAG_REACH (stream_tags)
            ring = self._rings[line.file] = deque(maxlen=max(self.context, TAG_REACH))
        if self._pending_after:
            self._extend_after(line)
        block, kind = self.tracker.feed(line)
        is_exception = kind is Kind.EXCEPTION and block is not None
        stream = (line.file, line.rank)
        if self._awaiting and stream in self._awaiting:
            self._forward_to_statement(stream, line, kind, ring)
        recorded = len(self.result.candidates)
        if kind is Kind.HEADER and block is not None and self._after_handled_record.get(stream):
            # logger.exception's layout: the record that says it goes on, then the traceback it caught
            self.result.handled_events.add(("tb", block.block_id))
        if kind is Kind.HEADER and block is not None and _ignored_by_python(line, ring):
            self.result.ignored_events.add(("tb", block.block_id))
        if kind is Kind.HEADER and block is not None and line.rank is None:
            self._note_intro(line, block, ring)
        handled_record = line.level is not None and line.timestamp is not None and _HANDLED.search(line.body)
        self._after_handled_record[stream] = bool(handled_record)
        if handled_record or (line.level in ("I", "D") and line.timestamp is not None and _FALLBACK.search(line.body)):
            self.result.handled_events.add(self._record_event(line))
        claimed = False  # whether a catalog entry explains this exception line
        if match and kind is not Kind.FRAME:  # source echoed under `File ...` is not an event
            job_raised = is_exception and _raised_by_the_job(block)  # type: ignore[arg-type]
            stated = block.stated if is_exception and block is not None and block.exception is line else None
            hits = self.matcher.match(line)
            if stated is not None:  # the exception as Python would have printed it, and the line as it stands
                rebuilt = self.matcher.match(replace(line, text=stated, body=stated))
                ids = {r.entry.id for r in rebuilt}
                hits = rebuilt + [h for h in hits if h.entry.id not in ids]
            for hit in hits:
                if job_raised and self._role_of(hit) is Role.COLLATERAL:
                    continue  # an echo's words in an exception the job's own code raised: its own error
                if not self._add(hit.entry, hit, line, block, kind, ring):
                    continue
                role = self._role_of(hit)
                # a wrapper that names its inner exception in line (`InductorError: RuntimeError: ...`)
                # leaves that inner exception to be explained, by an entry or as an uncaught exception
                names_inner = role is Role.WRAPPER and "inner" in hit.fields
                if is_exception and role not in (Role.CONTEXT, Role.WARNING) and not names_inner:
                    claimed = True
        if is_exception and not block.logged:  # type: ignore[union-attr]
            self.result.uncaught_blocks += 1
            if not claimed and match:
                self._maybe_generic(line, block, ring)  # type: ignore[arg-type]
        elif is_exception and match and not claimed and block.header.level == "W":  # type: ignore[union-attr]
            # a traceback logged as a warning: handled, the job went on; still worth a warning finding
            self._maybe_generic(line, block, ring, handled=True)  # type: ignore[arg-type]
        unexplained = recorded == len(self.result.candidates)
        if (match and kind is Kind.OTHER and block is None and line.level in ("E", "F") and unexplained
                and line.origin is not None and _NATIVE_SOURCE.search(line.origin)):
            self._error_record(line, ring)
        elif (match and block is None and unexplained and (abort := _native_abort(line, ring)) is not None
              and not self.matcher.match(line)):  # an entry's known abort (a watchdog's) counted, not kept
            self._uncaught_native(line, ring, *abort)
        fresh = [c for c in self.result.candidates[recorded:] if c.finding.role in (Role.CAUSE, Role.SYMPTOM)]
        if is_exception and block.ipython:  # type: ignore[union-attr]
            if line is block.header:  # type: ignore[union-attr]
                if fresh:
                    self._ipython_pending[block.block_id] = fresh  # type: ignore[union-attr]
            elif block.block_id in self._ipython_pending:  # type: ignore[union-attr]
                moved = self._ipython_pending.pop(block.block_id)  # type: ignore[union-attr]
                for cand in moved:
                    self._move_evidence(cand, line, ring)
                fresh = moved + fresh
        if (fresh and is_exception and _LOCATION_ONLY.search(line.body) is not None
                and _LONG_INTRO.search(line.body) is None):
            self._awaiting[stream] = (fresh, STATEMENT_REACH)
        self._track_rank(line)  # after matching, so an error line is not its rank's "last healthy" line
        ring.append(line)

    def _record_event(self, line: Line) -> tuple[object, ...]:
        """The event a timestamped log record belongs to: records of one stream printed together are one."""
        assert line.timestamp is not None
        stream = (line.file, line.rank)
        last = self._last_record.get(stream)
        if last is not None and last[0] == line.seq:
            return last[2]
        if last is not None and line.seq - last[0] <= BURST_LINES and abs(line.timestamp - last[1]) <= BURST_SECONDS:
            event = last[2]
        else:
            event = ("log", line.file, line.pid, line.timestamp)
        self._last_record[stream] = (line.seq, line.timestamp, event)
        return event

    def _forward_to_statement(self, stream: tuple[str, int | None], line: Line, kind: Kind, ring: deque[Line]) -> None:
        """Move a location-only finding's evidence to the line of its message that states the problem."""
        cands, left = self._awaiting[stream]
        body = line.body.strip()
        if kind is Kind.FRAME or not body:
            return
        if left <= 0 or kind is not Kind.MESSAGE:
            del self._awaiting[stream]
            return
        if not _STATEMENT.search(body) or body.startswith(("^", "~")):
            self._awaiting[stream] = (cands, left - 1)
            return
        del self._awaiting[stream]
        for cand in cands:
            old = self._move_evidence(cand, line, ring)
            cand.finding.fields.setdefault("stated_after", old.text[:200])

    def _move_evidence(self, cand: Candidate, line: Line, ring: deque[Line]) -> Evidence:
        """Make `line` the finding's evidence (same rank, time and order), with its context; returns the old one."""
        old = cand.finding.evidence
        cand.finding.evidence = Evidence(line.file, line.number, line.text, old.rank, old.timestamp, old.seq)
        cand.finding.context_before = list(ring)[-self.context :] if self.context else []
        cand.finding.context_after = []
        return old

    def gap(self, file: str) -> None:
        """Lines of `file` were skipped (fast path): tracebacks cannot span the gap."""
        self.tracker.forget(file)

    def add_repeats(self, file: str, skipped: dict[int, int]) -> None:
        """Copies of analysed lines of `file` that were only counted (scan.repeats) count for their findings."""
        for repeat_key, copies in skipped.items():
            self.result.repeated_lines += copies
            for key in self._counts_of_key.get((file, repeat_key), ()):
                self._kept_count[key] = self._kept_count.get(key, 0) + copies
                kept = self._kept.get(key)
                if kept is not None:
                    kept.finding.count = self._kept_count[key]

    def finish(self) -> Collection:
        self._pending_after.clear()
        for file, ring in self._rings.items():
            if ring:
                self._cut_last_line(file, ring)
        self._renumber_slots()
        return self.result

    def _renumber_slots(self) -> None:
        """Findings whose rank is only a launcher's number, in an input whose lines showed that the job numbers
        its ranks otherwise (analyze.slots): renumbered, and the answer says so."""
        maps = {file: self.result.slots.renumbering(file, self.result.world_size) for file in self.result.slots.pairs}
        moved: dict[str, set[tuple[int, int]]] = {}
        for cand in self.result.candidates + self.result.error_records:
            # a traceback's exception keeps its stream's numbering: decide reads that stream's progress after it
            mapping = maps.get(cand.finding.evidence.file) if cand.slot is not None and cand.block is None else None
            rank = mapping.get(cand.slot) if mapping else None
            if rank is None or rank == cand.slot:
                continue
            finding = cand.finding
            old = finding.evidence.rank
            finding.evidence.rank = rank
            finding.ranks = {rank if r == old else r for r in finding.ranks}
            for name in RANK_FIELDS:
                if str(finding.fields.get(name, "")) == str(cand.slot):
                    finding.fields[name] = str(rank)
            if old is not None:
                self.rank_tracker.move_finding(finding, old)
            moved.setdefault(finding.evidence.file, set()).add((cand.slot, rank))
        for file, pairs in moved.items():
            shown = ", ".join(f"its process {slot} is rank {rank}" for slot, rank in sorted(pairs))
            self.result.notes.append(
                f"{file}: the launcher numbers its processes otherwise than the job numbers its ranks (its lines "
                f"say both); its reports were read with the job's ranks: {shown}")

    def _cut_last_line(self, file: str, ring: deque[Line]) -> None:
        """An input's last line that ends in most of an anchor, cut short: a weak hit of that anchor's entry."""
        last = ring[-1]
        if self.matcher.match(last):
            return
        cut = cut_anchor(last.body, self.catalog)
        if cut is None:
            return
        entry, signature, anchor = cut
        if self._add(entry, Hit(entry, signature, {}, confirmed=False), last, None, Kind.OTHER, ring, cut=True):
            self.result.notes.append(
                f"{file} ends mid-line (line {last.number}): its end was read as the start of `{anchor}` "
                "(a weak reading: the rest of the message is missing)")

    # -- findings ------------------------------------------------------------------------------
    def _role_of(self, hit: Hit) -> Role:
        return Role(hit.signature.role or hit.entry.role)

    def _add(self, entry: Entry, hit: Hit, line: Line, block: Block | None, kind: Kind, ring: deque[Line],
             cut: bool = False) -> bool:
        """Record a hit; False when it is not an event (an unconfirmed anchor on an ordinary line). cut: most of a
        long anchor ends the input's last line (analyze.cut_lines), which says as much as an error word would."""
        role = self._role_of(hit)
        fatal = hit.signature.fatal if hit.signature.fatal is not None else entry.fatal
        in_exception = block is not None and not block.logged and block.exception is not None
        handled = block is not None and block.logged and kind in (Kind.EXCEPTION, Kind.MESSAGE)
        priority = hit.signature.priority if hit.signature.priority is not None else entry.priority
        if not hit.confirmed:
            # the regex extracts fields, it does not veto; but an anchor alone is weaker evidence: it counts
            # on an error report (an exception, an error-level record, a line that says error/failed)
            reports = (in_exception and kind in (Kind.EXCEPTION, Kind.MESSAGE)) or line.level in ("E", "F") \
                or _ERROR_WORDS.search(line.body) is not None
            if not reports and not cut:
                return False
            priority -= UNCONFIRMED_PENALTY
        if entry.advisory:
            pass  # a warning that happens to print inside an error's message stays a warning
        elif in_exception and not block.orphan:  # type: ignore[union-attr]
            fatal = True
            if role in (Role.WARNING, Role.CONTEXT):
                role = Role.CAUSE
        elif (handled or _HANDLED.search(line.body) or (block is None and line.level in ("W", "I", "D")
                                                         and not _EXCEPTION_STATEMENT.match(line.body))) \
                and fatal and role is Role.CAUSE:
            # a traceback a logger printed at DEBUG/INFO/WARNING was caught and handled, the line itself says it
            # recovered (an autotuning choice dropped), or the program logged it as a warning: the job went on
            fatal = False
            role = Role.WARNING
        elif (block is None and line.level is None and role is Role.WARNING and kind is not Kind.FRAME
              and _RAISED_STATEMENT.match(line.body)):
            # `torch._dynamo.exc.Unsupported: Tensor.item` alone (a paste's last line): Python prints a raised
            # exception of a qualified class so, a logger or the warnings module never does; what a warning
            # entry explains was raised here, not logged
            fatal = True
            role = Role.CAUSE
        elif (handled or _HANDLED.search(line.body)) and fatal and role is Role.WRAPPER:
            # the wrapper of a handled exception (Dynamo's suppress_errors record), or in a line that says the
            # program went on (`WARNING ... failed: TimeoutError: On WorkerInfo(id=2, ...); retrying`), wraps a warning
            fatal = False

        fields = dict(hit.fields)
        summary_rank = self.rank_tracker.summary_rank_of(line)
        if summary_rank is None:
            summary_rank = self.rank_tracker.record_rank_of(line)
        if summary_rank is not None and named_rank(fields) is None:
            fields["rank"] = str(summary_rank)  # the summary says which rank this exit code (or error) is
        named = named_rank(fields)
        rank = named if named is not None else line.rank
        own = str(fields.get(OWN_RANK_FIELD, ""))
        if rank is None and own.isdigit():
            rank = int(own)  # the message says which rank printed it, and the line has no prefix that says it
        slot = line.slot if named is None and line.rank_is_slot else None
        if hit.signature.rank_is_slot and named is not None and summary_rank is None:
            slot = named  # mpirun's `process rank N`, srun's `task N`: the launcher's number
            self.result.slots.observe(line.file, named, None)
        self._record(
            entry_id=entry.id,
            category=entry.category,
            title=entry.title,
            role=role,
            fatal=fatal,
            line=line,
            rank=rank,
            fields=fields,
            block=block if in_exception else None,
            ring=ring,
            entry=entry,
            priority=priority,
            generic=False,
            confidence="high" if hit.confirmed else "low",
            slot=slot,
        )
        return True

    def _error_record(self, line: Line, ring: deque[Line]) -> None:
        """An error record of PyTorch's C++ side (`[E socket.cpp:753] [c10d] ...`) that no entry explains.

        It is evidence of last resort: any exception, cause, echo or wrapper outranks it (decide.py), but a log
        whose only trace of failure is such a record is not clean.
        """
        if len(self.result.error_records) >= KEEP_PER_KEY:
            return
        verdict = layers.classify("", line.body, [], False)
        entry = self.catalog.fallback(verdict.layer.value) or self.catalog.fallback(layers.Layer.USER.value)
        assert entry is not None
        self._record(
            entry_id=entry.id, category=entry.category, title=entry.title, role=Role.SYMPTOM, fatal=True, line=line,
            rank=line.rank, fields={"origin": line.origin or ""}, block=None, ring=ring, entry=entry,
            priority=entry.priority, generic=True, confidence="low", slot=line.slot if line.rank_is_slot else None,
            reason=f"an error record of {line.origin} that no catalog entry explains; {verdict.evidence}",
            into=self.result.error_records,  # kept apart: decide.py uses them only when nothing else failed
        )

    def _uncaught_native(self, line: Line, ring: deque[Line], exception: str, message: str) -> None:
        """A C++ exception that ended its process and that no entry explains: like an uncaught Python exception,
        a cause filed under its layer's entry (by its message's words: `Collective call returned error` is the
        distributed runtime's)."""
        verdict = layers.classify("", message, [], False)
        entry = self.catalog.fallback(verdict.layer.value) or self.catalog.fallback(layers.Layer.USER.value)
        assert entry is not None
        self._record(
            entry_id=entry.id, category=entry.category, title=entry.title, role=Role.CAUSE, fatal=True, line=line,
            rank=line.rank, fields={"exception": exception}, block=None, ring=ring, entry=entry,
            priority=entry.priority, generic=True, confidence="low", slot=line.slot if line.rank_is_slot else None,
            reason=f"a C++ exception ({exception}) nothing caught ended the process; {verdict.evidence}",
        )

    def _maybe_generic(self, line: Line, block: Block, ring: deque[Line], handled: bool = False) -> None:
        """An uncaught exception that no catalog entry explains is still a cause, filed under its layer's entry."""
        wrapped = block.wrapped_by_backend or any(_COMPILER_CALL.search(frame) for frame in block.frames)
        verdict = layers.classify(block.exception_type or "", line.body, block.frames, wrapped,
                                  origin=block.header.origin if block.header.level is not None else None)
        entry = self.catalog.fallback(verdict.layer.value) or self.catalog.fallback(layers.Layer.USER.value)
        assert entry is not None, "the catalog lacks the uncaught-exception entries"
        exception = block.exception_type or ""
        fields: dict[str, object] = {"exception": exception, "frame": block.last_frame_path or ""}
        record_rank = self.rank_tracker.record_rank_of(line)
        if record_rank is not None:
            fields["rank"] = str(record_rank)  # the exception torchrun's summary quotes for that rank
        self._record(
            entry_id=entry.id,
            category=entry.category,
            title=entry.title,
            role=Role.WARNING if handled else Role.WRAPPER if _wraps(exception, block) else Role.CAUSE,
            fatal=not handled,
            line=line,
            rank=line.rank if record_rank is None else record_rank,
            fields=fields,
            block=block,
            ring=ring,
            entry=entry,
            priority=entry.priority,
            generic=True,
            reason=verdict.evidence,
            slot=line.slot if record_rank is None and line.rank_is_slot else None,
        )

    def _record(
        self,
        *,
        entry_id: str,
        category: str,
        title: str,
        role: Role,
        fatal: bool,
        line: Line,
        rank: int | None,
        fields: dict[str, object],
        block: Block | None,
        ring: deque[Line],
        entry: Entry | None,
        priority: int,
        generic: bool,
        confidence: str = "high",
        reason: str = "",
        into: list[Candidate] | None = None,
        slot: int | None = None,
    ) -> None:
        if block is not None and block.about_rank is not None and named_rank(fields) is None:
            # a traceback another rank's error quotes says whose it is (`... last): (RANK 1)`): that rank's error
            fields = {**fields, "rank": str(block.about_rank)}
            rank, slot = block.about_rank, None
        key = (entry_id, rank, role)
        if self._repeat_key is not None:
            self._counts_of_key.setdefault((line.file, self._repeat_key), set()).add(key)
        count = self._kept_count.get(key, 0) + 1
        self._kept_count[key] = count
        first = self._kept.get(key)
        if first is not None:
            first.finding.count = count
            # the quoted rank's own copy of its error is kept however many ranks quoted it first
            own = block is not None and block.about_rank is not None and line.rank == rank
            if count > KEEP_PER_KEY and not (own and key not in self._own_copy_kept):
                return
            if own:
                self._own_copy_kept.add(key)
        # lines inside a traceback carry no timestamp: use the last one this stream printed
        when = line.timestamp if line.timestamp is not None else self._last_time.get((line.file, line.rank))
        wall = line.wall if line.timestamp is not None else self._last_wall.get((line.file, line.rank))
        if line.timestamp is None and line.rank is None and (filed := self._file_clock(line)) is not None:
            when, wall = filed[0], self._last_wall.get(line.file)
        evidence = Evidence(line.file, line.number, line.text, rank, when, line.seq, clocked=line.timestamp is not None,
                            wall=wall if when is not None else None)
        per_entry = self._entry_count[entry_id] = self._entry_count.get(entry_id, 0) + 1
        # echoes (collateral on 1,000 ranks) need context only for their first few copies: bounded memory
        keep_context = (role in (Role.CAUSE, Role.SYMPTOM) or per_entry <= KEEP_PER_KEY)
        finding = Finding(
            entry_id=entry_id,
            category=category,
            title=title,
            role=role,
            fatal=fatal,
            evidence=evidence,
            fields=fields,
            generic=generic,
            in_traceback=block is not None,
            count=count,
            confidence=confidence,
            classified_by=reason,
            ranks={rank} if rank is not None else set(),
            context_before=list(ring)[-self.context :] if keep_context and self.context else [],
        )
        event: tuple[object, ...]
        if block is not None:
            event = ("tb", block.block_id)
        elif line.level is not None and line.timestamp is not None:
            event = self._record_event(line)
        else:
            # the lines of one multi-line message (no traceback, no log header) are one event
            stream = (line.file, line.rank)
            last = self._last_plain.get(stream)
            event = last[1] if last is not None and line.seq - last[0] <= MESSAGE_GAP else ("line", line.seq)
            self._last_plain[stream] = (line.seq, event)
        candidate_steps = self.result.progress.steps.get((line.file, line.rank), -1)
        detail_reach = max((d.within for d in entry.details), default=0) if entry else 0
        after = max(AFTER_LINES, detail_reach) if keep_context else detail_reach
        candidate = Candidate(finding, entry, event, priority, block, after, steps_before=candidate_steps)
        candidate.ranks_before = tuple(ln.rank for ln in list(ring)[-3:])
        candidate.printed_by = line.rank
        candidate.slot = slot if slot is not None and rank == slot else None
        if block is not None and block.exception is not None and block.exception.seq < line.seq:
            candidate.under_exception = block.exception.seq
        if rank is None:
            candidate.tag_rank = tag_rank(line, list(ring)[-TAG_REACH:])
        if first is None:
            self._kept[key] = candidate
        self.rank_tracker.note_finding(finding)
        (self.result.candidates if into is None else into).append(candidate)
        if after:
            self._pending_after.append(candidate)

    def _file_clock(self, line: Line) -> tuple[float, int] | None:
        """A line of no rank may be any process's (a traceback under another process's timed record): it was written
        after its file's last clock, which dates it better than the file's last unranked clock (often a launcher's
        banner at the start). Only a clock the fast path frames too: at most MIN_BEFORE lines before the line
        (scan.regions frames that many before every candidate)."""
        last = self._last_time_in_file.get(line.file)
        return None if last is None or last[1] < line.number - MIN_BEFORE else last

    def _extend_after(self, line: Line) -> None:
        still: list[Candidate] = []
        for cand in self._pending_after:
            if cand.finding.evidence.file == line.file:
                cand.finding.context_after.append(line)
                if len(cand.finding.context_after) >= cand.after_needed:
                    continue
            still.append(cand)
        self._pending_after = still

    # -- per-rank state ------------------------------------------------------------------------
    def _track_rank(self, line: Line) -> None:
        if line.timestamp is not None:
            self._last_time[(line.file, line.rank)] = line.timestamp
            self._last_time_in_file[line.file] = (line.timestamp, line.number)
            self._last_wall[(line.file, line.rank)] = self._last_wall[line.file] = line.wall
        self.rank_tracker.feed(line)


# fields that name the rank a message is about (not the rank that printed it): `rank`, `ranks`, `culprit_rank`,
# `culprit_ranks` (a list such as `1, 3`: the lowest is named first)
RANK_FIELDS = ("culprit_rank", "culprit_ranks", "rank", "ranks")
_NUMBER = re.compile(r"\d+")


# a field naming the ranks a launcher tore down after another failed (srun's `tasks 0,2-3: Terminated`): evidence that
# they were alive until then, not about who failed
TORN_DOWN_FIELD = "torn_down_ranks"
# a field naming the rank that printed the message (DDP's `[2]: params[4] in this process ...`): that line's own rank
# where it has no prefix; a prefix wins (the message's number may be a process group's rank, not the job's)
OWN_RANK_FIELD = "own_rank"
# a field naming the ranks a launcher saw fail (Ray Train's `[Rank 0,1,2 Error Snippet]`): each failed with an error,
# none of them is a rank that never arrived
FAILED_RANKS_FIELD = "failed_ranks"
_CONTINUATION_REACH = 6  # wrapped lines of a record looked past for the record that introduces a traceback
# an exception group (Python 3.11+: asyncio.TaskGroup, trio) carries the exceptions that failed: they decide
_GROUP = re.compile(r"^(?:[\w.]+\.)?(?:Base)?ExceptionGroup$")


def _wraps(exception: str, block: Block) -> bool:
    """An exception that only carries others: an exception group, or the `SystemExit` a handler raised while
    handling the exception before it in the chain (mp.spawn's `_wrap` exits 1 after a worker's error)."""
    return _GROUP.match(exception) is not None or (block.chained and exception.rsplit(".", 1)[-1] == "SystemExit")


def rank_list(value: object) -> set[int]:
    """The ranks of a list as launchers print them: `3`, `1, 3`, `0,2-3` (ranges included)."""
    ranks: set[int] = set()
    for first, last in _RANGE.findall(str(value)):
        low, high = int(first), int(last or first)
        if high - low <= 65536:
            ranks.update(range(low, high + 1))
    return ranks


_RANGE = re.compile(r"(\d+)(?:-(\d+))?")


def _native_abort(line: Line, ring: deque[Line]) -> tuple[str, str] | None:
    """(class, message) of a C++ exception's abort report on this line: Ray's one-line form, or libstdc++'s `what():`
    line right after its `terminate called after throwing` line of the same file. Not in a record the job logged at
    INFO or DEBUG (a quote of such a report is not a crash)."""
    if line.level in ("I", "D") or "what():" not in line.body:  # both forms print `what():`
        return None
    found = _UNHANDLED.search(line.body)
    if found is not None:
        return found.group("cls"), found.group("msg")
    what = _WHAT.match(line.body)
    before = ring[-1] if ring else None
    if what is None or before is None or before.file != line.file:
        return None
    thrown = _TERMINATE.search(before.body)
    return (thrown.group("cls"), what.group("msg")) if thrown is not None else None


def named_rank(fields: dict[str, object]) -> int | None:
    """The rank a message names as the one it is about, from the catalog's rank-valued fields."""
    for name in RANK_FIELDS:
        value = fields.get(name)
        if value is None:
            continue
        numbers = [int(n) for n in _NUMBER.findall(str(value))]
        if numbers:
            return min(numbers)
    return None
