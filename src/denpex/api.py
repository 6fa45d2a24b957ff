"""The public Python API: `diagnose(paths_or_text) -> Diagnosis`."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path

from denpex.analyze.collect import AFTER_LINES, Collector
from denpex.analyze.rank import decide
from denpex.catalog import Catalog, load
from denpex.ingest import Source, check_readable, frame, resolve, text_source
from denpex.ingest.lines import build_line, source_bytes
from denpex.model import Diagnosis, Line, RankState
from denpex.scan.parallel import FileScan, cores

DEFAULT_CONTEXT = 100
# Below this many bytes the simple path (every line through the matcher, ~25 us a line) is as fast as
# building the scanner and starts sooner. Compressed inputs count at an assumed 8x ratio.
FAST_PATH_BYTES = 1 << 20
_COMPRESSION_RATIO = 8
FAST_CHUNK_BYTES = 4 << 20  # bytes scanned at a time: small enough that counting newlines hits the CPU cache
PARALLEL_FILE_BYTES = 64 << 20  # one plain file at least this big is split across cores
ENGINES = ("auto", "lines", "hyperscan", "re2", "python")


def _sources(paths_or_text: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[Source]:
    if isinstance(paths_or_text, os.PathLike):
        return resolve([os.fspath(paths_or_text)])
    if isinstance(paths_or_text, str):
        if "\n" not in paths_or_text and _is_path(paths_or_text):
            return resolve([paths_or_text])
        return [text_source(paths_or_text)]
    return resolve([os.fspath(p) for p in paths_or_text])


def _is_path(text: str) -> bool:
    try:
        return Path(text).exists()
    except (OSError, ValueError):  # too long for a file name, or a NUL byte: it is text
        return False


def _all_lines(sources: list[Source]) -> Iterator[Line]:
    seq = 0
    for source in sources:
        for line in frame(source, start_seq=seq):
            seq = line.seq
            yield line


def _size(source: Source) -> int:
    if source.data is not None:
        return len(source.data)
    try:
        size = os.stat(source.path).st_size if source.path else 0
    except OSError:
        return 0
    return size * _COMPRESSION_RATIO if source.compression else size


def _scan_source(job: tuple[Source, int, int]) -> FileScan:
    """One input through the region finder (run in a worker process for many-file inputs)."""
    from denpex.scan import parallel
    from denpex.scan.regions import RegionFinder

    source, before, after = job
    assert parallel._ENGINE is not None
    finder = RegionFinder(parallel._ENGINE, before=before, after=after)
    found = []
    for chunk in source_bytes(source, FAST_CHUNK_BYTES):
        found.extend(finder.feed(chunk))
    found.extend(finder.finish())
    return FileScan(found, finder.stats.lines_total, finder.stats.ranks, finder.stats.candidates)


def _splittable(source: Source) -> bool:
    """A plain file can be cut into byte ranges; compressed or UTF-16 input is read as one stream."""
    if source.path is None or source.compression is not None or _size(source) < PARALLEL_FILE_BYTES:
        return False
    with open(source.path, "rb") as handle:
        return handle.read(2) not in (b"\xff\xfe", b"\xfe\xff")


def _fast_feed(sources: list[Source], collector: Collector, engine_name: str, context: int, workers: int) -> int:
    """Frame only the regions around candidates; line numbers and order stay those of the full stream."""
    from denpex.scan import parallel
    from denpex.scan.engines import best_engine

    parallel._ENGINE = best_engine(collector.catalog, engine_name)
    after = max([AFTER_LINES] + [d.within for e in collector.catalog.entries for d in e.details])
    if len(sources) == 1 and workers > 1 and _splittable(sources[0]):
        assert sources[0].path is not None
        scans: Iterator[FileScan] = iter(
            [parallel.scan_file(str(sources[0].path), parallel._ENGINE, context, after, workers)]
        )
    else:
        scans = parallel.map_files(_scan_source, [(s, context, after) for s in sources], workers)  # type: ignore[assignment]
    base = 0
    for source, scan in zip(sources, scans, strict=True):
        year: int | None = None
        last_end = -1
        for region in scan.regions:
            if region.start > last_end:  # lines were skipped: no traceback spans the gap
                collector.gap(source.name)
            last_end = region.end
            raws = region.data.split(b"\n")
            if raws and raws[-1] == b"":
                raws.pop()
            hits = iter(region.hits)  # sorted end offsets: only lines holding one can hit the catalog
            hit = next(hits, None)
            line_start = region.start
            for i, raw in enumerate(raws):
                line_end = line_start + len(raw)  # offset of its newline
                candidate = False
                while hit is not None and hit <= line_end:
                    candidate = candidate or hit > line_start
                    hit = next(hits, None)
                number = region.first_line + i
                line = build_line(raw, source.name, number, base + number, source.rank_hint, year)
                year = line.year
                collector.feed(line, match=candidate)
                line_start = line_end + 1
        for rank in scan.ranks | ({source.rank_hint} if source.rank_hint is not None else set()):
            collector.result.ranks.setdefault(rank, RankState(rank=rank))
        base += scan.lines_total
    return base


def diagnose_sources(
    sources: list[Source],
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
    engine: str = "auto",
    workers: int | None = None,
) -> Diagnosis:
    """Diagnose already-resolved sources (the CLI resolves them itself to report bad input early).

    engine: "lines" runs every line through the matcher; "hyperscan", "re2" or "python" scan
    big buffers for candidates first; "auto" picks the fast path for inputs over FAST_PATH_BYTES.
    workers: processes for the fast path (default: every core); 1 keeps everything in this process.
    """
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {ENGINES}")
    for source in sources:
        check_readable(source)
    collector = Collector(catalog or load(), context=context)
    fast = engine != "lines" and (engine != "auto" or sum(_size(s) for s in sources) >= FAST_PATH_BYTES)
    if fast:
        lines_read = _fast_feed(sources, collector, engine, context, workers or cores())
        collection = collector.finish()
        collection.lines_read = lines_read
    else:
        collection = collector.feed_all(_all_lines(sources))
    diagnosis = decide(collection, collector.catalog, [s.name for s in sources])
    if fast:
        diagnosis.notes.append(
            "fast scan: only the lines around findings were parsed, so per-rank line counts and "
            "last healthy lines cover those regions only"
        )
    return diagnosis


def diagnose(
    paths_or_text: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    *,
    context: int = DEFAULT_CONTEXT,
    catalog: Catalog | None = None,
    engine: str = "auto",
    workers: int | None = None,
) -> Diagnosis:
    """Diagnose log files, directories of per-rank logs, compressed logs, or a pasted log given as text.

    A str is read as a path when it names an existing file or directory, else as the log's text.
    Raises denpex.errors.DenpexInputError for unreadable, empty or binary input.
    """
    return diagnose_sources(
        _sources(paths_or_text), context=context, catalog=catalog, engine=engine, workers=workers
    )
