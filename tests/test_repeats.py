"""Repeated candidate lines are analysed once and counted (scan.repeats), the same way on every path."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from denpex.api import diagnose
from denpex.scan import parallel, regions
from denpex.scan.repeats import RepeatFilter, repeat_key
from tests.test_engines import _engines, _key

CORPUS = Path(__file__).parent / "corpus"
OOM = "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU 0 has a total capacity"
WARN = ("[rank{r}]:W1129 14:44:{s:02d}.{us:06d} 10736 torch/_dynamo/convert_frame.py:1994] [0/8] torch._dynamo hit "
        "config.recompile_limit (8)")


def test_the_key_masks_digits_but_not_the_rank_prefix_nor_a_rank_named_in_the_message():
    assert repeat_key(b"[rank3]: step 12 loss 0.51") == repeat_key(b"[rank3]: step 99 loss 0.77")
    assert repeat_key(b"[rank3]: step 12 loss 0.51") != repeat_key(b"[rank4]: step 12 loss 0.51")
    assert repeat_key(b"exit code 1") != repeat_key(b"exit code 137")  # lengths differ
    # a message that names a rank or a process counts only exact copies
    assert repeat_key(b"Rank 1 is running collective: X") != repeat_key(b"Rank 2 is running collective: X")
    assert repeat_key(b"failed (exitcode: 1) local_rank: 0") != repeat_key(b"failed (exitcode: 1) local_rank: 3")
    killed = b"process %d terminated with signal SIGKILL"
    assert repeat_key(killed % 1) != repeat_key(killed % 2)


def test_a_chunk_admits_the_same_lines_as_its_candidates_in_small_batches():
    lines = [WARN.format(r=i % 3, s=i % 60, us=i).encode() for i in range(3000)] + [b"RuntimeError: boom"]
    chunk = b"\n".join(lines) + b"\n"
    ends = [m.end() for m in re.finditer(rb"recompile_limit|Error", chunk)]
    dense, sparse = RepeatFilter(), RepeatFilter()
    kept_dense = dense.admit_chunk(chunk, ends)
    kept_sparse = []
    for lo in range(0, len(ends), 50):  # 50 at a time
        kept_sparse += sparse._admit_lines(chunk, sorted(set(ends[lo:lo + 50])))
    assert len(kept_dense) == len(kept_sparse) == 4  # one warning per rank prefix, and the error
    assert dense.skipped == sparse.skipped and sum(dense.skipped.values()) == 2997


def _log(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_warning_repeated_every_step_is_counted_and_the_cause_still_wins(tmp_path):
    lines = [WARN.format(r=i % 4, s=i % 60, us=i * 7 % 10**6) for i in range(20000)]
    lines.insert(15000, OOM.format(r=2, n=512))
    path = _log(tmp_path, lines)
    fast = diagnose(path, engine="hyperscan" if "hyperscan" in _engines() else "python", workers=1)
    assert _key(fast) == _key(diagnose(path, engine="lines"))
    assert fast.root_cause.entry_id == "cuda-oom" and fast.root_cause.rank == 2
    warnings = [f for f in fast.findings if f.entry_id == "recompile-limit"]
    assert len(warnings) == 4 and sum(f.count for f in warnings) == 20000  # one analysed per rank, every copy counted
    assert any("counted under the findings of their first copy" in note for note in fast.notes)


def test_the_same_error_on_1024_ranks_leaves_no_rank_silent(tmp_path):
    lines = [OOM.format(r=r, n=512) for r in range(1024)]
    result = diagnose(_log(tmp_path, lines), engine="lines")
    assert {rank for f in result.findings if f.entry_id == "cuda-oom" for rank in f.ranks} == set(range(1024))


def _corpus_lines() -> list[str]:
    rnd = random.Random(7)
    lines: list[str] = []
    for path in sorted(CORPUS.rglob("log.txt")):
        text = path.read_text(encoding="utf-8", errors="replace").splitlines()
        text = [line for line in text if line.strip()]  # an all-blank log is no input at all
        lines += rnd.sample(text, min(len(text), 12))
    return lines


POOL = _corpus_lines()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    picks=st.lists(st.integers(0, len(POOL) - 1), min_size=1, max_size=60),
    copies=st.lists(st.integers(1, 400), min_size=1, max_size=60),
    digits=st.integers(0, 9),
    chunk=st.sampled_from([4096, 65536]),
    dense_after=st.sampled_from([0, 16, 10**9]),
)
def test_fast_path_equals_line_path_on_real_lines_repeated(tmp_path, picks, copies, digits, chunk, dense_after):
    # real corpus lines, each repeated with its digits varied, cut into chunks of several sizes, with copies
    # counted before scanning (dense chunks) or after (sparse): every way gives the default fast path's answer
    lines = []
    for pick, n in zip(picks, copies, strict=False):
        for k in range(n):
            lines.append(re.sub(r"\d", lambda m, k=k: str((int(m.group()) + k * digits) % 10), POOL[pick]))
    path = _log(tmp_path, lines)
    engines = _engines()
    expected = _key(diagnose(path, engine=engines[-1], workers=1))
    if len(lines) <= 100:  # within the back context both paths frame: the line path agrees too
        assert _key(diagnose(path, engine="lines")) == expected
    original = parallel.CHUNK_BYTES, regions._DENSE_CHUNK, regions._DENSE_ENTER
    try:
        parallel.CHUNK_BYTES, regions._DENSE_CHUNK, regions._DENSE_ENTER = chunk, dense_after, dense_after
        for engine in engines:
            assert _key(diagnose(path, engine=engine, workers=1)) == expected, engine
    finally:
        parallel.CHUNK_BYTES, regions._DENSE_CHUNK, regions._DENSE_ENTER = original


@pytest.mark.parametrize("workers", [2])
def test_a_file_split_across_workers_counts_repeats_as_one_process_does(tmp_path, workers, monkeypatch):
    lines = [WARN.format(r=i % 2, s=i % 60, us=i) for i in range(40000)] + [OOM.format(r=1, n=64)]
    path = _log(tmp_path, lines)
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    engine = "hyperscan" if "hyperscan" in _engines() else "python"
    one = _key(diagnose(path, engine=engine, workers=1))
    assert _key(diagnose(path, engine=engine, workers=workers)) == one == _key(diagnose(path, engine="lines"))


def test_progress_bar_only_on_a_terminal_and_only_after_a_while(monkeypatch, capsys):
    from denpex.report import progress as progress_module

    with progress_module.ScanProgress(1000) as quiet:  # stderr is not a terminal under pytest
        quiet(500)
    assert quiet._bar is None and capsys.readouterr().err == ""
    monkeypatch.setattr(progress_module.sys.stderr, "isatty", lambda: True, raising=False)
    with progress_module.ScanProgress(1000) as early:  # a terminal, but the scan is still young
        early(500)
    assert early._bar is None
    monkeypatch.setattr(progress_module, "SHOW_AFTER", 0.0)
    with progress_module.ScanProgress(1000) as shown:
        shown(500)
        assert shown._bar is not None and shown._bar.tasks[0].completed == 500
    assert not shown._bar.live.is_started  # stopped at the end: the report is all that remains


def test_the_fast_path_reports_every_byte_it_scans(tmp_path):
    lines = [WARN.format(r=i % 4, s=i % 60, us=i) for i in range(30000)]
    path = _log(tmp_path, lines)
    told = []
    from denpex.api import diagnose_sources
    from denpex.ingest import resolve

    diagnose_sources(resolve([str(path)]), engine="python", workers=1, progress=told.append)
    assert sum(told) == path.stat().st_size


def test_a_split_file_reports_every_byte_its_workers_scan(tmp_path, monkeypatch):
    # the workers tell their bytes to the parent as they send their regions: the bar ends at the file's size
    from denpex.api import diagnose_sources
    from denpex.ingest import resolve
    from denpex.scan import fast

    monkeypatch.setattr(fast, "PARALLEL_FILE_BYTES", 1 << 20)
    lines = [WARN.format(r=i % 4, s=i % 60, us=i) for i in range(60000)]
    path = _log(tmp_path, lines)
    assert path.stat().st_size > 2 << 20
    told: list[int] = []
    diagnose_sources(resolve([str(path)]), workers=2, progress=told.append)
    assert sum(told) == path.stat().st_size and len(told) >= 2


def test_copies_whose_digits_change_an_anchor_are_counted_on_every_path(tmp_path):
    # found by the property test above: an anchor holds a digit (`TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1`, a real
    # Dynamo hint), and copies of its line that differ in digits only have one repeat key; the fast path found
    # the anchor in 1 copy of 10 and counted 10 of 99, the line path counted all 99
    hint = ("W1129 14:48:41.676000 13115 torch/_dynamo/variables/tensor.py:1759] [0/0]     env "
            "TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1")
    lines = [re.sub(r"\d", lambda m, k=k: str((int(m.group()) + k) % 10), hint) for k in range(99)]
    path = _log(tmp_path, lines)
    expected = _key(diagnose(path, engine="lines"))
    assert any(", 99)" in group for group in expected[2]), expected
    for engine in _engines():
        assert _key(diagnose(path, engine=engine, workers=1)) == expected, engine


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.tuples(st.integers(0, len(POOL) - 1), st.integers(0, 9), st.integers(0, 3)), max_size=40),
    shape=st.sampled_from(["{}", "[rank{r}]:{}", "[default{r}]:[rank{r}]: {}", "{r}: {}", "\x1b[1m{}\x1b[0m", "x\r{}"]),
)
def test_keys_made_in_one_batch_are_the_keys_of_each_line(picks, shape):
    # the dense path keys a chunk's lines in one batch (scan.repeats._repeat_keys), the line path one line at a
    # time (repeat_key): one rule, so both must give every line the same key
    from denpex.scan.repeats import _repeat_keys

    lines = [shape.format(re.sub(r"\d", str(d), POOL[i]), r=r).encode() for i, d, r in picks]
    assert _repeat_keys(lines) == [repeat_key(line) for line in lines]
