"""What each rank's TORCH_TRACE says: compiles, graph breaks, recompiles, failures, caches; and how ranks differ.

Record kinds across releases: `dynamo_start` (2.2+), `compilation_metrics` with fail_type/fail_reason/
fail_user_frame_filename (2.2+), artifacts `dynamo_graph_break_reason`, `recompile_reasons`, `dynamo_error`,
`fx_graph_cache_*` and `aotautograd_cache_*` (2.5+), graph-break registry ids GBxxxx in the explanation (2.7+),
`inductor_output_code` with its filename and `inductor_collective_schedule` (2.6+). A release without one of
them just leaves that part empty.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from denpex.ingest.torch_trace import Record, TraceFile
from denpex.trace_model import (
    TraceCompileOut,
    TraceEvidenceOut,
    TraceGraphBreakOut,
    TraceRankOut,
    TraceRecompileOut,
)

_GB_ID = re.compile(r"\b[Gg][Bb](\d{4})\b")
_USER_AT = re.compile(r"Graph break (?:in user code )?at (?P<at>\S+:\d+)")
_EXCEPTION = re.compile(r"^(?P<name>[A-Za-z_][\w.]*(?:Error|Exception|Unsupported|Interrupt|Exit|Failure|Warning)"
                        r"|[a-z_][\w]*(?:\.[A-Za-z_]\w*)+):\s?(?P<message>.*)$")
_RECOMPILE_LIMIT = re.compile(r"(?:recompile|cache_size)[ _]limit exceeded(?:.*?\(currently set to (\d+)\))?",
                              re.IGNORECASE | re.DOTALL)
_CLASS_REPR = re.compile(r"<class '([\w.]+)'>")
_CACHE_ARTIFACT = re.compile(r"_cache_(?:hit|miss|bypass)$")
MAX_DIVERGENCES = 20
MAX_SHOWN = 500  # a reason or message kept in the summary is cut here (fail_reason can be pages long)


def _first(text: object) -> str:
    line = str(text).strip().split("\n", 1)[0] if text else ""
    return line if len(line) <= MAX_SHOWN else line[:MAX_SHOWN] + "…"


def exception_line(traceback: str) -> tuple[int, str] | None:
    """(index, text) of the last exception line of a (chained) Python traceback: what was finally raised."""
    lines = traceback.split("\n")
    found: tuple[int, str] | None = None
    in_frames = False
    for index, line in enumerate(lines):
        if line.startswith("Traceback (most recent call last):"):
            in_frames = True
            continue
        if in_frames and line and not line.startswith(" ") and _EXCEPTION.match(line):
            found, in_frames = (index, line), False
    return found


@dataclass(slots=True)
class Failure:
    """A compile failure the trace recorded, and the line (of trace file) to show for it."""

    compile_id: str | None
    text: str  # `torch._dynamo.exc.UserError: Could not guard ...`: the exception as the log would print it
    line: int
    source: str  # dynamo_error | compilation_metrics


@dataclass(slots=True)
class RankTrace:
    """One trace file digested; `out` is its JSON form."""

    file: TraceFile
    out: TraceRankOut
    failures: list[Failure] = field(default_factory=list)
    graph_break_lines: list[tuple[int, str]] = field(default_factory=list)  # (line, text) for the catalog


def _class_name(fail_type: str) -> str:
    """2.2-2.5 wrote `str(type(e))`, `<class 'torch._dynamo.exc.UserError'>`; later releases the bare name."""
    match = _CLASS_REPR.fullmatch(fail_type.strip())
    return match.group(1) if match else fail_type


def _frame(body: dict[str, object]) -> str | None:
    name, filename, line = body.get("co_name"), body.get("co_filename"), body.get("co_firstlineno")
    if not name:
        return None
    return f"{name} at {filename}:{line}" if filename else str(name)


def _user_frame(body: dict[str, object]) -> str | None:
    filename, line = body.get("fail_user_frame_filename"), body.get("fail_user_frame_lineno")
    return f"{filename}:{line}" if filename else None


class _Digest:
    def __init__(self, trace: TraceFile) -> None:
        self.trace = trace
        self.out = TraceRankOut(rank=trace.rank, file=trace.name, records=len(trace.records),
                                bad_records=trace.bad_records)
        self.rank = RankTrace(trace, self.out)
        self.compiles: dict[str, TraceCompileOut] = {}
        self.output_code: dict[str, str] = {}
        self.errored: set[str | None] = set()
        self.strings: dict[int, str] = {}

    def run(self) -> RankTrace:
        attempts: dict[str, int] = {}
        for record in self.trace.records:
            handler = getattr(self, f"_on_{record.kind}", None)
            if handler is not None:
                handler(record)
            attempt, cid = record.meta.get("attempt"), record.compile_id()
            if isinstance(attempt, int) and cid is not None:
                base = cid.split("_", 1)[0]
                attempts[base] = max(attempts.get(base, 1), attempt + 1)
        for cid, count in attempts.items():
            if cid in self.compiles:
                self.compiles[cid].attempts = count
        for cid, path in self.output_code.items():
            if cid in self.compiles:
                self.compiles[cid].output_code = path
        self.out.compiles = list(self.compiles.values())
        return self.rank

    def _compile(self, cid: str, line: int) -> TraceCompileOut:
        if cid not in self.compiles:
            self.compiles[cid] = TraceCompileOut(compile_id=cid, function=None, status="unfinished", line=line)
        return self.compiles[cid]

    def _on_str(self, record: Record) -> None:
        """Interned file names (`{"str": [path, index]}`) that stack frames refer to by index."""
        value = record.meta.get("str")
        if isinstance(value, list) and len(value) == 2 and isinstance(value[1], int):
            self.strings[value[1]] = str(value[0])

    def _on_dynamo_start(self, record: Record) -> None:
        cid = record.compile_id()
        if cid is None:
            return
        compile_out = self._compile(cid.split("_", 1)[0], record.line)
        stack = record.body.get("stack")
        if isinstance(stack, list) and stack and isinstance(stack[-1], dict):
            top = stack[-1]
            name = top.get("filename")
            filename = self.strings.get(name, str(name)) if isinstance(name, int) else str(name)
            compile_out.started_at = f"{filename}:{top.get('line')} in {top.get('name')}"

    def _on_compilation_metrics(self, record: Record) -> None:
        body = record.body
        cid = body.get("compile_id") if isinstance(body.get("compile_id"), str) else record.compile_id()
        if not isinstance(cid, str):
            return
        compile_out = self._compile(cid, record.line)
        compile_out.function = compile_out.function or _frame(body)
        fail_type = body.get("fail_type")
        if not fail_type:
            compile_out.status = "ok"
        else:
            compile_out.status = "failed"
            fail_type = _class_name(str(fail_type))
            compile_out.fail_type = fail_type.rsplit(".", 1)[-1]
            compile_out.fail_reason = _first(body.get("fail_reason"))
            compile_out.user_frame = _user_frame(body)
            limit = _RECOMPILE_LIMIT.search(str(body.get("fail_reason")))
            if limit is not None:  # Dynamo falls back to eager: the log's warning wording, which the catalog knows
                text = f"torch._dynamo hit config.recompile_limit ({limit.group(1) or '?'})"
                self._failure(cid, text, record.line, "compilation_metrics")
            elif cid not in self.errored:
                self._failure(cid, self._raised(body) or f"{fail_type}: {compile_out.fail_reason}", record.line,
                              "compilation_metrics")

    @staticmethod
    def _raised(body: dict[str, object]) -> str | None:
        stacks = body.get("exception_stack_trace")
        if isinstance(stacks, list) and stacks and isinstance(stacks[-1], str):
            found = exception_line(stacks[-1])
            return found[1] if found else None
        return None

    def _failure(self, cid: str | None, text: str, line: int, source: str) -> None:
        self.rank.failures.append(Failure(cid, text, line, source))
        self.out.failures.append(TraceEvidenceOut(file=self.trace.name, line=line, rank=self.out.rank,
                                                  text=_first(text)))

    def _graph_break(self, cid: str | None, text: str, line: int) -> None:
        gb = _GB_ID.search(text)
        at = _USER_AT.search(text)
        reason_lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
        reason = next((ln.split(":", 1)[1].strip() for ln in reason_lines if ln.startswith("Graph Break Reason:")),
                      reason_lines[0] if reason_lines else "")
        detail = next((ln for ln in reason_lines[1:] if ln.startswith("Unsupported") or ln.startswith("Explanation")),
                      None)
        self.out.graph_breaks.append(TraceGraphBreakOut(
            compile_id=cid, gb_id=f"GB{gb.group(1)}" if gb else None,
            reason=_first(f"{reason} {detail}" if detail else reason), user_frame=at.group("at") if at else None,
            line=line,
        ))

    def _on_artifact(self, record: Record) -> None:
        name = str(record.body.get("name", ""))
        payload = record.payload or ""
        cid = record.compile_id()
        if _CACHE_ARTIFACT.search(name):
            self.out.cache[name] = self.out.cache.get(name, 0) + 1
        elif name == "dynamo_graph_break_reason":
            self._graph_break(cid, payload, record.payload_line or record.line)
            for offset, text in enumerate(payload.split("\n")[:12]):
                if text.strip():
                    self.rank.graph_break_lines.append(((record.payload_line or record.line) + offset, text))
        elif name == "recompile_reasons":
            self.out.recompiles.append(TraceRecompileOut(compile_id=cid, reasons=_reasons(payload),
                                                         line=record.line))
        elif name == "dynamo_error":
            found = exception_line(payload)
            if found is not None:
                self.errored.add(cid.split("_", 1)[0] if cid else None)
                self._failure(cid, found[1], (record.payload_line or record.line) + found[0], "dynamo_error")
        elif name == "inductor_collective_schedule":
            schedule = _json_list(payload)
            if schedule is not None:
                self.out.collective_schedules.append([str(op) for op in schedule])

    def _on_inductor_output_code(self, record: Record) -> None:
        path = record.body.get("filename") or record.body.get("file_path")
        cid = record.compile_id()
        if not isinstance(path, str) and record.payload_line:  # writing it failed: the code is in the trace only
            path = f"{self.trace.name}:{record.payload_line} (in the trace only)"
        if isinstance(path, str) and cid is not None:
            self.output_code[cid.split("_", 1)[0]] = path


def _json_list(payload: str) -> list[object] | None:
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    return value if isinstance(value, list) else None


def _reasons(payload: str) -> list[str]:
    """recompile_reasons is a JSON list, or (one reason) the bare text."""
    listed = _json_list(payload)
    if listed is not None:
        return [_first(r) for r in listed]
    return [_first(payload)] if payload.strip() else []


def digest(trace: TraceFile) -> RankTrace:
    return _Digest(trace).run()


def _ranks_text(ranks: list[int | None]) -> str:
    shown = [str(r) for r in ranks]
    return ("rank " if len(shown) == 1 else "ranks ") + ", ".join(shown)


def divergences(ranks: list[RankTrace]) -> list[str]:
    """How ranks' traces differ (SPMD ranks should compile the same graphs, hit the same caches)."""
    by_rank = {r.out.rank: r.out for r in ranks if r.out.rank is not None}
    if len(by_rank) < 2:
        return []
    out: list[str] = []
    order = sorted(by_rank)
    ids = {rank: {c.compile_id for c in by_rank[rank].compiles} for rank in order}
    every = set.union(*ids.values())
    for cid in sorted(every):
        missing = [r for r in order if cid not in ids[r]]
        if missing:
            out.append(f"compile {cid} is on {_ranks_text([r for r in order if r not in missing])} only, "
                       f"not on {_ranks_text(missing)}")
    for cid in sorted(set.intersection(*ids.values())):
        status = {r: next(c for c in by_rank[r].compiles if c.compile_id == cid) for r in order}
        failed = [r for r in order if status[r].status == "failed"]
        if failed and len(failed) < len(order):
            others = ", ".join(f"rank {r}: {status[r].status}" for r in order if r not in failed)
            out.append(f"compile {cid} failed on {_ranks_text(failed)} ({status[failed[0]].fail_type}); {others}")
    for family in sorted({name.rsplit("_cache_", 1)[0] for r in order for name in by_rank[r].cache}):
        hit = [r for r in order if by_rank[r].cache.get(f"{family}_cache_hit")]
        miss = [r for r in order if by_rank[r].cache.get(f"{family}_cache_miss")]
        only_hit, only_miss = [r for r in hit if r not in miss], [r for r in miss if r not in hit]
        if only_hit and only_miss:
            out.append(f"{family} cache: hit on {_ranks_text(only_hit)}, miss on {_ranks_text(only_miss)}")
    schedules = {r: by_rank[r].collective_schedules for r in order if by_rank[r].collective_schedules}
    if len({json.dumps(s) for s in schedules.values()}) > 1:
        first = order[0] if order[0] in schedules else next(iter(schedules))
        differ = [r for r in schedules if schedules[r] != schedules[first]]
        out.append(f"collective schedules differ: {_ranks_text(differ)} vs rank {first} "
                   f"({_schedule(schedules[differ[0]])} vs {_schedule(schedules[first])})")
    breaks = {r: len(by_rank[r].graph_breaks) for r in order}
    if len(set(breaks.values())) > 1:
        out.append("graph breaks per rank differ: " + ", ".join(f"rank {r}: {n}" for r, n in breaks.items()))
    if len(out) > MAX_DIVERGENCES:  # 512 ranks that each compiled their own graphs must not fill the report
        out = [*out[:MAX_DIVERGENCES], f"… and {len(out) - MAX_DIVERGENCES} more differences"]
    return out


def _schedule(graphs: list[list[str]]) -> str:
    flat = [op for graph in graphs for op in graph]
    return " → ".join(flat[:6]) + (" …" if len(flat) > 6 else "")
