"""The fast path (scan buffers for candidates, frame only regions) gives exactly the simple path's diagnosis."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from denpex import diagnose
from denpex.evaluate import case_input, find_cases
from denpex.scan import fast, parallel
from tests.conftest import CORPUS

CASES = find_cases([str(CORPUS)])
# the blind split's logs (every folder: agreement between engines is not tuning) widen the forms covered
BLIND_CASES = find_cases([str(CORPUS.parent / "blind")])


def _engines() -> list[str]:
    names = ["python"]
    for module, name in (("hyperscan", "hyperscan"), ("re2", "re2")):
        try:
            __import__(module)
        except ImportError:
            continue
        names.append(name)
    return names


def _key(result):
    root = result.root_cause
    return (
        result.verdict,
        root and (root.entry_id, root.category, root.rank, root.evidence.file, root.evidence.line,
                  root.evidence.text, root.reason, sorted(map(str, root.fields.items()))),
        sorted(str((f.entry_id, f.role, f.evidence.rank, f.evidence.line, f.count)) for f in result.findings),
        [(g.entry_id, g.ranks, g.count) for g in result.collateral],
        result.lines_read,
    )


@pytest.fixture(scope="module")
def simple():
    return {case: _key(diagnose(_input(case), engine="lines")) for case in CASES}


@pytest.fixture(scope="module")
def simple_blind():
    return {case: _key(diagnose(_input(case), engine="lines")) for case in BLIND_CASES}


def _input(case):
    return case_input(case, json.loads((case / "label.json").read_text()))


def test_hyperscan_is_installed_with_the_test_extra():
    pytest.importorskip("hyperscan")
    assert "hyperscan" in _engines()


@pytest.mark.parametrize("engine", _engines())
def test_fast_path_matches_simple_path_on_the_corpus(engine, simple):
    differ = [case.name for case in CASES if _key(diagnose(_input(case), engine=engine)) != simple[case]]
    assert not differ


@pytest.mark.parametrize("engine", _engines())
def test_fast_path_matches_simple_path_on_the_blind_logs(engine, simple_blind):
    differ = [case.name for case in BLIND_CASES if _key(diagnose(_input(case), engine=engine)) != simple_blind[case]]
    assert not differ


@pytest.mark.parametrize("engine", _engines()[1:])
@pytest.mark.parametrize("chunk", [4096, 65536])
def test_small_chunks_and_regions_across_chunk_boundaries(chunk, engine, simple, monkeypatch):
    # tiny read chunks make regions, traceback headers and anchors straddle chunk boundaries
    monkeypatch.setattr(parallel, "CHUNK_BYTES", chunk)
    differ = [case.name for case in CASES if _key(diagnose(_input(case), engine=engine)) != simple[case]]
    assert not differ


@pytest.mark.parametrize("engine", _engines()[1:])
@pytest.mark.parametrize("workers", [2, 3])
def test_one_file_split_across_processes(workers, engine, simple, monkeypatch):
    # every corpus log cut into byte ranges scanned by separate processes, regions merged back
    monkeypatch.setattr(fast, "PARALLEL_FILE_BYTES", 1)
    differ = [
        case.name for case in CASES
        if _key(diagnose(_input(case), engine=engine, workers=workers)) != simple[case]
    ]
    assert not differ


def test_big_log_split_across_processes_matches_one_process(tmp_path):
    # a generated multi-rank log of a few MiB with ranges far larger than the read-back margins
    from benchmarks.genlog import generate

    log = tmp_path / "big.log"
    generate(str(log), 24 << 20, ranks=16, seed=3)
    one = diagnose(log, engine=_engines()[-1], workers=1)
    two = diagnose(log, engine=_engines()[-1], workers=2)
    assert _key(one) == _key(two)
    assert one.root_cause.entry_id == "cuda-oom" and one.root_cause.rank == 5
    assert {g.entry_id for g in one.collateral} == {"nccl-watchdog-timeout"}
    assert one.lines_read == sum(1 for _ in log.open("rb"))


def test_compiled_scanner_cache_survives_damage(tmp_path, monkeypatch):
    # the Hyperscan database is cached on disk; a damaged cache file only costs a recompile
    pytest.importorskip("hyperscan")
    from denpex.catalog import load
    from denpex.scan import engines

    monkeypatch.setenv("DENPEX_CACHE_DIR", str(tmp_path))
    catalog = load()
    first = engines.HyperscanEngine(catalog)
    cached = list(tmp_path.glob("hyperscan-*.db"))
    assert len(cached) == 1
    cached[0].write_bytes(b"not a database")
    again = engines.HyperscanEngine(catalog)
    log = (CORPUS / "generated" / "gen-dist-rank2-keyerror" / "log.txt").read_bytes()
    assert again.scan(log).candidates == first.scan(log).candidates


@pytest.mark.parametrize("dense", [False, True])
def test_every_engine_finds_the_same_ranks(dense):
    """Rank markers in all their forms, sparse and on every line (Hyperscan then switches databases)."""
    from denpex.catalog import load
    from denpex.scan.engines import _build, ranks_in

    lines = [b"[rank3]:[W1130 04:16:28.349000 3418 torch/distributed/run.py:874] step 1\n",
             b"[Rank 9] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5)\n",
             b"[rank4095]: the last per-rank literal\n", b"[rank4100]: a rank past the per-rank literals\n",
             b"[Rank 70000] not a rank (too big)\n",
             b"noise [rank] [default] [Rank x]\n"]
    lines += [b"[default%d]:loss 0.5\n" % (k % 7) for k in range(600 if dense else 3)]
    data = b"".join(lines)
    expected = ranks_in(data)
    assert {3, 9, 4100}.issubset(expected) and 70000 not in expected
    half = len(data) // 2
    for name in _engines():
        session = _build(load(), name).fresh()
        assert session.scan(data).ranks == expected, name
        again = session.scan(data).ranks  # RE2 and Hyperscan's frontier report a rank once per session
        assert again == (expected if name == "python" else set()), name
        split = session.fresh()  # a new session, the data in two chunks
        assert split.scan(data[:half]).ranks | split.scan(data[half:]).ranks == expected, name


def test_the_rank_frontier_begins_the_marker_of_every_unknown_rank_and_of_no_known_one():
    from denpex.scan.engines import frontier

    for known in (set(), set(range(8)), {0, 5, 12, 100, 4100, 99999}, set(range(64))):
        literals = set(frontier(known))
        for rank in range(100_000):
            text = b"%d]" % rank
            begun = any(text[:i] in literals for i in range(1, len(text) + 1))
            assert begun == (rank not in known), (sorted(known)[:5], rank)


@pytest.mark.parametrize("lines", [
    [b"[rank%d]: step %d\n" % (k % 100, k) for k in range(400)],  # more ranks than a frontier is built for
    [b"[rank6]: 14:55:19 [rank3] INFO step %d\n" % k for k in range(400)],  # hits that never count as a rank
])
def test_hyperscan_leaves_the_frontier_when_it_stops_paying_and_still_finds_every_rank(lines):
    pytest.importorskip("hyperscan")
    from denpex.catalog import load
    from denpex.scan.engines import HyperscanEngine, ranks_in

    data = b"".join(lines)
    session = HyperscanEngine(load()).fresh()
    assert session.scan(data).ranks == ranks_in(data)
    assert session._per_rank  # the per-rank literals took over
    assert session.scan(data + b"[rank101]: late\n").ranks == ranks_in(data) | {101}
    assert not session.fresh()._per_rank  # a new session starts on the frontier again


def test_a_rank_past_the_per_rank_literals_seen_on_the_frontier_keeps_the_exact_pass_after_the_switch():
    # rank 5000 showed while on the frontier; after the switch to per-rank literals (which stop at 4095) a
    # rank 6000 first seen later must still be found
    pytest.importorskip("hyperscan")
    from denpex.catalog import load
    from denpex.scan.engines import HyperscanEngine

    session = HyperscanEngine(load()).fresh()
    assert session.scan(b"[rank5000]: first\n").ranks == {5000}
    assert session.scan(b"".join(b"[rank%d]: step\n" % k for k in range(100))).ranks == set(range(100))
    assert session._per_rank
    assert session.scan(b"[rank6000]: late\n").ranks == {6000}


def test_anchors_that_could_hide_a_rank_marker_are_detected():
    # RE2 finds anchors and unknown rank markers in one pass only when neither can overlap the other
    from denpex.scan.engines import _overlaps_rank_marker

    for anchor in (b"exitcode [ra", b"failed on [", b"]: Watchdog", b"12 retries", b"see [Rank 3", b"[default"):
        assert _overlaps_rank_marker(anchor), anchor
    for anchor in (b"CUDA out of memory", b"Watchdog caught collective operation timeout", b"exitcode: -9"):
        assert not _overlaps_rank_marker(anchor), anchor


def test_vectorised_newline_count_equals_bytes_count():
    from denpex.scan import newlines

    assert newlines.use_numpy_for(newlines.WORTH_NUMPY_BYTES)  # numpy is a dependency
    log = (CORPUS / "generated" / "gen-dist-rank2-keyerror" / "log.txt").read_bytes()
    data = log * (3 * (1 << 20) // len(log) + 1)  # a few MiB: several NumPy slices and a partial one
    for start, end in ((0, None), (1, len(data) - 1), (12345, 12345 + (1 << 20) + 7), (100, 150)):
        assert newlines.count_newlines(data, start, end) == data.count(b"\n", start, end)


def _square_or_fail(job: object, emit: parallel.Emit) -> object:
    if job == "raise":
        raise OSError("disk gone")
    if job == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    emit(f"part of {job}")
    return job * job  # type: ignore[operator]


def _results(jobs: list[object]) -> list[tuple[int, object]]:
    return list(parallel.stream_split(_square_or_fail, jobs))


def test_forked_shares_stream_in_job_order_and_report_a_failed_worker():
    # every job in a forked child; each one's parts, then its result, job after job
    assert _results([2, 3, 4]) == [(0, "part of 2"), (0, 4), (1, "part of 3"), (1, 9), (2, "part of 4"), (2, 16)]
    assert _results([5]) == [(0, "part of 5"), (0, 25)]  # one share (one endless line): run here, no child
    with pytest.raises(OSError, match="disk gone"):
        _results(["raise"])
    with pytest.raises(parallel.WorkerFailed, match="OSError: disk gone"):
        _results([2, "raise"])
    with pytest.raises(parallel.WorkerFailed, match="died .signal 9"):
        _results([2, "die"])
    with pytest.raises(parallel.WorkerFailed, match="disk gone"):  # the first failed: the others are reaped
        _results(["raise", 3])
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def test_an_interrupt_while_reading_a_workers_pipe_kills_and_reaps_every_worker(monkeypatch):
    def interrupted(read_fd: int) -> bytes:
        raise KeyboardInterrupt

    monkeypatch.setattr(parallel, "_read_pipe", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _results([2, 3, 4])
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


def _wait_for_the_parent(job: object, emit: parallel.Emit) -> object:
    """Emit a part, then finish only once the parent has handled it (it creates the file `job` names)."""
    flag = Path(str(job))
    emit("first part")
    deadline = time.monotonic() + 120
    while not flag.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    return flag.exists()


def test_a_workers_parts_reach_the_caller_while_it_is_still_scanning(tmp_path):
    # the caller frames a share's regions while its worker goes on: a worker that waits for the caller to have
    # handled its first part before it finishes deadlocks (and times out, returning False) if parts wait for
    # the result
    flags = [tmp_path / "a", tmp_path / "b"]
    got = []
    for k, message in parallel.stream_split(_wait_for_the_parent, [str(flag) for flag in flags]):
        got.append((k, message))
        if message == "first part":
            flags[k].touch()
    assert got == [(0, "first part"), (0, True), (1, "first part"), (1, True)]


def test_shares_start_on_line_starts_found_a_block_at_a_time(tmp_path):
    # one endless line (a progress bar) gives one share; elsewhere each share starts right after a newline
    endless = tmp_path / "bar.log"
    endless.write_bytes(b"\r 12%|#" * 100_000 + b"\n")
    assert parallel.split(str(endless), endless.stat().st_size, 2) == [(0, endless.stat().st_size)]
    lines = tmp_path / "lines.log"
    data = b"".join(b"x" * (k * 37 % 300_000) + b"\n" for k in range(1, 40))
    lines.write_bytes(data)
    shares = parallel.split(str(lines), len(data), 4)
    assert shares[0][0] == 0 and shares[-1][1] == len(data) and len(shares) >= 2
    assert all(end == start for (_, end), (start, _) in zip(shares, shares[1:], strict=False))
    assert all(data[start - 1] == 10 for start, _ in shares[1:])


def test_a_split_file_gives_the_one_process_regions_and_stops_its_workers_when_closed(tmp_path):
    # the regions of a file split over two workers are the one process's, in order, with its line numbers;
    # stopping early (the caller failed) kills and reaps the workers
    from denpex.catalog import load
    from denpex.scan.engines import _build
    from denpex.scan.regions import RegionFinder

    step = "[rank{r}]: step {s} loss 0.51 lr 3.0e-04 grad_norm 0.100 tokens/s 1000\n"
    body = "".join(step.format(r=s % 4, s=s) for s in range(120_000))
    log = tmp_path / "big.log"
    log.write_text("[rank1]: RuntimeError: an early failure\n" + body + "[rank2]: RuntimeError: a late one\n" + body)
    scan = parallel.scan_file(str(log), _build(load(), _engines()[-1]).fresh(), 100, 60, 2)
    regions = list(scan.regions)
    finder = RegionFinder(_build(load(), _engines()[-1]).fresh(), 100, 60)
    data = log.read_bytes()
    alone = list(finder.feed(data)) + list(finder.finish())
    assert [(r.start, r.end, r.first_line, r.data) for r in regions] == [
        (r.start, r.end, r.first_line, r.data) for r in alone]
    assert any(b"an early failure" in r.data for r in regions) and any(b"a late one" in r.data for r in regions)
    assert scan.lines_total == 2 * 120_000 + 2
    early = parallel.scan_file(str(log), _build(load(), _engines()[-1]).fresh(), 100, 60, 2).regions
    next(iter(early))
    early.close()  # type: ignore[attr-defined]
    with pytest.raises(ChildProcessError):
        os.waitpid(-1, os.WNOHANG)


@pytest.mark.parametrize("engine", _engines())
def test_colour_codes_inside_an_anchor_do_not_hide_it_on_the_fast_path(engine, tmp_path):
    # issue 14, item 1: `CUDA \x1b[1mout of memory\x1b[0m` padded past the fast path's threshold
    healthy = (CORPUS / "generated" / "gen-dist-success-4rank" / "log.txt").read_bytes()
    oom = b"[rank0]: CUDA \x1b[1mout of memory\x1b[0m. Tried to allocate 20.00 MiB\n"  # the line
    log = tmp_path / "coloured.log"
    log.write_bytes(healthy * (1_300_000 // len(healthy) + 1) + oom + healthy)
    fast = diagnose(log, engine=engine, workers=1)
    lines = diagnose(log, engine="lines")
    assert fast.root_cause is not None and fast.root_cause.entry_id == "cuda-oom"
    assert (fast.root_cause.evidence.line, fast.verdict) == (lines.root_cause.evidence.line, lines.verdict)


def _line_path_ranks(data: bytes) -> set[int]:
    """The ranks of the lines as the line path frames them (ingest.lines, ingest.headers)."""
    from denpex.ingest import text_source
    from denpex.ingest.lines import framed

    return {line.rank for _, line in framed(text_source(data.decode())) if line.rank is not None}


def test_a_line_of_many_hits_is_skipped_without_losing_headers_or_ranks():
    """Hyperscan stops reporting hits on a line after it has seen many (a 100 MB line of warnings cost one
    callback per 27 bytes); traceback headers and the rank of the line's shown text, in its rest, still count."""
    from denpex.catalog import load
    from denpex.scan.engines import _ONE_LINE_HITS, _build, ranks_in

    hits = b"Error " * (_ONE_LINE_HITS * 3)
    line = (b"[rank2]: " + hits + b"[rank7] not first " + hits + b"Traceback (most recent call last) "
            + hits + b"\r[rank5]: a progress bar " + hits + b"\r\x1b[K [rank6] after a code " + hits + b"\n")
    data = b"[rank0]: step 1\n" + line * 3 + b"[rank1]: step 2\n"
    python = _build(load(), "python").fresh().scan(data)
    # a CR-redrawn line's rank is that of its text as shown (after the last CR, colour codes gone): 6, not 2 or 5
    assert python.ranks == ranks_in(data) == _line_path_ranks(data) == {0, 1, 6}
    for name in _engines():
        found = _build(load(), name).fresh().scan(data)
        assert found.ranks == python.ranks, name
        assert sorted(set(found.tracebacks)) == sorted(set(python.tracebacks)), name
        lines_hit = {data.count(b"\n", 0, end) for end in found.candidates}
        assert lines_hit == {1, 2, 3}, name  # every line of hits is a candidate, the healthy ones are not
        if name == "hyperscan":
            assert len(found.candidates) < 3 * 4 * _ONE_LINE_HITS  # not one hit per `Error`


@pytest.mark.parametrize("heads_later", [True, False])
def test_a_rank_named_mid_line_before_its_own_lines_is_still_found(heads_later):
    """`[rank6]: 14:55:19 [rank3] INFO` (a logger's own rank field after the launcher's prefix) before rank 3's
    own lines: Hyperscan reports a rank's literal once per chunk, and that first one is not a line's first."""
    from denpex.catalog import load
    from denpex.scan.engines import _build, ranks_in

    lines = [b"[rank6]: 2026-11-29 14:55:19,437 [rank3] INFO step %d\n" % k for k in range(50)]
    lines += [b"[rank1]: step 1 [rank3] again\r[rank2]: a redraw\n"]  # shown as `[rank2]: a redraw`
    if heads_later:
        lines += [b"[rank3]: 2026-11-29 14:55:20,001 [rank3] INFO step 51\n"]
    data = b"".join(lines)
    expected = {2, 3, 6} if heads_later else {2, 6}
    assert ranks_in(data) == _line_path_ranks(data) == expected
    for name in _engines():
        assert _build(load(), name).fresh().scan(data).ranks == expected, name


_RANKED_LINES = [  # a line's rank is its first marker (or the first after a CR); later ones never count
    b"[rank%(a)d]: step 3 loss 0.51",
    b"[rank%(a)d]: 14:55:19,437 [rank%(b)d] INFO step 4",
    b"[default%(a)d]:loss 0.5 " + b"x" * 300 + b" [Rank %(b)d] echoed",
    b"[rank%(a)d]: 42%%|####      | 4/10\r[rank%(b)d]: redrawn",
    b"noise without a rank " + b"y" * 200,
    b"relayed: [Rank %(b)d] Watchdog caught collective operation timeout",
]


@settings(max_examples=80, deadline=None)
@given(picks=st.lists(st.tuples(st.integers(0, len(_RANKED_LINES) - 1), st.integers(0, 5), st.integers(6, 9)),
                      min_size=1, max_size=60),
       chunk=st.integers(7, 700), dense=st.booleans())
def test_the_fast_path_takes_a_lines_rank_from_the_whole_line_wherever_chunks_cut_it(picks, chunk, dense):
    # a chunk that begins inside `[rank0]: ... [rank7] echoed` must not make 7 a rank of the job, and a marker
    # cut by a chunk's start must still count
    from denpex.catalog import load
    from denpex.scan.engines import _build, ranks_in
    from denpex.scan.regions import RegionFinder
    from denpex.scan.repeats import RepeatFilter

    data = b"".join(_RANKED_LINES[i] % {b"a": a, b"b": b} + b"\n" for i, a, b in picks)
    expected = ranks_in(data)
    assert expected == _line_path_ranks(data)  # the ranks of the lines as the line path reads them
    for name in _engines():
        finder = RegionFinder(_build(load(), name).fresh(), before=3, after=3, repeats=RepeatFilter())
        for at in range(0, len(data), chunk):
            finder._dense = dense or finder._dense
            list(finder.feed(data[at:at + chunk]))
        list(finder.finish())
        assert finder.stats.ranks == expected, (name, chunk, dense)


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("workers", [1, 2])
def test_a_rank_that_went_quiet_before_the_end_keeps_its_own_last_line_on_the_fast_path(engine, workers, tmp_path,
                                                                                      monkeypatch):
    # the fast path framed the input's last 100 lines: a rank quiet for longer had as its last line whatever line
    # of it a candidate had framed, far earlier (silence evidence, and the rank table, wrong)
    monkeypatch.setattr(fast, "PARALLEL_FILE_BYTES", 1)
    real = (CORPUS / "generated" / "gen-dist-success-4rank" / "log.txt").read_text().splitlines(True)
    body = real * 60
    quiet = [line for line in real if "[rank3]" not in line] * 12  # ~370 lines without rank 3
    log = tmp_path / "quiet.log"
    log.write_text("".join(body + quiet))
    want = {rank: state.last_line.line for rank, state in diagnose(log, engine="lines").ranks.items()}
    got = {rank: state.last_line.line for rank, state in diagnose(log, engine=engine, workers=workers).ranks.items()}
    last_of_rank3 = max(i for i, line in enumerate(body, 1) if "[rank3]" in line)
    assert got == want and want[3] == last_of_rank3
