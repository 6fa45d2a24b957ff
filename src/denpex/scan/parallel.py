"""Use every core: split one big plain file into byte ranges, or spread many files, over worker processes.

Each worker runs the candidate engine and the region finder over its share and streams back only the regions
(small) with line numbers relative to where it started reading. The parent shifts line numbers by the
newline counts of the ranges before, merges regions that touch across a range boundary, and hands them to
the analysis in file order while the workers still scan: the same regions, hence the same diagnosis, as one
process would produce, and the analysis runs beside the scan instead of after it.

A worker reads a little before its range (back context, the traceback a candidate belongs to) and past
its end (lines after a candidate), but only candidates inside its range start regions.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import select
import signal
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import BinaryIO, TypeVar

from denpex.ingest.framed_text import Frame, FramedReader, open_text
from denpex.ingest.reading import Reading
from denpex.scan.engines import CandidateEngine
from denpex.scan.newlines import count_newlines
from denpex.scan.regions import TRACEBACK_REACH, Region, RegionFinder
from denpex.scan.repeats import RepeatFilter
from denpex.scan.world_size import larger

_ENGINE: CandidateEngine | None = None  # inherited by forked workers: a compiled database is not picklable
_FRAMES: list[Frame] | None = None  # the file is a compressed one read through its index (ingest.framed_text)
_PROGRESS: tuple[Callable[[int], None], int] | None = None  # (told the bytes scanned, the pid that may tell it)
CHUNK_BYTES = 1 << 20  # bytes scanned at a time: small enough that counting newlines hits the CPU cache
_BACK_READ = 2 * TRACEBACK_REACH + (1 << 20)  # before a range: traceback reach plus room for context lines
_FORWARD_READ = 4 << 20  # past a range: room for the lines after a candidate near its end
_SEEK_BLOCK = 1 << 16  # read at a time when looking for the start of a share's first line
_QUIET_PART_BYTES = 16 << 20  # a worker with no regions to send still tells its progress this often
_PIPE_BYTES = 1 << 20  # a worker's pipe: room for its parts while the parent analyses (Linux's default limit)


@dataclass(slots=True)
class RangeResult:
    """What a share's worker knows once it is done (its regions went out before, as Parts)."""

    newlines_own: int  # newlines in [own_start, own_end)
    ranks: set[int]
    candidates: int
    skipped: dict[int, int]  # copies of analysed lines only counted, per key (scan.repeats)
    nul_bytes: int = 0  # NUL bytes in [own_start, own_end)
    first_nul: int | None = None
    world_size: int | None = None  # the largest the lines read print (scan.world_size)


def set_progress(callback: Callable[[int], None] | None) -> None:
    """Who hears of the bytes scanned from now on: this process only, not the workers it forks."""
    global _PROGRESS
    _PROGRESS = (callback, os.getpid()) if callback is not None else None


def report(scanned: int) -> None:
    """Progress from this process's scan; a forked worker stays silent (the parent speaks for the whole)."""
    if _PROGRESS is not None and os.getpid() == _PROGRESS[1]:
        _PROGRESS[0](scanned)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def split(path: str, size: int, parts: int) -> list[tuple[int, int]]:
    """Byte ranges that start and end on line boundaries."""
    bounds = [0]
    with open_text(path, _FRAMES) as handle:
        for k in range(1, parts):
            pos = _next_line_start(handle, max(size * k // parts, bounds[-1]))
            if bounds[-1] < pos < size:
                bounds.append(pos)
    bounds.append(size)
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


def _next_line_start(handle: BinaryIO | FramedReader, offset: int) -> int:
    """Where the line after the one holding `offset` starts (the file's end if none does), read a block at a time:
    readline() would hold a whole endless line (a 100 MB progress bar) in memory to find its end."""
    handle.seek(offset)
    while True:
        block = handle.read(_SEEK_BLOCK)
        if not block:
            return offset
        newline = block.find(b"\n")
        if newline >= 0:
            return offset + newline + 1
        offset += len(block)


Emit = Callable[[object], None]


@dataclass(slots=True)
class Part:
    """Regions a worker found so far (line numbers relative to read_start), sent while it goes on scanning."""

    regions: list[Region]
    scanned: int  # bytes of its own range scanned since its last part (progress)
    read_start: int
    newlines_before_own: int | None  # newlines in [read_start, own_start): known before any region is


def _scan_range(job: tuple[str, int, int, int, int, int], emit: Emit) -> RangeResult:
    """One share of the file; its regions go out through `emit` as Parts as they are found."""
    path, own_start, own_end, size, before, after = job
    assert _ENGINE is not None
    read_start = max(0, own_start - _BACK_READ)
    if read_start:
        with open_text(path, _FRAMES) as handle:  # begin on a line boundary
            read_start = min(_next_line_start(handle, read_start), own_start)
    read_end = min(size, own_end + _FORWARD_READ)
    repeats = RepeatFilter()
    finder = RegionFinder(_ENGINE, before, after, accept=(own_start - read_start, own_end - read_start),
                          repeats=repeats)
    found: list[Region] = []
    nul_bytes = 0
    first_nul: int | None = None
    scanned = 0  # own bytes scanned since the last part
    # newlines before own_start and before own_end, from the finder's running count: only the two chunks
    # that hold those offsets are counted a second time, in part
    before_own = 0 if own_start == read_start else None
    before_end = None
    with open_text(path, _FRAMES) as handle:
        handle.seek(read_start)
        pos = read_start
        for chunk in _reads(handle, read_end - read_start):
            if before_own is None and own_start <= pos + len(chunk):
                before_own = finder.lines_read + count_newlines(chunk, 0, own_start - pos)
            if before_end is None and own_end <= pos + len(chunk):
                before_end = finder.lines_read + count_newlines(chunk, 0, own_end - pos)
            own = (max(0, own_start - pos), max(0, min(len(chunk), own_end - pos)))
            nul = chunk.count(0, *own) if own[1] > own[0] and chunk.find(0, *own) >= 0 else 0  # find: memchr
            if nul:
                first_nul = first_nul if first_nul is not None else pos + chunk.index(0, *own)
                nul_bytes += nul
            scanned += max(0, own[1] - own[0])  # a chunk of the back margin holds none of the own range
            pos += len(chunk)
            found.extend(finder.feed(chunk))
            if found or scanned >= _QUIET_PART_BYTES:
                assert before_own is not None or not found, "regions start inside the own range"
                emit(Part(found, scanned, read_start, before_own))
                found, scanned = [], 0
        found.extend(finder.finish(at_end=own_end == size))
    assert before_own is not None and before_end is not None, "a range lies inside what it reads"
    if found or scanned:
        emit(Part(found, scanned, read_start, before_own))
    return RangeResult(before_end - before_own, finder.stats.ranks, finder.stats.candidates, repeats.skipped,
                       nul_bytes, first_nul, finder.stats.world_size)


def _reads(handle: BinaryIO, length: int) -> Iterator[bytes]:
    """`length` bytes from the handle's position, CHUNK_BYTES at a time."""
    while length > 0:
        chunk = handle.read(min(CHUNK_BYTES, length))
        if not chunk:
            return
        length -= len(chunk)
        yield chunk


def _merge(regions: list[Region]) -> list[Region]:
    """Regions (absolute offsets and line numbers) sorted and joined where they overlap."""
    merged: list[Region] = []
    for region in sorted(regions, key=lambda r: r.start):
        if merged and region.start <= merged[-1].end:
            last = merged[-1]
            hits = sorted(set(last.hits) | set(region.hits))
            if region.end > last.end:
                tail = region.data[last.end - region.start :]
                merged[-1] = Region(last.start, region.end, last.first_line, last.data + tail, hits)
            else:
                merged[-1] = Region(last.start, last.end, last.first_line, last.data, hits)
            continue
        merged.append(region)
    return merged


@dataclass(slots=True)
class FileScan:
    regions: Iterable[Region]  # in file order; from scan_file, as they become known (read the rest after them)
    lines_total: int
    ranks: set[int]
    candidates: int
    skipped: dict[int, int]  # copies of analysed lines only counted, per key (scan.repeats)
    reading: Reading | None = None  # what reading ran into (ingest.reading)
    world_size: int | None = None  # the largest the lines print (scan.world_size)


def scan_file(path: str, engine: CandidateEngine, before: int, after: int, workers: int,
              frames: list[Frame] | None = None) -> FileScan:
    """One plain file, or a multi-frame .zst or multi-member .gz through its index (`frames`), over `workers` processes.

    Its regions come as soon as they are known: forked workers scan the shares and stream their regions back,
    with the bytes they scanned (the progress bar counts every worker's), and the caller analyses them in file
    order meanwhile. (Before, this process scanned the first share itself and analysed after; an A/B on two cores
    showed no measurable speed difference.) The other fields are complete once the regions have all been read.
    """
    global _ENGINE, _FRAMES
    _ENGINE, _FRAMES = engine, frames
    size = os.path.getsize(path) if frames is None else frames[-1].text_start + frames[-1].text_size
    jobs = [(path, a, b, size, before, after) for a, b in split(path, size, workers)]
    scan = FileScan([], 0, set(), 0, {}, Reading(path))
    scan.regions = _regions_in_order(scan, jobs)
    return scan


def _regions_in_order(scan: FileScan, jobs: list[tuple[str, int, int, int, int, int]]) -> Iterator[Region]:
    """Each share's regions, shifted to absolute offsets and line numbers and merged where they touch; those that
    no later share can touch are released as soon as they come. A share's parts are read only after every
    earlier share is done, so the newlines before it are known."""
    assert scan.reading is not None
    path, size = jobs[0][0], jobs[0][3]
    held: list[Region] = []
    lines_before_own = 0
    for k, message in stream_split(_scan_range, jobs):
        # the next share reads nothing before `reach`: regions ending before it are final
        reach = jobs[k + 1][1] - _BACK_READ if k + 1 < len(jobs) else size + 1
        if isinstance(message, Part):
            if message.regions:
                assert message.newlines_before_own is not None
                base = lines_before_own - message.newlines_before_own  # newlines before read_start
                shift = message.read_start
                held = _merge(held + [Region(region.start + shift, region.end + shift, region.first_line + base,
                                             region.data, [h + shift for h in region.hits])
                                      for region in message.regions])
        else:
            res: RangeResult = message  # type: ignore[assignment]
            scan.reading.merge(Reading(path, nul_bytes=res.nul_bytes, first_nul=res.first_nul))
            for key, copies in res.skipped.items():
                scan.skipped[key] = scan.skipped.get(key, 0) + copies
            lines_before_own += res.newlines_own
            scan.ranks |= res.ranks
            scan.candidates += res.candidates
            scan.world_size = larger(scan.world_size, res.world_size)
        ready = 0
        while ready < len(held) and held[ready].end < reach:
            ready += 1
        yield from held[:ready]
        del held[:ready]
    yield from held
    unterminated = False
    if size:
        with open_text(path, _FRAMES) as handle:
            handle.seek(size - 1)
            unterminated = handle.read(1) != b"\n"
    scan.lines_total = lines_before_own + int(unterminated)


class WorkerFailed(RuntimeError):
    """A forked worker raised or died; the message says which and why."""


Job = TypeVar("Job")


def stream_split(func: Callable[[Job, Emit], object], jobs: list[Job]) -> Iterator[tuple[int, object]]:
    """func(job, emit) for each job in a forked child; yields (job index, message): what each child emits, then
    its result, job after job. Later children's messages wait in this process (their pipes are drained whenever
    it waits), so every child scans on while the caller works through the earlier ones.

    Cheaper than a multiprocessing.Pool (no pool threads, no task queue). Closing the iterator early (the caller
    failed, Ctrl-C) stops and reaps the children.
    """
    if len(jobs) == 1:  # one share (a file of one endless line cannot be cut): no child, no pipe, no pickling
        parts: list[object] = []
        result = func(jobs[0], parts.append)
        for part in parts:
            if isinstance(part, Part):
                report(part.scanned)
            yield 0, part
        yield 0, result
        return
    children: list[_Child] = []
    try:
        for job in jobs:
            read_fd, write_fd = os.pipe()
            with contextlib.suppress(OSError):  # a lower limit: the child waits for room more often
                fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, _PIPE_BYTES)
            pid = os.fork()
            if pid == 0:  # pragma: no cover - runs in the child, which never returns
                os.close(read_fd)
                for earlier in children:
                    os.close(earlier.fd)
                _child_main(func, job, write_fd)
            os.close(write_fd)
            children.append(_Child(pid, read_fd))
        for k, child in enumerate(children):
            while True:
                while not child.inbox:
                    if child.closed:
                        raise _died(child)
                    _drain(children)
                done, payload = child.inbox.popleft()
                if done is None:
                    raise WorkerFailed(f"a scan worker failed: {payload}")
                yield k, payload
                if done:
                    break
            _reap(child)
    finally:
        for child in children:  # this process failed first, or its caller stopped: stop the others
            if not child.reaped:
                with contextlib.suppress(OSError):
                    os.kill(child.pid, signal.SIGKILL)
                _reap(child)


@dataclass(slots=True)
class _Child:
    pid: int
    fd: int
    buffer: bytearray = field(default_factory=bytearray)
    inbox: deque[tuple[bool | None, object]] = field(default_factory=deque)  # (done, payload); None: it failed
    closed: bool = False  # its pipe's end was read
    reaped: bool = False
    status: int = 0


def _drain(children: list[_Child]) -> None:
    """Wait until some child has sent something, then read what every ready pipe holds."""
    open_fds = {child.fd: child for child in children if not child.closed}
    ready, _, _ = select.select(list(open_fds), [], [])
    for fd in ready:
        child = open_fds[fd]
        data = _read_pipe(fd)
        if not data:
            child.closed = True
            os.close(fd)
            continue
        child.buffer += data
        _unpack(child)


def _unpack(child: _Child) -> None:
    """Whole messages out of a child's buffer (8-byte length, then a pickle of our own forked process's
    making, never of input data); progress is told as it arrives, whichever child it comes from."""
    buffer = child.buffer
    start = 0
    while len(buffer) - start >= 8:
        length = int.from_bytes(buffer[start : start + 8], "little")
        if len(buffer) - start - 8 < length:
            break
        message = pickle.loads(buffer[start + 8 : start + 8 + length])
        start += 8 + length
        child.inbox.append(message)
        if isinstance(message[1], Part):
            report(message[1].scanned)
    del buffer[:start]


def _read_pipe(read_fd: int) -> bytes:
    """What a child's pipe holds now (select said it is readable: this does not block); b"" at its end."""
    return os.read(read_fd, _PIPE_BYTES)


def _reap(child: _Child) -> None:
    if not child.closed:
        os.close(child.fd)
        child.closed = True
    if not child.reaped:
        with contextlib.suppress(ChildProcessError):  # reaped elsewhere
            _, child.status = os.waitpid(child.pid, 0)
        child.reaped = True


def _died(child: _Child) -> WorkerFailed:
    """A child whose pipe ended before its result came."""
    _reap(child)
    how = f"signal {-os.waitstatus_to_exitcode(child.status)}" if os.WIFSIGNALED(child.status) else "no result"
    return WorkerFailed(f"a scan worker died ({how})")


def _child_main(func: Callable[[Job, Emit], object], job: Job, write_fd: int) -> None:
    """Run one job, sending (False, what it emits) as it goes, then (True, its result) or (None, the error);
    leave without cleanup."""
    status = 0

    def send(done: bool | None, payload: object) -> None:
        message = pickle.dumps((done, payload), protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(len(message).to_bytes(8, "little") + message)
        while view:  # a pipe takes what it has room for
            view = view[os.write(write_fd, view) :]

    try:
        try:
            send(True, func(job, lambda payload: send(False, payload)))
        except BaseException as exc:  # anything, Ctrl-C included, is reported to the parent
            status = 1
            send(None, f"{type(exc).__name__}: {exc}")
    except BaseException:  # the parent is gone (a broken pipe): nothing to tell
        status = 1
    finally:
        os._exit(status)  # no atexit handlers, no flushing the parent's inherited stdout buffers


def map_files(func: object, items: list[object], workers: int) -> Iterator[object]:
    """Run func over items in worker processes (fork), in order; in-process when one worker suffices."""
    if workers <= 1 or len(items) <= 1:
        yield from map(func, items)  # type: ignore[call-overload]
        return
    import multiprocessing  # ~5 ms of imports, only for many-file inputs

    with multiprocessing.get_context("fork").Pool(min(workers, len(items))) as pool:
        yield from pool.imap(func, items, chunksize=max(1, len(items) // (workers * 8)))  # type: ignore[arg-type]
