"""Property tests over hostile input (#14 acceptance): parsers, ingestion and the whole pipeline.

Logs are built from real corpus lines (so failures, tracebacks and rank prefixes occur) mixed with hostile
lines: control characters, colour codes, carriage returns, invalid UTF-8, long lines. The properties:
- no exception but DenpexInputError escapes, from any parser or from ingestion of any bytes;
- every engine (Hyperscan, RE2, Python scanners) gives the line path's diagnosis;
- CRLF line ends and colour codes sprinkled through the text give the same root cause.
`benchmarks/fuzz.py` runs the same generators for a million inputs outside CI.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from denpex.api import diagnose_sources
from denpex.errors import DenpexInputError
from denpex.ingest import check_readable, frame, resolve
from denpex.ingest.headers import parse
from denpex.ingest.lines import build_line
from denpex.ingest.sources import Source
from denpex.scan.repeats import repeat_key
from tests.conftest import CORPUS
from tests.test_engines import _engines, _key

# Real text: windows of corpus logs (so tracebacks, rank prefixes and failures come in their real order).
_SAMPLE = sorted(CORPUS.glob("*/*/log.txt"))[::2]
FILES = [lines for lines in (path.read_text(errors="replace").splitlines() for path in _SAMPLE) if lines]
SGR = ["\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[1;33m", "\x1b[38;5;196m", "\x1b[2K", "\x1b[A", "\x1b]0;t\x07"]
HOSTILE = st.one_of(
    st.text(alphabet=st.characters(max_codepoint=0x2FF, exclude_characters="\x00"), max_size=200),
    st.binary(max_size=200).map(lambda b: b.replace(b"\x00", b"").decode("latin-1")),  # NUL: the ingest test
    st.sampled_from(["\x1b#8", "\x9b2J", "\x1bP1;2|x\x1b\\", "\r\r\r", "\ufeff", "\u202e", "\t" * 50]),
    st.integers(1000, 20_000).map(lambda n: "Error " * (n // 6)),
)


@st.composite
def logs(draw: st.DrawFn, least: int = 20, most: int = 80) -> list[str]:
    """least-most lines: runs of real lines with hostile ones between."""
    lines: list[str] = []
    while len(lines) < draw(st.integers(least, most)):
        if draw(st.integers(0, 3)):
            real = FILES[draw(st.integers(0, len(FILES) - 1))]
            start = draw(st.integers(0, len(real) - 1))
            lines.extend(line[:2000] for line in real[start : start + draw(st.integers(1, 40))])
        else:
            lines.append(draw(HOSTILE).replace("\n", " "))
    return lines


def coloured(lines: list[str], seed: int) -> list[str]:
    """The same text with colour codes put between characters: stripping them gives the text back."""
    rng = random.Random(seed)
    out = []
    for line in lines:
        chars = list(line)
        for _ in range(rng.randint(0, 3)):
            chars.insert(rng.randint(0, len(chars)), rng.choice(SGR[:6]))
        out.append("".join(chars))
    return out


def source(text: str, name: str = "hostile.log") -> Source:
    return Source(name=name, data=text.encode("utf-8", "surrogatepass"))


def root(diagnosis) -> tuple:
    r = diagnosis.root_cause
    return diagnosis.verdict, r and (r.entry_id, r.rank, r.evidence.line)


def outcome(text: str, engine: str, summary=_key) -> tuple:
    """The diagnosis, or the input error (a NUL in the first bytes makes it binary): the same on every path."""
    try:
        return summary(diagnose_sources([source(text)], engine=engine, workers=1))
    except DenpexInputError as exc:
        return ("input error", str(exc).split(":")[0].replace(" (only terminal control codes)", ""))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.binary(max_size=300))
def test_parsers_never_raise(text, raw):
    parse(text)
    parse(text, year=2026)
    line = build_line(raw, "x.log", 1, 1, None, None)
    assert "\r" not in line.text and "\x1b" not in line.text
    build_line(text.encode("utf-8", "surrogatepass"), "x.log", 1, 1, 3, 2026)
    repeat_key(raw)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=3000), wrap=st.sampled_from(["plain", "gzip", "zstd", "gzip-cut", "zstd-cut"]))
def test_ingesting_any_bytes_gives_lines_or_an_input_error(tmp_path: Path, raw, wrap):
    data = raw
    if wrap.startswith("gzip"):
        data = gzip.compress(raw)
    elif wrap.startswith("zstd"):
        data = zstandard.ZstdCompressor().compress(raw)
    if wrap.endswith("cut"):
        data = data[: max(1, len(data) * 2 // 3)]
    suffix = {"plain": ".log", "gzip": ".log.gz", "zstd": ".log.zst"}[wrap.split("-")[0]]
    path = tmp_path / f"input{suffix}"
    path.write_bytes(data)
    try:
        (src,) = resolve([str(path)])
        check_readable(src)
        for line in frame(src):
            assert "\n" not in line.text
    except DenpexInputError as exc:
        assert str(exc) and "\n" not in str(exc)


@settings(max_examples=200, deadline=None)
@given(lines=logs())
def test_every_engine_gives_the_line_paths_diagnosis(lines):
    text = "\n".join(lines) + "\n"
    expected = outcome(text, "lines")
    for engine in _engines():
        assert outcome(text, engine) == expected, engine


@settings(max_examples=200, deadline=None)
@given(lines=logs(), seed=st.integers(0, 2**32))
def test_crlf_and_colour_variants_give_the_same_root_cause(lines, seed):
    plain = "\n".join(lines) + "\n"
    expected = outcome(plain, "lines", root)
    crlf = "\r\n".join(lines) + "\r\n"
    colour = "\n".join(coloured(lines, seed)) + "\n"
    for variant in (crlf, colour):
        for engine in ("lines", _engines()[-1]):
            assert outcome(variant, engine, root) == expected, engine


def test_a_rank_marker_inside_a_line_is_not_a_rank_of_the_job():
    # found by benchmarks/fuzz.py: two ranks' output run together on one line (`[rank0] step 2 ...[rank1] step
    # 2`). The line path reads that line as rank 0's; the fast engines counted rank 1 as a job rank that logged
    # nothing and blamed it as a silent straggler
    path = Path(__file__).parent / "fixtures" / "fuzz" / "mid-line-rank-marker.log"
    text = path.read_bytes().decode("utf-8", "surrogatepass")
    expected = outcome(text, "lines")
    assert expected[0] == "failure"
    for engine in _engines():
        assert outcome(text, engine) == expected, engine


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["", "  ", "12:00:01 ", "x "]), st.integers(0, 40),
                          st.sampled_from(["", " step", " [rank7] tail", "[Rank 9] x", " [default5]"]),
                          st.sampled_from(["\n", "\r", "\r\n"])), min_size=1, max_size=30))
def test_fast_engines_count_the_ranks_that_open_lines(parts):
    # every engine counts a rank only where its marker is the first rank marker of a line's text as shown (after
    # its last CR redraw), as the line path reads the line's rank. Lines without anchors: on a line an anchor
    # hits (a colour code is one) an engine may stop looking, since the whole line is then framed and parsed,
    # and the parser names its rank
    from denpex.catalog import load
    from denpex.scan.engines import best_engine
    from tests.test_engines import _line_path_ranks

    data = "".join(f"{lead}[rank{rank}]:{rest}{end}" for lead, rank, rest, end in parts).encode()
    expected = _line_path_ranks(data)
    # each line's rank is the rank of its last CR segment (none of these segments is a progress bar)
    shown = [segment for line in data.split(b"\n") for segment in [line.rstrip(b"\r").split(b"\r")[-1]] if segment]
    assert expected == {int(segment.split(b"]")[0].split(b"rank")[-1]) for segment in shown if b"[rank" in segment}
    for name in _engines():
        engine = best_engine(load(), name).fresh()
        assert engine.scan(data).ranks == expected, name
