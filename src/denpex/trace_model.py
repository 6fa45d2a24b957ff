"""The JSON shape of `torch_trace`: what the job's TORCH_TRACE files said, per rank and across ranks.

Plain data only, beside model.py: the analysis fills it (analyze.trace_summary, trace_merge) and the report
reads it (json_schema, the renderers), so neither layer imports the other; the report prints it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_CONFIG: dict[str, Any] = {"use_attribute_docstrings": True}


@dataclass
class TraceEvidenceOut:
    __pydantic_config__ = _CONFIG
    file: str
    line: int
    """1-based line of the record (or payload line) in the trace file"""
    rank: int | None
    text: str


@dataclass
class TraceCompileOut:
    __pydantic_config__ = _CONFIG
    compile_id: str
    """frame/compile as torch prints it (`0/1`); `_N` marks attempt N"""
    function: str | None
    """the compiled code object's name and place (`forward at job.py:38`)"""
    status: str
    """ok | failed | unfinished (started, no compilation_metrics)"""
    started_at: str | None = None
    """the innermost frame of dynamo_start's stack: `file:line in name`, the code Dynamo began to compile"""
    attempts: int = 1
    """compile attempts (Dynamo restarts an analysis after some graph breaks)"""
    fail_type: str | None = None
    fail_reason: str | None = None
    """its first line"""
    user_frame: str | None = None
    """file:line of the user code that failed, as compilation_metrics names it"""
    output_code: str | None = None
    """the Inductor output code's path (inductor_output_code) of this compile, when it was written"""
    line: int = 0


@dataclass
class TraceGraphBreakOut:
    __pydantic_config__ = _CONFIG
    compile_id: str | None
    gb_id: str | None
    """Dynamo's graph-break registry id (GB0124; 2.7+), see `denpex explain GBxxxx`"""
    reason: str
    user_frame: str | None
    line: int


@dataclass
class TraceRecompileOut:
    __pydantic_config__ = _CONFIG
    compile_id: str | None
    reasons: list[str]
    line: int


@dataclass
class TraceRankOut:
    __pydantic_config__ = _CONFIG
    rank: int | None
    file: str
    records: int
    compiles: list[TraceCompileOut] = field(default_factory=list)
    graph_breaks: list[TraceGraphBreakOut] = field(default_factory=list)
    recompiles: list[TraceRecompileOut] = field(default_factory=list)
    failures: list[TraceEvidenceOut] = field(default_factory=list)
    """dynamo_error tracebacks' exception lines and compilation_metrics fail_type: fail_reason"""
    cache: dict[str, int] = field(default_factory=dict)
    """artifact name -> count: fx_graph_cache_hit/miss/bypass, aotautograd_cache_hit/miss/bypass, ..."""
    collective_schedules: list[list[str]] = field(default_factory=list)
    """inductor_collective_schedule per graph, in order"""
    bad_records: int = 0
    """records skipped because their JSON did not parse (a cut-off or corrupted file)"""


@dataclass
class TorchTraceOut:
    __pydantic_config__ = _CONFIG
    files: list[str]
    ranks: list[TraceRankOut]
    divergences: list[str]
    """how the ranks' traces differ: compile ids, failures, cache hits and misses, collective schedules"""
    agreement: str
    """confirms | supplies | differs | trace_only | silent: how the trace's failure relates to the root cause
    found in the plain logs (silent: the trace records no failure)"""
    evidence: list[TraceEvidenceOut]
    """the trace lines behind its failure, first the one that matches the root cause"""
