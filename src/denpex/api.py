"""The public Python API: `diagnose(paths_or_text) -> Diagnosis`."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

from denpex.analyze.collect import Collector
from denpex.analyze.decide import decide
from denpex.analyze.extra_inputs import ExtraInputs
from denpex.analyze.line_feed import LineFeed
from denpex.catalog import Catalog, load
from denpex.errors import DenpexInputError
from denpex.ingest import Source, check_readable, resolve, text_source
from denpex.ingest.clock_span import clock_span
from denpex.ingest.lines import framed
from denpex.ingest.node_trees import global_ranks
from denpex.ingest.rank_column import RankColumn, columns_of
from denpex.ingest.reading import Reading
from denpex.ingest.torch_trace import split_traces
from denpex.model import Diagnosis

DEFAULT_CONTEXT = 100
# Below this many bytes the simple path (every line through the matcher, 7-25 us a line) costs little and
# starts sooner: a pasted traceback never imports the fast path (denpex.scan.fast). Above it the fast path
# wins even on small logs (the corpus: 0.38 vs 0.47 CPU s), and only it collapses repeated lines: 1 MB of
# 2-byte lines took the simple path 3.3 s, the fast path 6 ms.
FAST_PATH_BYTES = 64 << 10
ENGINES = ("auto", "lines", "hyperscan", "re2", "python")


_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".gz", ".zst", ".bz2", ".xz", ".json", ".jsonl", ".ndjson")


def _sources(paths_or_text: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Source]:
    if isinstance(paths_or_text, os.PathLike):
        return resolve([os.fspath(paths_or_text)])
    if isinstance(paths_or_text, str):
        if "\n" not in paths_or_text and _is_path(paths_or_text):
            return resolve([paths_or_text])
        if _looks_like_a_path(paths_or_text):  # a typo in a path must not be diagnosed as a one-line log
            raise DenpexInputError(f"no such file or directory: {paths_or_text} (pass text=... for log text)")
        return [text_source(paths_or_text)]
    return resolve([os.fspath(p) for p in paths_or_text])


def _looks_like_a_path(text: str) -> bool:
    """One word with a folder separator or a log file's suffix: `/nonexistent/train.log`, `rank3.log.gz`."""
    word = text.strip()
    return bool(word) and not any(c.isspace() for c in word) and (
        "/" in word or "\\" in word or word.lower().endswith(_LOG_SUFFIXES)
    )


def _is_path(text: str) -> bool:
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # too long for a file name, or a NUL byte: it is text
        return False


def _feed_lines(sources: list[Source], collector: Collector, seq: int = 0,
                layouts: dict[str, tuple[bool, RankColumn | None]] | None = None) -> int:
    """Every line through the collector; the fast path's candidate lines are the ones matched, and their
    repeats are counted, not analysed (scan.repeats), as on the fast path. Returns the lines read."""
    for source in sources:
        lines = LineFeed(collector, source.name)
        reading = Reading(source.name)
        for raw, line in framed(source, start_seq=seq, reading=reading, columns=(layouts or {}).get(source.name)):
            seq = line.seq
            lines.feed(raw, line)
        lines.close()
        collector.result.notes.extend(reading.notes())
    return seq


def diagnose_sources(
    sources: list[Source],
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
    engine: str = "auto",
    workers: int | None = None,
    progress: Callable[[int], None] | None = None,
    baselines: list[list[Source]] | None = None,
    torch_trace: bool = True,
) -> Diagnosis:
    """Diagnose already-resolved sources (the CLI resolves them itself to report bad input early).

    engine: "lines" runs every line through the matcher; "hyperscan", "re2" or "python" scan
    big buffers for candidates first; "auto" picks the fast path for inputs over FAST_PATH_BYTES.
    workers: processes for the fast path (default: every core); 1 keeps everything in this process.
    progress: told the bytes scanned as the fast path goes (the CLI's progress bar).
    baselines: healthy runs of the same job to compare with (analyze.annotate), each a list of sources.
    torch_trace: read TORCH_TRACE files among the sources as traces (analyze.trace_merge), never as log text.
    """
    plain, traces = split_traces(sources) if torch_trace else (sources, [])
    if traces:
        from denpex.analyze.trace_merge import diagnose_with_traces

        catalog = catalog or load()
        return diagnose_with_traces(plain, traces, lambda s: diagnose_sources(
            s, context=context, catalog=catalog, engine=engine, workers=workers, progress=progress,
            baselines=baselines if s is plain else None, torch_trace=False))
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}")
    for source in sources:
        check_readable(source)
    inputs = [s.name for s in sources]
    sources, tree_notes = global_ranks(sources)
    extra = ExtraInputs.read([s for s in sources if s.kind != "log"])
    sources = [s for s in sources if s.kind == "log"]
    if not sources and not extra.dumps and not extra.error_files:
        raise DenpexInputError(extra.notes[0].removeprefix("left out: "))  # nothing at all could be read
    collector = Collector(catalog or load(), context=context)
    # a launcher column learned from an input (ingest.rank_column) is read on the line path only: the fast scan finds
    # ranks by the known prefixes, and both paths must give one diagnosis
    layouts = {s.name: columns_of(s) for s in sources}  # sniffed once per input, for either path
    columns = {name: column for name, (_, column) in layouts.items() if column is not None}
    fast = engine != "lines" and not columns and (
        engine != "auto" or sum(s.size_hint() for s in sources) >= FAST_PATH_BYTES)
    if fast:
        from denpex.scan import fast as fast_path
        from denpex.scan.parallel import cores

        lines_read = fast_path.feed(sources, collector, engine, context, workers or cores(), progress,
                                    {name: tagged for name, (tagged, _) in layouts.items()})
        # error files' tracebacks go through the line path after the logs: the logs' own copy of a traceback
        # comes first, and every line of an error file carries the file's timestamp
        lines_read = _feed_lines(extra.error_sources, collector, lines_read)
        collection = collector.finish()
        collection.lines_read = lines_read
    else:
        _feed_lines(sources + extra.error_sources, collector, layouts=layouts)
        collection = collector.finish()
    collection.clock_spans = {s.name: span for s in sources if (span := clock_span(s)) is not None}
    diagnosis = decide(collection, collector.catalog, inputs)
    diagnosis.notes.extend(tree_notes)
    for shown in sorted({column.shown() for column in columns.values()}):
        named = sorted(name for name, column in columns.items() if column.shown() == shown)
        where = named[0] if len(named) == 1 else f"{len(named)} inputs ({named[0]}, ...)"
        diagnosis.notes.append(f"{where}: lines start with a launcher column `{shown}`: its number was read as the "
                               "rank of the process that printed the line")
    diagnosis.notes.extend(extra.notes)
    diagnosis.notes.extend(collection.notes)
    extra.merge(diagnosis, collector.rank_tracker.launcher_first)
    if collection.repeated_lines:
        diagnosis.notes.append(
            f"{collection.repeated_lines:,} copies of lines already analysed (same text, digits aside) were "
            "counted under the findings of their first copy, not analysed again"
        )
    if fast:
        diagnosis.notes.append(
            "fast scan: only the lines around findings were parsed, so per-rank line counts and "
            "last healthy lines cover those regions only"
        )
    from denpex.analyze.annotate import annotate

    annotate(diagnosis, sources, collector.catalog, baselines)
    return diagnosis


def diagnose(
    paths_or_text: str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None = None,
    *,
    text: str | None = None,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
    engine: str = "auto",
    workers: int | None = None,
) -> Diagnosis:
    """Diagnose log files, directories of per-rank logs, compressed logs, or a pasted log given as text.

    `text=` is the log's text, always. A positional str is read as a path when it names an existing file or
    directory; one that looks like a path (one word with a `/` or a log suffix) but does not exist raises;
    anything else is read as the log's text. Raises denpex.errors.DenpexInputError for missing, unreadable,
    empty or binary input.
    """
    if (text is None) == (paths_or_text is None):
        raise TypeError("diagnose() takes paths (or a path or text) or text=..., exactly one")
    sources = [text_source(text)] if text is not None else _sources(paths_or_text)  # type: ignore[arg-type]
    return diagnose_sources(sources, context=context, catalog=catalog, engine=engine, workers=workers)
