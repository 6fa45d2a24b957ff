"""The job's size (scan.world_size) is read from every line, copies included, the same way on every path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from denpex.analyze.collect import Collector
from denpex.analyze.line_feed import LineFeed
from denpex.catalog import load
from denpex.ingest import text_source
from denpex.ingest.lines import framed
from denpex.scan import regions
from denpex.scan.engines import _build
from denpex.scan.regions import RegionFinder
from denpex.scan.repeats import RepeatFilter
from denpex.scan.world_size import at_word, largest_in_line
from tests.test_engines import _engines

# real lines of real runs (tests/corpus), and near misses the size must not be read from; DeepSpeed's launcher
# names the job's size `dist_world_size` (every node's launcher prints the whole job's), a rank's own share is
# `local_world_size`
LINES = [
    b"[default3]:2026-12-02 05:44:09,042 [rank3] INFO train: process group ready: backend=gloo world_size=4",
    b"[rank0]: 2026-11-29 14:55:13,571 [rank0] INFO train: initialized process group backend=gloo world_size=4",
    b"[rank1]: [2023-04-16 21:36:09,031] [INFO] [launch.py:247:main] dist_world_size=8",
    b"0: rank 0: init_process_group MASTER_ADDR=127.0.0.1 MASTER_PORT=29641 WORLD_SIZE=4",
    b'[rank2]:     run(int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), args)',
    b"[rank0]: local_world_size=2",
    b"World size: 16",
    b"[rank0]: step 12 loss 0.51",
    b"[rank0]: xdist_world_size=5",
]


def test_the_size_is_read_after_the_words_not_from_local_world_size():
    assert [largest_in_line(line) for line in LINES] == [4, 4, 8, 4, None, None, 16, None, None]
    for line in LINES:  # a scanner's word ends give the same values as the whole line's reading
        ends = [i + 10 for i in range(len(line)) if line[i:i + 10] in (b"world_size", b"World size", b"WORLD_SIZE")]
        sizes = [s for s in (at_word(line + b"\n", end) for end in ends) if s is not None]
        assert max(sizes, default=None) == largest_in_line(line), line


def _line_path(data: bytes) -> int | None:
    collector = Collector(load())
    feed = LineFeed(collector, "x.log")
    for raw, line in framed(text_source(data.decode(errors="replace"))):
        feed.feed(raw, line)
    return collector.result.world_size


def _fast_path(data: bytes, engine: str, chunk: int, dense: bool) -> int | None:
    finder = RegionFinder(_build(load(), engine).fresh(), before=3, after=3, repeats=RepeatFilter())
    for at in range(0, len(data), chunk):
        if dense:
            finder._dense = True  # every chunk after the first counts copies before scanning
        list(finder.feed(data[at:at + chunk]))
    list(finder.finish())
    return finder.stats.world_size


@settings(max_examples=60, deadline=None)
@given(
    picks=st.lists(st.tuples(st.integers(0, len(LINES) - 1), st.integers(0, 99)), min_size=1, max_size=80),
    chunk=st.sampled_from([11, 23, 64, 100, 4096]),  # longer than a word: a word spans at most two chunks
    dense=st.booleans(),
    newline_at_end=st.booleans(),
)
def test_every_path_reads_the_same_size_wherever_chunks_cut_the_lines(picks, chunk, dense, newline_at_end):
    lines = [LINES[i].replace(b"=4", b"=%d" % n).replace(b": 16", b": %d" % n) for i, n in picks]
    data = b"\n".join(lines) + (b"\n" if newline_at_end else b"")
    expected = _line_path(data)
    assert expected == max((largest_in_line(line) for line in lines if largest_in_line(line)), default=None)
    for engine in _engines():
        assert _fast_path(data, engine, chunk, dense) == expected, (engine, chunk, dense)


def test_a_size_on_a_line_longer_than_a_chunk_is_read_as_the_line_path_reads_it(monkeypatch):
    monkeypatch.setattr(regions, "_DENSE_ENTER", 1 << 30)
    long = b"[rank0]: " + b"x" * 300_000 + b" world_size=12 " + b"y" * 300_000
    data = b"[rank0]: world_size=2\n" + long + b"\n[rank0]: done\n"
    assert _line_path(data) == 12
    for engine in _engines():
        assert _fast_path(data, engine, 1 << 16, dense=False) == 12, engine


def test_an_anchor_that_overlaps_a_world_size_word_is_still_a_candidate():
    # `world size mismatch, m1:` holds the word `world size` and the catalog's anchor `size mismatch, m1:`:
    # finding the word must not hide the anchor (RE2 once resumed its search after the word)
    from denpex.api import diagnose

    text = "[rank0]: world size mismatch, m1: [64 x 320], m2: [640 x 10]\n"
    expected = diagnose(text, engine="lines").root_cause
    assert expected is not None
    for engine in _engines():
        root = diagnose(text, engine=engine).root_cause
        assert root is not None and root.entry_id == expected.entry_id, engine


_MIB = 1 << 20
_LONG_LINES = {  # lines longer than a chunk, or than ingest.lines.MAX_LINE_BYTES (4 MiB), or both
    "word past the cut": b"[rank0]: " + b"x" * (5 * _MIB) + b" world_size=64",
    "word at the start of a 9 MiB line": b"[rank0]: world_size=64 " + b"x" * (9 * _MIB),
    "word at the end of a 3.5 MiB line": b"[rank0]: " + b"x" * (7 * _MIB // 2) + b" world_size=64",
    "word at the end of a 600 KiB line": b"[rank0]: " + b"x" * (600 << 10) + b" world_size=64",
    "redrawn after a CR": b"world_size=8 " + b"x" * (5 * _MIB) + b"\r[rank0]: world_size=16 " + b"y" * 100,
    "a CR at the very end": b"world_size=8 " + b"x" * (5 * _MIB) + b"\r",
    # in pieces of 8 MiB + 13 bytes, the second ends with the CR
    "a CR at a piece's end": b"world_size=8 " + b"x" * (16 * _MIB + 12) + b"\r[rank0]: world_size=16 " + b"z" * 99,
}


@pytest.mark.parametrize("shape", sorted(_LONG_LINES))
def test_a_long_lines_size_is_read_as_the_line_path_reads_it_whatever_the_chunk_size(shape, monkeypatch):
    # chunks smaller than the line (plain files), and bigger than MAX_LINE_BYTES (a .gz's decompressed blocks)
    monkeypatch.setattr(regions, "_DENSE_ENTER", 1 << 30)
    data = b"[rank0]: hello\n" + _LONG_LINES[shape] + b"\n[rank0]: RuntimeError: boom\n"
    expected = _line_path(data)
    for chunk in (64 << 10, _MIB, 8 * _MIB + 13):
        for engine in _engines():
            assert _fast_path(data, engine, chunk, dense=False) == expected, (engine, chunk)


def test_pieces_of_a_line_are_bounded_as_the_whole_line_is_cut():
    # ingest.lines.OpenLine drops what cut_line would drop as pieces arrive; the result must not depend on
    # where the pieces end (a CR that ends a piece cuts the line only if more text follows it)
    from denpex.ingest.lines import OpenLine, cut_line

    for line in _LONG_LINES.values():
        for size in (3 * _MIB, 4 * _MIB + 1, 8 * _MIB + 13):
            pieces = OpenLine()
            for at in range(0, len(line), size):
                pieces.add(line[at:at + size])
            assert pieces.close() == (line if len(line) <= 4 * _MIB else cut_line(line)), size


def test_colour_codes_anywhere_in_the_line_do_not_change_the_size():
    # Rich highlights numbers (`world_size=\x1b[1;36m16\x1b[0m`); a colouriser may cut a word anywhere: the size
    # is read on the text as shown, on every path, wherever the chunks cut the line
    plain = b"[rank0]: process group ready: backend=gloo world_size=16 rank=0"
    assert _line_path(plain + b"\n") == 16
    for at in range(len(plain) + 1):
        line = plain[:at] + b"\x1b[1;36m" + plain[at:]
        data = b"[rank0]: world_size=2\n" + line + b"\n[rank0]: done\n"
        assert _line_path(data) == 16, at
        for engine in _engines():
            for chunk in (13, 64, 4096):
                assert _fast_path(data, engine, chunk, dense=False) == 16, (at, engine, chunk)


@settings(max_examples=300, deadline=None)
@given(size=st.integers(0, 999_999), digits=st.text("0123456789", min_size=1, max_size=6))
def test_a_floor_pattern_matches_exactly_the_values_above_it(size, digits):
    import re

    from denpex.scan.engines import _larger_than

    larger = _larger_than(size)
    expected = int(digits) > size
    if larger is None:  # nothing of 6 digits is larger
        assert not expected
        return
    assert bool(re.fullmatch(rb"0{0,5}" + larger, digits.encode())) == expected, (size, digits)


def test_a_raised_floor_still_finds_a_larger_size_cut_by_a_chunk_edge():
    pytest.importorskip("hyperscan")
    # the size is read on every line: 8 many times (the floor becomes 8), then 16 whose digits a chunk ends between
    head = b"".join(b"[rank%d]: process group ready world_size=8\n" % (i % 4) for i in range(200))
    cut = b"[rank1]: process group ready world_size=1"
    data = head + cut + b"6\n" + b"[rank0]: step 1 loss 0.5\n" * 5
    finder = RegionFinder(_build(load(), "hyperscan").fresh(), before=3, after=3, repeats=RepeatFilter())
    list(finder.feed(data[: len(head) + len(cut)]))
    assert finder.engine._size_floor == 8  # whole lines' words of 8 or less are no longer reported
    list(finder.feed(data[len(head) + len(cut):]))
    list(finder.finish())
    assert finder.stats.world_size == 16 == _line_path(data)


def test_a_floor_leaves_out_only_the_words_that_cannot_raise_the_size():
    pytest.importorskip("hyperscan")
    engine = _build(load(), "hyperscan").fresh()
    data = b"a world_size=8\nb world_size=16\nc World size: 9\nd WORLD_SIZE=0016\ne world_size=8"
    lines = (0, data.rfind(b"\n") + 1)
    every = engine.scan(data, lines=lines).sizes
    engine.raise_size_floor(8)
    kept = engine.scan(data, lines=lines).sizes
    # the 8 in a whole line is left out; 16, 9 and 0016 are kept; the last line's word, cut by the end, stays
    assert [data[end - 10:end] for end in every] == [b"world_size", b"world_size", b"World size", b"WORLD_SIZE",
                                                    b"world_size"]
    assert kept == every[1:]
    assert engine.scan(data, ranks=False).sizes == every  # without `lines`, every word
    assert engine.fresh().scan(data, lines=lines).sizes == every  # a new session starts without a floor
