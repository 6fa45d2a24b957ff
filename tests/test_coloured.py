"""Lines with colour codes are scanned on their shown text (scan.coloured): a coloured log costs what its plain
text costs, and every path gives the diagnosis of the line path."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from denpex import diagnose
from denpex.catalog import load
from denpex.ingest.lines import shown_bytes, shown_lines
from denpex.scan import parallel
from denpex.scan.engines import best_engine
from denpex.scan.regions import RegionFinder
from denpex.scan.repeats import RepeatFilter
from tests.conftest import CORPUS
from tests.test_engines import CASES, _engines, _input, _key
from tests.test_hostile_properties import SGR

# pieces that make colour codes, broken codes, CR redraws and invalid UTF-8 meet inside and across lines
_PIECES = ["\x1b", "\x1b[", "\x1b[0m", "\x1b[1;31m", "\x1b]0;title", "\x07", "\x1b\\", "\x1b(B", "\r", "[rank3]:",
           " Error", "world_size=4", "x", "42", "\u2588", "%|"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.one_of(st.sampled_from(_PIECES).map(str.encode),
                                   st.binary(max_size=3).filter(lambda b: b"\n" not in b)), max_size=12)
                .map(b"".join), max_size=20))
def test_lines_shown_together_are_the_lines_shown_one_by_one(lines):
    assert shown_lines(lines) == [shown_bytes(line) for line in lines]


def _paint(data: bytes, seed: int = 7) -> bytes:
    """Colour codes put between the characters of every other line, as Rich or a coloured logger would; a line's
    text as shown is unchanged."""
    rng = random.Random(seed)
    out = []
    for k, line in enumerate(data.decode("utf-8", "surrogateescape").split("\n")):
        chars = list(line)
        for _ in range(rng.randint(1, 4) if k % 2 else 0):
            chars.insert(rng.randint(0, len(chars)), rng.choice(SGR))
        out.append("".join(chars))
    return "\n".join(out).encode("utf-8", "surrogateescape")


@pytest.mark.parametrize("engine", _engines())
def test_a_coloured_healthy_log_holds_the_candidates_and_ranks_of_its_plain_text(engine):
    # before, every line with an ESC byte was a candidate: a log that paints its lines went through Python
    # line by line, ten times slower than its plain text
    plain = (CORPUS / "generated" / "gen-dist-success-4rank" / "log.txt").read_bytes()
    plain = plain.replace(b"[rank1]:", b"[rank\x1b[1m1\x1b[0m]:")  # a code that splits a rank marker: still rank 1
    results = []
    for data in (plain, _paint(plain)):
        finder = RegionFinder(best_engine(load(), engine).fresh(), before=5, after=5, repeats=RepeatFilter())
        regions = list(finder.feed(data)) + list(finder.finish())
        results.append((finder.stats.candidates, finder.stats.ranks, [r.first_line for r in regions]))
    assert results[0] == results[1]
    assert results[0][1] == {0, 1, 2, 3}


_SAMPLE = CASES[::6]  # every sixth corpus case: real logs of every kind, in a few minutes


@pytest.mark.parametrize("engine", _engines())
@pytest.mark.parametrize("chunk", [4096, 1 << 20])
def test_coloured_corpus_logs_give_the_line_paths_diagnosis_on_the_fast_path(engine, chunk, tmp_path, monkeypatch):
    # chunks of 4 KiB cut coloured lines at their edges: those are judged whole, as shown
    monkeypatch.setattr(parallel, "CHUNK_BYTES", chunk)
    differ = []
    for case in _SAMPLE:
        source = _input(case)
        if not source.is_file():
            continue
        painted = tmp_path / f"{case.name}.log"
        painted.write_bytes(_paint(source.read_bytes()))
        if _key(diagnose(painted, engine=engine, workers=1)) != _key(diagnose(painted, engine="lines")):
            differ.append(case.name)
    assert not differ


@pytest.mark.parametrize("engine", _engines())
def test_a_coloured_line_cut_by_a_chunk_edge_is_judged_whole_as_shown(engine, monkeypatch):
    # the code hides the anchor from the byte scan of either piece; only the whole line, as shown, holds it
    from denpex.api import diagnose_sources
    from denpex.ingest.sources import Source

    monkeypatch.setattr(parallel, "CHUNK_BYTES", 4096)
    healthy = (CORPUS / "generated" / "gen-dist-success-4rank" / "log.txt").read_bytes()
    oom = b"[rank2]: CUDA \x1b[1mout of \x1b[0mmemory. Tried to allocate 20.00 MiB\n"
    lead = healthy * 4
    roots = set()
    for cut in range(0, len(oom), 5):  # the chunk edge at every fifth byte of the line
        pad = (4 * 4096 - len(lead) - cut) % 4096
        data = lead + b"x" * (pad - 1) + b"\n" + oom + healthy
        found = diagnose_sources([Source(name="cut.log", data=data)], engine=engine, workers=1).root_cause
        roots.add(found and (found.entry_id, found.evidence.line))
    line = data.count(b"\n", 0, data.index(oom)) + 1
    assert roots == {("cuda-oom", line)}


@pytest.mark.parametrize("cache_full", [False, True])
@pytest.mark.parametrize("engine", _engines())
def test_copies_of_a_coloured_line_that_differ_in_digits_keep_their_own_ranks(engine, cache_full, monkeypatch):
    # the shown text of a coloured line is resolved once per digit-masked line; a rank marker a code splits
    # (the byte scan cannot see it) is still read on each copy
    from denpex.scan import coloured
    from tests.test_engines import _line_path_ranks

    if cache_full:
        monkeypatch.setattr(coloured, "MAX_KEYS", 1)
    data = b"".join(b"[rank\x1b[1m%d\x1b[0m]: \x1b[32mINFO\x1b[0m step \x1b[1;36m%d\x1b[0m\n" % (k % 12, k)
                    for k in range(600))
    data += b"[rank\x1b[1m12\x1b[0m]: \x1b[32mINFO\x1b[0m epoch \x1b[1;36m1\x1b[0m done\n"  # a new line, past the bound
    finder = RegionFinder(best_engine(load(), engine).fresh(), before=5, after=5, repeats=RepeatFilter())
    list(finder.feed(data))
    list(finder.finish())
    assert finder.stats.ranks == _line_path_ranks(data) == set(range(13))
    assert finder.stats.candidates == 0
