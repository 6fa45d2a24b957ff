"""Which ranks a report's rank table lists, and how a rank's line reads in a cell (terminal and Markdown)."""

from __future__ import annotations

import re

from denpex.report.json_schema import DiagnosisOut, EvidenceOut, RankOut
from denpex.report.shorten import cut

CELL_CHARS = 160  # a cell's text, before a terminal table cuts it to its column
_RANK_PREFIX = re.compile(r"^(?:\s*\[(?:default|rank)\d+\]:)+\s*")  # torchrun's --tee prefixes: the row says it


def cell_text(ev: EvidenceOut | None) -> str:
    """A rank's line as a table cell: its text without torchrun's rank prefixes, cut with "…"."""
    if ev is None:
        return "-"
    return cut(_RANK_PREFIX.sub("", ev.text).strip() or ev.text.strip(), CELL_CHARS)


def interesting_ranks(report: DiagnosisOut, limit: int) -> list[RankOut]:
    """Every rank when they fit in `limit` rows, else the initiating rank and the ranks with errors (`limit`)."""
    if len(report.ranks) <= limit:
        return report.ranks
    root_rank = report.root_cause.rank if report.root_cause else None
    picked = [r for r in report.ranks if r.rank == root_rank]
    picked += [r for r in report.ranks if r.first_error is not None and r.rank != root_rank]
    return sorted((picked or report.ranks)[:limit], key=lambda r: r.rank)
