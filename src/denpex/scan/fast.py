"""The fast path: scan inputs for candidates (in worker processes), frame only the regions around them.

Used for inputs over api.FAST_PATH_BYTES; tests prove it gives the line path's diagnosis on the corpus.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator

from denpex.analyze.collect import AFTER_LINES, Collector
from denpex.ingest import Source
from denpex.ingest.framed_text import Frame, open_text
from denpex.ingest.gzip_members import member_index
from denpex.ingest.host_column import host_tagged
from denpex.ingest.lines import build_line, shown_bytes, source_bytes
from denpex.ingest.reading import Reading
from denpex.ingest.xz_blocks import block_index
from denpex.ingest.zstd_frames import frame_index, is_zstd_error
from denpex.model import RankState
from denpex.scan import parallel
from denpex.scan.allocator import keep_freed_buffers
from denpex.scan.engines import best_engine
from denpex.scan.newlines import use_numpy_for
from denpex.scan.parallel import FileScan
from denpex.scan.regions import Region, RegionFinder
from denpex.scan.repeats import RepeatFilter, repeat_key

PARALLEL_FILE_BYTES = 64 << 20  # one plain file at least this big is split across cores


def _scan_source(job: tuple[Source, int, int]) -> FileScan:
    """One input through the region finder (run in a worker process for many-file inputs)."""
    source, before, after = job
    assert parallel._ENGINE is not None
    repeats = RepeatFilter()
    finder = RegionFinder(parallel._ENGINE, before=before, after=after, repeats=repeats)
    found = []
    reading = Reading(source.name)
    for chunk in source_bytes(source, parallel.CHUNK_BYTES, reading):
        found.extend(finder.feed(chunk))
        parallel.report(len(chunk))
    found.extend(finder.finish())
    return FileScan(found, finder.stats.lines_total, finder.stats.ranks, finder.stats.candidates, repeats.skipped,
                    reading, finder.stats.world_size)


def _text_frames(source: Source) -> list[Frame] | None:
    """The index of a .zst of several sized frames (ingest.zstd_frames), a .gz of several members
    (ingest.gzip_members) or an .xz of several blocks (ingest.xz_blocks): it can be split like a plain file."""
    if source.path is None or source.compression not in ("zstd", "gzip", "xz"):
        return None
    size = os.path.getsize(source.path)
    if source.compression == "gzip":
        return member_index(str(source.path), size)
    if source.compression == "xz":
        return block_index(str(source.path), size)
    return frame_index(str(source.path), size)


def _splittable(source: Source, frames: list[Frame] | None) -> bool:
    """A plain file, or a .zst, .gz or .xz with an index, can be cut into byte ranges of its text; other compressed
    input and UTF-16 are read as one stream."""
    if source.path is None or (source.compression is not None and frames is None):
        return False
    size = source.size_hint() if frames is None else frames[-1].text_start + frames[-1].text_size
    if size < PARALLEL_FILE_BYTES:
        return False
    with open_text(str(source.path), frames) as handle:
        return handle.read(2) not in (b"\xff\xfe", b"\xfe\xff")


def _split_scan(source: Source, context: int, after: int, workers: int) -> FileScan | None:
    """One file over `workers` processes; None when a compressed file turns out damaged inside a frame or member,
    or a gzip member not what its index said (read as one stream instead, which reads up to any damage and says
    where it stopped)."""
    assert parallel._ENGINE is not None
    frames = _text_frames(source)
    if frames is None:
        if not _splittable(source, None):
            return None
        assert source.path is not None
        return parallel.scan_file(str(source.path), parallel._ENGINE, context, after, workers)  # regions stream
    try:
        if not _splittable(source, frames):
            return None
        scan = parallel.scan_file(str(source.path), parallel._ENGINE, context, after, workers, frames)
        scan.regions = list(scan.regions)  # a damaged frame or member fails here, before any region is analysed
    except Exception as exc:
        if not isinstance(exc, (parallel.WorkerFailed, OSError, EOFError)) and not is_zstd_error(exc):
            raise
        parallel._ENGINE = parallel._ENGINE.fresh()  # the failed shares' ranks were never reported
        return None
    return scan


def _admitted_lines(region: Region, raws: list[bytes], across_shares: RepeatFilter) -> dict[int, int] | None:
    """Which lines of a region to match (index -> repeat key); None when it holds candidates but all of them
    copy lines analysed in an earlier share of the file (a worker knows only its own share): the parent
    counts them, as one process would have done, and skips the region. A hit line with colour codes or
    carriage returns is a candidate only if its shown text is (ingest.lines.shown_bytes), as on the line path."""
    admitted: dict[int, int] = {}
    hits = iter(region.hits)  # sorted end offsets: only lines holding one can hit the catalog
    hit = next(hits, None)
    line_start = region.start
    candidates = 0
    for i, raw in enumerate(raws):
        if hit is None:
            break
        line_end = line_start + len(raw)  # offset of its newline
        candidate = False
        while hit is not None and hit <= line_end:
            candidate = candidate or hit > line_start
            hit = next(hits, None)
        if candidate and (b"\x1b" in raw or b"\r" in raw):
            assert parallel._ENGINE is not None
            candidate = bool(parallel._ENGINE.scan(shown_bytes(raw), ranks=False).candidates)
        if candidate:
            candidates += 1
            key = repeat_key(raw)
            if across_shares.admit(key):
                admitted[i] = key
        line_start = line_end + 1
    return None if candidates and not admitted else admitted


def feed(sources: list[Source], collector: Collector, engine_name: str, context: int, workers: int,
         progress: Callable[[int], None] | None = None, host_columns: dict[str, bool] | None = None) -> int:
    """Frame only the regions around candidates and feed them to the collector; returns the lines read.

    Line numbers and order stay those of the full stream, so the diagnosis is the line path's.
    """
    keep_freed_buffers()
    parallel.set_progress(progress)
    use_numpy_for(sum(source.size_hint() for source in sources))
    parallel._ENGINE = best_engine(collector.catalog, engine_name).fresh()
    after = max([AFTER_LINES] + [d.within for e in collector.catalog.entries for d in e.details])
    split = _split_scan(sources[0], context, after, workers) if len(sources) == 1 and workers > 1 else None
    if split is not None:
        scans: Iterator[FileScan] = iter([split])
    else:
        scans = parallel.map_files(_scan_source, [(s, context, after) for s in sources], workers)  # type: ignore[assignment]
    base = 0
    many = len(sources) > 1 and workers > 1
    for source, scan in zip(sources, scans, strict=True):
        if many:  # scanned in a pool: its progress is the files that came back
            parallel.report(source.size_hint())
        year: int | None = None
        tagged = host_columns[source.name] if host_columns and source.name in host_columns else host_tagged(source)
        last_end = -1
        across_shares = RepeatFilter()
        for region in scan.regions:
            raws = region.data.split(b"\n")
            if raws and raws[-1] == b"":
                raws.pop()
            admitted = _admitted_lines(region, raws, across_shares)
            if admitted is None:  # its only candidates copy lines of an earlier share: one process frames none
                continue
            if region.start > last_end:  # lines were skipped: no traceback spans the gap
                collector.gap(source.name)
            last_end = region.end
            for i, raw in enumerate(raws):
                number = region.first_line + i
                line = build_line(raw, source.name, number, base + number, source.rank_hint, year, source.time_hint,
                                  host_column=tagged)
                year = line.year
                key = admitted.get(i)
                collector.feed(line, key is not None, key)
        if scan.reading is not None:
            scan.reading.name = source.name
            collector.result.notes.extend(scan.reading.notes())
        collector.note_world_size(scan.world_size)
        collector.add_repeats(source.name, scan.skipped)
        collector.add_repeats(source.name, across_shares.skipped)
        for rank in scan.ranks | ({source.rank_hint} if source.rank_hint is not None else set()):
            collector.result.ranks.setdefault(rank, RankState(rank=rank))
        base += scan.lines_total
    parallel.set_progress(None)
    return base
