"""Read PyTorch's structured trace (`TORCH_TRACE=dir`: `dedicated_log_torch_trace_*.log`, one file a rank).

Each record is a glog envelope and a JSON object on one line, then its payload, each payload line indented
with a tab (torch/_logging/_internal.py, TorchLogsFormatter with trace=True):

    V1202 01:37:00.289000 11091 torch/_dynamo/convert_frame.py:303] {"dynamo_start": {...}, "rank": 1, ...}
    \tpayload line

Releases before 2.5 wrote the thread id instead of the process id, and a `[rankN]:` prefix when a process
group was up; a record's metadata carries `rank`, `frame_id`, `frame_compile_id` and `attempt` in every
release since 2.2. Records are only parsed as JSON, never evaluated; a record that does not parse (a file
cut mid-write, a corrupted line) is skipped and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import PurePath

from denpex.errors import DenpexInputError
from denpex.ingest.reading import Reading
from denpex.ingest.sources import Source

TRACE_NAME = re.compile(r"^dedicated_log_torch_trace_.*\.log(?:\.(?:gz|zst|bz2|xz))?$")
ENVELOPE = re.compile(
    r"^(?:\[rank(?P<prefix_rank>\d+)\]:)?(?P<level>[VIWEC])(?P<date>\d{4}) (?P<time>\d\d:\d\d:\d\d\.\d+) "
    r"(?P<pid>\d+) (?P<origin>[^\s\]]+:\d+)\](?: \[[^\]]*\])* (?P<json>\{.*)$"
)
_HEAD_BYTES = 64 << 10  # the first record's envelope and metadata; a sniff never reads more
MAX_PAYLOAD_LINES = 20_000  # a payload longer than this (a huge graph) is cut: only errors' text is needed
# Payloads worth keeping (the rest are graphs and generated code, often MBs): artifacts by name, and kinds.
KEPT_PAYLOADS = frozenset({"dynamo_error", "dynamo_graph_break_reason", "recompile_reasons",
                           "inductor_collective_schedule", "str"})
_BULKY_KEYS = ("dynamo_config", "inductor_config", "functorch_config")  # compilation_metrics' config dumps


@dataclass(slots=True)
class Record:
    """One trace record: where it is, its metadata (the JSON object) and its payload (tabs removed)."""

    line: int  # 1-based line of the envelope in its file
    level: str
    origin: str  # the writer's source location, `torch/_dynamo/convert_frame.py:303`
    kind: str  # the record's first key: dynamo_start, artifact, compilation_metrics, ...
    meta: dict[str, object]
    payload: str | None = None
    payload_line: int = 0  # 1-based line of the payload's first line
    rank_prefix: int | None = None

    @property
    def body(self) -> dict[str, object]:
        value = self.meta.get(self.kind)
        return value if isinstance(value, dict) else {}

    @property
    def rank(self) -> int | None:
        rank = self.meta.get("rank")
        return rank if isinstance(rank, int) and not isinstance(rank, bool) else self.rank_prefix

    def compile_id(self) -> str | None:
        """`frame/compile` as torch prints it (`0/1`, `!2/0/1` under compiled autograd); `_N` for attempt N>0."""
        frame, compiled = self.meta.get("frame_id"), self.meta.get("frame_compile_id")
        if not isinstance(frame, int) or not isinstance(compiled, int):
            cid = self.body.get("compile_id")
            return cid if isinstance(cid, str) else None
        autograd = self.meta.get("compiled_autograd_id")
        text = f"!{autograd}/{frame}/{compiled}" if isinstance(autograd, int) else f"{frame}/{compiled}"
        attempt = self.meta.get("attempt")
        return f"{text}_{attempt}" if isinstance(attempt, int) and attempt > 0 else text


@dataclass(slots=True)
class TraceFile:
    """The records of one trace file, and what could not be read of it."""

    name: str
    rank_hint: int | None
    records: list[Record] = field(default_factory=list)
    bad_records: int = 0
    first_bad_line: int | None = None
    stray_lines: int = 0  # lines neither an envelope nor a payload line
    cut_off: bool = False  # the last line has no newline
    notes: list[str] = field(default_factory=list)

    @property
    def rank(self) -> int | None:
        for record in self.records:
            if record.rank is not None:
                return record.rank
        return self.rank_hint

    def summary_notes(self) -> list[str]:
        out = list(self.notes)
        if self.bad_records:
            out.append(f"{self.name}: {self.bad_records:,} TORCH_TRACE record(s) with unreadable JSON skipped "
                       f"(first at line {self.first_bad_line}); the rest was read")
        return out


def is_trace_name(name: str) -> bool:
    return TRACE_NAME.match(PurePath(name).name) is not None


def _first_line(source: Source) -> bytes:
    head = b""
    try:
        for chunk in source.chunks(8192, Reading(source.name)):
            head += chunk
            if b"\n" in head or len(head) >= _HEAD_BYTES:
                break
    except DenpexInputError:
        return b""
    return head.split(b"\n", 1)[0]


def looks_like_trace(source: Source) -> bool:
    """Named like a trace file, or its first line is a trace envelope from torch whose JSON is an object."""
    if is_trace_name(source.name):
        return True
    if source.stream is not None:  # a pipe can be read only once: it stays a plain log
        return False
    match = ENVELOPE.match(_first_line(source).decode("utf-8", "replace").rstrip("\r"))
    # the writer names its own module, relative to site-packages (`torch/_dynamo/utils.py:2350`): a job's own
    # glog line that logs a JSON object (`train.py:12] {"loss": 0.5}`) stays a log
    if match is None or not match.group("origin").replace("\\", "/").startswith("torch/"):
        return False
    try:
        meta = json.loads(match.group("json"))
    except ValueError:
        return False
    return isinstance(meta, dict) and bool(meta) and isinstance(next(iter(meta)), str)


def split_traces(sources: list[Source]) -> tuple[list[Source], list[Source]]:
    """(plain logs, TORCH_TRACE files): a trace file is never read as plain log text."""
    plain: list[Source] = []
    traces: list[Source] = []
    for source in sources:
        (traces if looks_like_trace(source) else plain).append(source)
    return plain, traces


def _text_lines(source: Source, reading: Reading, trace: TraceFile) -> Iterator[str]:
    rest = b""
    for chunk in source.chunks(1 << 20, reading):
        rest += chunk
        *lines, rest = rest.split(b"\n")
        for raw in lines:
            yield raw.decode("utf-8", "replace").rstrip("\r")
    if rest:
        trace.cut_off = True  # the writer was stopped mid-record (a killed rank, a copy taken while written)
        yield rest.decode("utf-8", "replace").rstrip("\r")


def read_trace(source: Source) -> TraceFile:
    """Every record of one trace file; bad JSON, stray lines and a cut-off end are counted, not raised."""
    trace = TraceFile(name=source.name, rank_hint=source.rank_hint)
    reading = Reading(source.name)
    current: Record | None = None
    payload: list[str] = []
    cut = False
    skip_payload = False

    def close() -> None:
        nonlocal current, payload, cut
        if current is not None:
            if payload:
                current.payload = "\n".join(payload) + ("\n[payload cut]" if cut else "")
            trace.records.append(current)
        current, payload, cut = None, [], False

    for number, text in enumerate(_text_lines(source, reading, trace), start=1):
        if text.startswith("\t"):
            if current is None:
                continue  # the payload of a skipped record
            if not current.payload_line:
                current.payload_line = number
            if skip_payload:  # a graph or generated code: where it is is kept, not its text
                continue
            if len(payload) < MAX_PAYLOAD_LINES:
                payload.append(text[1:])
            else:
                cut = True
            continue
        close()
        match = ENVELOPE.match(text)
        if match is None:
            if text.strip():
                trace.stray_lines += 1
            continue
        try:
            meta = json.loads(match.group("json"))
        except ValueError:
            meta = None
        if not isinstance(meta, dict) or not meta:
            trace.bad_records += 1
            trace.first_bad_line = trace.first_bad_line or number
            continue
        prefix = match.group("prefix_rank")
        kind = str(next(iter(meta)))
        body = meta[kind] if isinstance(meta[kind], dict) else {}
        for key in _BULKY_KEYS:
            body.pop(key, None)
        keep = kind in KEPT_PAYLOADS or body.get("name") in KEPT_PAYLOADS
        current = Record(
            line=number, level=match.group("level"), origin=match.group("origin"), kind=kind,
            meta=meta, rank_prefix=int(prefix) if prefix else None,
        )
        skip_payload = not keep
    close()
    trace.notes.extend(reading.notes())
    if trace.cut_off:
        trace.notes.append(f"{source.name}: the TORCH_TRACE file ends mid-record (cut off while written); "
                           "its last record may be partial")
    if trace.stray_lines:
        trace.notes.append(f"{source.name}: {trace.stray_lines:,} line(s) that are not TORCH_TRACE records skipped")
    return trace
