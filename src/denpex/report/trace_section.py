"""The few lines every renderer shows for `torch_trace`: per rank, then the divergences and the agreement."""

from __future__ import annotations

from denpex.trace_model import TorchTraceOut, TraceRankOut

_AGREEMENT = {
    "confirms": "the trace confirms the root cause",
    "supplies": "the root cause comes from the trace (the plain logs name no failure)",
    "differs": "the trace names a different failure (see its evidence in the JSON report)",
    "trace_only": "diagnosed from the trace alone",
    "silent": "the trace records no compile failure",
}


def _rank_line(rank: TraceRankOut) -> str:
    who = f"rank {rank.rank}" if rank.rank is not None else "trace"
    failed = [c for c in rank.compiles if c.status == "failed"]
    parts = [f"{len(rank.compiles)} compile(s)"]
    if failed:
        parts.append("failed: " + ", ".join(f"{c.compile_id} {c.fail_type}" for c in failed[:3]))
    if rank.graph_breaks:
        ids = sorted({g.gb_id for g in rank.graph_breaks if g.gb_id})
        parts.append(f"{len(rank.graph_breaks)} graph break(s)" + (f" ({', '.join(ids)})" if ids else ""))
    if rank.recompiles:
        parts.append(f"{len(rank.recompiles)} recompile(s)")
    hits = sum(n for k, n in rank.cache.items() if k.endswith("_hit"))
    misses = sum(n for k, n in rank.cache.items() if k.endswith("_miss"))
    if hits or misses:
        parts.append(f"cache {hits} hit / {misses} miss")
    if rank.bad_records:
        parts.append(f"{rank.bad_records} unreadable record(s)")
    return f"{who}: " + "; ".join(parts)


def summary_lines(trace: TorchTraceOut) -> list[str]:
    lines = [_AGREEMENT.get(trace.agreement, trace.agreement)]
    lines += [_rank_line(rank) for rank in trace.ranks]
    lines += [f"differs across ranks: {d}" for d in trace.divergences]
    for rank in trace.ranks:
        for c in rank.compiles:
            if c.output_code and c.status == "failed":
                lines.append(f"output code of {c.compile_id}: {c.output_code}")
    return lines
