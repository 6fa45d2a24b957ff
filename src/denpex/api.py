"""The public Python API: `diagnose(paths_or_text) -> Diagnosis`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from denpex.analyze.collect import Collector
from denpex.analyze.rank import decide
from denpex.catalog import Catalog, load
from denpex.ingest import Source, check_readable, frame, resolve, text_source
from denpex.model import Diagnosis, Line

DEFAULT_CONTEXT = 100


def _sources(paths_or_text: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Source]:
    if isinstance(paths_or_text, os.PathLike):
        return resolve([os.fspath(paths_or_text)])
    if isinstance(paths_or_text, str):
        if "\n" not in paths_or_text and Path(paths_or_text).exists():
            return resolve([paths_or_text])
        return [text_source(paths_or_text)]
    return resolve([os.fspath(p) for p in paths_or_text])


def _lines(sources: list[Source]) -> Iterator[Line]:
    seq = 0
    for source in sources:
        for line in frame(source, start_seq=seq):
            seq = line.seq
            yield line


def diagnose_sources(
    sources: list[Source], *, context: int = DEFAULT_CONTEXT, catalog: Catalog | None = None
) -> Diagnosis:
    """Diagnose already-resolved sources (the CLI resolves them itself to report bad input early)."""
    for source in sources:
        check_readable(source)
    collector = Collector(catalog or load(), context=context)
    collection = collector.feed_all(_lines(sources))
    return decide(collection, collector.catalog, [s.name for s in sources])


def diagnose(
    paths_or_text: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
) -> Diagnosis:
    """Diagnose log files, directories of per-rank logs, compressed logs, or a pasted log given as text.

    A str is read as a path when it names an existing file or directory, else as the log's text.
    Raises denpex.errors.DenpexInputError for unreadable, empty or binary input.
    """
    return diagnose_sources(_sources(paths_or_text), context=context, catalog=catalog)
