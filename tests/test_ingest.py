"""Ingestion: header parsing on real log formats, framing, compression, directories, stdin, chunk boundaries.

Header examples are lines taken from the corpus logs (tests/corpus/*/*/log.txt) unless marked otherwise.
"""

from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import threading
from datetime import datetime
from pathlib import Path

import pytest
import zstandard

from denpex.errors import DenpexInputError
from denpex.ingest import check_readable, frame, resolve, text_source
from denpex.ingest.headers import parse
from denpex.ingest.lines import MAX_LINE_BYTES
from denpex.ingest.sources import rank_from_path
from tests.conftest import CORPUS

CHUNK = 1 << 20  # read_chunks' default chunk size
LOWERING_LOG = CORPUS / "generated" / "gen-lowering-adaptive-maxpool-long" / "log.txt"
KEYERROR_LOG = CORPUS / "generated" / "gen-dist-rank2-keyerror" / "log.txt"
LOGDIR_CASE = CORPUS / "generated" / "gen-dist-rank2-keyerror-logdir" / "ranks"


def lines_of(*inputs: str | Path, stdin: bytes | None = None):
    sources = resolve([os.fspath(i) for i in inputs], stdin=io.BytesIO(stdin) if stdin is not None else None)
    out = []
    for source in sources:
        check_readable(source)
        out.extend(frame(source))
    return out


def corpus_line(startswith: str) -> str:
    """The first corpus line that starts with the given text, so the examples stay real."""
    for path in sorted(CORPUS.glob("*/*/log.txt")):
        with open(path, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if line.startswith(startswith):
                    return line.rstrip("\n")
    raise AssertionError(f"no corpus line starts with {startswith!r}")


# -- headers ---------------------------------------------------------------------------------------


def test_rank_prefix():
    line = corpus_line("[rank3]: Traceback")
    head = parse(line)
    assert head.rank == 3
    assert head.body == "Traceback (most recent call last):"


def test_torchrun_tee_prefix_stacked_with_rank_prefix():
    head = parse(corpus_line("[default2]:[rank2]: Traceback"))
    assert head.rank == 2
    assert head.local_rank == 2  # torchrun's [${role_name}${local_rank}]:
    assert head.body == "Traceback (most recent call last):"


def test_torchrun_tee_prefix_alone_gives_local_rank_as_rank():
    head = parse("[default3]:Traceback (most recent call last):")
    assert (head.rank, head.local_rank) == (3, 3)
    assert head.body == "Traceback (most recent call last):"


def test_torchrun_tee_prefix_before_python_logging():
    head = parse(corpus_line("[default0]:2026-11-29 14:55:34,259 [rank0] INFO train: connecting"))
    assert head.rank == 0
    assert head.level == "I"
    assert head.timestamp == datetime(2026, 11, 29, 14, 55, 34, 259000).timestamp()
    assert head.body.startswith("train: connecting to localhost")


def test_ray_actor_prefix():  # vLLM's Ray workers; not in the corpus, format as Ray prints it
    head = parse("(RayWorkerWrapper pid=4009) [rank1]: RuntimeError: CUDA error: an illegal memory access")
    assert head.rank == 1
    assert head.pid == 4009
    assert head.body == "RuntimeError: CUDA error: an illegal memory access"
    head = parse("(RayWorkerWrapper pid=4009, ip=10.4.0.7) ERROR 11-29 14:54:36 worker_base.py:464] boom")
    assert (head.pid, head.host, head.level) == (4009, "10.4.0.7", "E")
    assert head.body == "boom"
    head = parse("(pid=4009) hello")
    assert head.pid == 4009 and head.body == "hello"


def test_srun_label():  # srun --label writes "%0*d: " with the task id
    head = parse("3: [rank3]: KeyError: 'sample_02_00003'")
    assert head.rank == 3
    assert head.body == "KeyError: 'sample_02_00003'"
    head = parse("03: Traceback (most recent call last):")
    assert head.rank == 3
    assert head.body == "Traceback (most recent call last):"
    head = parse("1: [default0]:Traceback (most recent call last):")  # srun starting one torchrun per node
    assert (head.rank, head.local_rank) == (1, 0)


def test_glog_python_header_with_compile_id():
    line = corpus_line("W1129 14:49:11.641000 13347 torch/_dynamo/exc.py:713] [0/0] Backend compiler exception")
    head = parse(line)
    assert head.level == "W"
    assert head.pid == 13347
    assert head.compile_id == "0/0"
    assert head.body == "Backend compiler exception"
    year = datetime.now().year
    assert head.timestamp == pytest.approx(datetime(year, 11, 29, 14, 49, 11, 641000).timestamp())


def test_glog_header_from_brief():
    head = parse("W1029 18:26:40.182000 156731 torch/_dynamo/exc.py:593] [0/0] msg")
    assert (head.level, head.pid, head.compile_id, head.body) == ("W", 156731, "0/0", "msg")


def test_dynamo_compile_id_with_attempt():
    head = parse(corpus_line("W1129 14:49:11.682000 13347 torch/_dynamo/exc.py:713] [0/0_1]"))
    assert head.compile_id == "0/0_1"
    head = parse("I1029 18:26:40.182000 156731 torch/_dynamo/convert_frame.py:1040] [24/0_1] Step 1: done")
    assert head.compile_id == "24/0_1"
    assert head.body == "Step 1: done"


def test_cpp_glog_header_behind_rank_prefix():
    head = parse(corpus_line("[rank0]:[W1129 14:35:54.493395955 ProcessGroupNCCL.cpp:1575] Warning:"))
    assert head.rank == 0
    assert head.level == "W"
    assert head.body.startswith("Warning: WARNING: destroy_process_group() was not called")
    frac = head.timestamp % 1
    assert frac == pytest.approx(0.493395955, abs=1e-6)
    head = parse("[rank0]:[E1206 18:44:12.715298746 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught "
                 "collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE)")
    assert (head.rank, head.level) == (0, "E")
    assert head.body.startswith("[Rank 0] Watchdog caught")


def test_old_c10_header_and_rank_in_message():
    head = parse(corpus_line("[E ProcessGroupNCCL.cpp:821] [Rank 3] Watchdog"))
    assert head.level == "E"
    assert head.rank == 3
    assert head.timestamp is None
    assert head.body.startswith("[Rank 3] Watchdog caught collective operation timeout")


def test_python_logging_with_rank():
    head = parse(corpus_line("2026-11-29 14:57:10,047 [rank2] INFO train: connecting"))
    assert head.rank == 2
    assert head.level == "I"
    assert head.timestamp == datetime(2026, 11, 29, 14, 57, 10, 47000).timestamp()
    assert head.body == "train: connecting to localhost:36357 as rank 2 of 4"


def test_python_logging_bare_elastic_error_is_not_a_rank():
    line = corpus_line("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9)")
    head = parse(line)
    assert head.level == "E"
    assert head.rank is None  # local_rank 0 is the child that died, not who wrote this line
    assert head.body.startswith("failed (exitcode: -9) local_rank: 0 (pid: 2410412)")


def test_old_torch_logging_format_keeps_traceback_indentation():
    head = parse(corpus_line("[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING]     raise"))
    assert head.level == "W"
    assert head.body == "    raise RuntimeError("
    assert head.timestamp == datetime(2024, 6, 18, 23, 38, 49, 504000).timestamp()


def test_nccl_debug_line():
    line = corpus_line("liangxianchen-funasr-15wh-train-lxc0-w-0:15325:16199 [2] NCCL INFO")
    head = parse(line)
    assert head.host == "liangxianchen-funasr-15wh-train-lxc0-w-0"
    assert head.pid == 15325
    assert head.local_rank == 2
    assert head.rank is None  # NCCL's [2] is the local device, not a global rank


def test_child_failed_error_summary_index_is_not_a_rank():
    text = KEYERROR_LOG.read_text()
    assert "\n[1]:\n" in text and "Root Cause (first observed failure):\n[0]:\n" in text
    for line in frame(text_source(text)):
        if line.text in ("[0]:", "[1]:", "[2]:", "[3]:"):
            assert line.rank is None, line
            assert line.body == line.text
        if line.text.startswith("  rank      :"):
            assert line.rank is None, line


@pytest.mark.parametrize(
    "text",
    ["Error:3] something", "Frame.py:12] hi", "Epoch 3: loss 1.0", "[12]: x", "[step3]: loss 0.1", "I think so"],
)
def test_plain_text_is_not_mistaken_for_a_header(text):
    head = parse(text)
    assert head.level is None
    assert head.body == text
    assert head.pid is None


def test_glog_stamps_take_the_year_of_an_earlier_dated_line():
    text = ("[2024-06-18 23:38:49,504] torch._dynamo.convert_frame: [WARNING] starting\n"
            "W0618 23:38:50.000000 1234 torch/_dynamo/exc.py:1] [0/0] later\n")
    first, second = list(frame(text_source(text)))
    assert second.timestamp - first.timestamp == pytest.approx(0.496, abs=1e-3)


# -- framing ---------------------------------------------------------------------------------------


def _keys(lines):
    return [(ln.number, ln.text, ln.body, ln.rank, ln.level, ln.timestamp) for ln in lines]


def test_line_numbers_are_one_based_and_count_blank_lines(tmp_path):
    path = tmp_path / "log.txt"
    path.write_bytes(b"first\n\n[rank1]: third\n")
    lines = lines_of(path)
    assert [(ln.number, ln.text) for ln in lines] == [(1, "first"), (2, ""), (3, "[rank1]: third")]
    assert [ln.seq for ln in lines] == [1, 2, 3]


def test_crlf_gives_the_same_lines_as_lf(tmp_path):
    raw = KEYERROR_LOG.read_bytes()
    crlf = tmp_path / "crlf.log"
    crlf.write_bytes(raw.replace(b"\n", b"\r\n"))
    assert _keys(lines_of(crlf)) == _keys(lines_of(KEYERROR_LOG))


def test_ansi_colours_are_removed(tmp_path):
    path = tmp_path / "colour.log"
    path.write_bytes(b"\x1b[31m[rank1]:\x1b[0m \x1b[1mRuntimeError\x1b[0m: boom\x1b]8;;http://x\x1b\\\n"
                     b"\x1b(B\x1b[mplain\n")
    first, second = lines_of(path)
    assert first.text == "[rank1]: RuntimeError: boom"
    assert first.rank == 1
    assert first.body == "RuntimeError: boom"
    assert second.text == "plain"


def test_progress_bar_redraws_keep_what_was_shown_last(tmp_path):
    path = tmp_path / "bar.log"
    path.write_bytes(b" 10%|#  |\r 50%|## |\r100%|###|\nnext\n")
    assert [ln.text for ln in lines_of(path)] == ["100%|###|", "next"]


def test_invalid_utf8_is_replaced_not_fatal(tmp_path):
    path = tmp_path / "latin1.log"
    path.write_bytes(b"ok line\n[rank2]: caf\xe9 \xc3\x28 broken\nlast\n")
    lines = lines_of(path)
    assert [ln.number for ln in lines] == [1, 2, 3]
    assert lines[1].text == "[rank2]: caf\ufffd \ufffd( broken"
    assert lines[1].rank == 2


def test_utf8_bom_is_dropped_so_the_first_header_parses(tmp_path):
    path = tmp_path / "bom.log"
    path.write_bytes(b"\xef\xbb\xbf[rank4]: RuntimeError: x\n")
    (line,) = lines_of(path)
    assert line.text == "[rank4]: RuntimeError: x"
    assert line.rank == 4


def test_utf16_with_bom_is_transcoded(tmp_path):  # PowerShell's `>` writes UTF-16LE
    path = tmp_path / "ps.log"
    text = KEYERROR_LOG.read_text()
    path.write_bytes(text.replace("\n", "\r\n").encode("utf-16"))
    assert _keys(lines_of(path)) == _keys(lines_of(KEYERROR_LOG))


@pytest.mark.parametrize(
    ("suffix", "compress"),
    [
        (".gz", gzip.compress),
        (".zst", lambda data: zstandard.ZstdCompressor().compress(data)),
        (".bz2", bz2.compress),
        (".xz", lzma.compress),
    ],
)
def test_compressed_inputs_give_identical_lines(tmp_path, suffix, compress):
    raw = LOWERING_LOG.read_bytes() * 300  # > 1 MiB decompressed: several chunks
    plain = tmp_path / "log.txt"
    plain.write_bytes(raw)
    packed = tmp_path / f"log.txt{suffix}"
    packed.write_bytes(compress(raw))
    got = lines_of(packed)
    want = lines_of(plain)
    assert len(got) == raw.count(b"\n")
    assert _keys(got) == _keys(want)
    assert {ln.file for ln in got} == {os.fspath(packed)}


def test_concatenated_streams_are_all_read(tmp_path):
    part1, part2 = b"[rank0]: first\n", b"[rank1]: second\n"
    cases = {
        "multi.log.gz": gzip.compress(part1) + gzip.compress(part2),
        "multi.log.zst": zstandard.ZstdCompressor().compress(part1) + zstandard.ZstdCompressor().compress(part2),
        "multi.log.bz2": bz2.compress(part1) + bz2.compress(part2),
        "multi.log.xz": lzma.compress(part1) + lzma.compress(part2),
    }
    for name, data in cases.items():
        path = tmp_path / name
        path.write_bytes(data)
        assert [ln.text for ln in lines_of(path)] == ["[rank0]: first", "[rank1]: second"], name


def test_compression_is_told_by_content_not_name(tmp_path):
    path = tmp_path / "log.txt"  # gzipped but named .txt (a browser download, a copy without its suffix)
    path.write_bytes(gzip.compress(KEYERROR_LOG.read_bytes()))
    assert _keys(lines_of(path)) == _keys(lines_of(KEYERROR_LOG))


def test_stdin(tmp_path):
    raw = KEYERROR_LOG.read_bytes()
    lines = lines_of("-", stdin=raw)
    assert lines[0].file == "<stdin>"
    assert _keys(lines) == _keys(lines_of(KEYERROR_LOG))
    assert _keys(lines_of("-", stdin=gzip.compress(raw))) == _keys(lines)
    assert _keys(lines_of("-", stdin=zstandard.ZstdCompressor().compress(raw))) == _keys(lines)


def test_stdin_named_twice_is_read_once():
    sources = resolve(["-", "-"], stdin=io.BytesIO(b"x\n"))
    assert len(sources) == 1


@pytest.mark.parametrize("offset", [-30, -1, 0, 1])
def test_line_straddling_the_read_chunk_boundary(tmp_path, offset):
    decisive = "[rank5]: KeyError: 'sample_05_00017' caf\u00e9"  # a 2-byte character near the cut too
    filler = b"x" * (CHUNK - 1 + offset) + b"\n"
    path = tmp_path / "big.log"
    path.write_bytes(filler + decisive.encode() + b"\r\n" + b"tail\n")
    lines = lines_of(path)
    assert [ln.number for ln in lines] == [1, 2, 3]
    assert lines[1].text == decisive
    assert lines[1].rank == 5
    assert lines[1].body == "KeyError: 'sample_05_00017' caf\u00e9"
    assert lines[2].text == "tail"


@pytest.mark.parametrize("split_at", range(1, 5))
def test_multibyte_and_crlf_split_exactly_at_the_boundary(tmp_path, split_at):
    tail = "é€\r\nnext\n".encode()
    head = b"y" * (CHUNK - split_at)
    path = tmp_path / "cut.log"
    path.write_bytes(head + tail)
    lines = lines_of(path)
    assert [ln.text for ln in lines] == ["y" * (CHUNK - split_at) + "é€", "next"]


def test_line_spanning_several_chunks(tmp_path):
    long = b"[rank7]: " + b"z" * (3 * CHUNK) + b" end"
    path = tmp_path / "long.log"
    path.write_bytes(b"a\n" + long + b"\nb\n")
    lines = lines_of(path)
    assert [ln.number for ln in lines] == [1, 2, 3]
    assert lines[1].text.encode() == long
    assert lines[1].rank == 7


def test_endless_progress_bar_line_stays_bounded(tmp_path):
    segment = b"\rTraining:  42%|####      | 420/1000 [00:42<00:58, 10.00it/s]"
    count = (2 * MAX_LINE_BYTES) // len(segment) + 10
    path = tmp_path / "tqdm.log"
    path.write_bytes(b"start\n" + segment * count + b"\r[rank0]: RuntimeError: died\nafter\n")
    lines = lines_of(path)
    assert [ln.text for ln in lines] == ["start", "[rank0]: RuntimeError: died", "after"]
    assert lines[1].rank == 0


def test_no_trailing_newline(tmp_path):
    path = tmp_path / "cut.log"
    path.write_bytes(b"one\ntwo")
    assert [ln.text for ln in lines_of(path)] == ["one", "two"]


# -- directories and paths -------------------------------------------------------------------------


def test_torchrun_log_dir_layout_gives_ranks_from_paths(tmp_path):
    root = tmp_path / "logs" / "a1b2c3_xyz"
    for rank in range(4):
        folder = root / "attempt_0" / str(rank)
        folder.mkdir(parents=True)
        (folder / "stderr.log").write_text(f"Traceback (most recent call last):\nRuntimeError: on {rank}\n")
        (folder / "stdout.log").write_text("")  # torchrun leaves empty stdout files: skipped
    lines = lines_of(tmp_path / "logs")
    files = sorted({ln.file for ln in lines})
    assert files == [os.path.join(os.fspath(tmp_path / "logs"), "a1b2c3_xyz", "attempt_0", str(r), "stderr.log")
                     for r in range(4)]
    for line in lines:
        want = int(Path(line.file).parent.name)
        assert line.rank == want


def test_rank_named_files_from_the_corpus_log_dir_case():
    lines = lines_of(LOGDIR_CASE)
    by_file = {}
    for line in lines:
        by_file.setdefault(Path(line.file).name, set()).add(line.rank)
    assert by_file["rank2_stderr.log"] == {2}
    assert by_file["rank0_stdout.log"] == {0}
    assert "rank0_stderr.log" not in by_file  # empty: left out
    assert all(name.startswith("rank") for name in by_file)
    keyerror = [ln for ln in lines if "KeyError: 'sample_02_00003'" in ln.text]
    assert keyerror and all(ln.rank == 2 for ln in keyerror)
    assert all(ln.number >= 1 for ln in lines)


def test_line_prefix_rank_wins_over_path_rank(tmp_path):
    path = tmp_path / "rank3_stderr.log"
    path.write_text("[rank1]: from rank one\nno prefix\n")
    first, second = lines_of(path)
    assert (first.rank, second.rank) == (1, 3)


@pytest.mark.parametrize(
    ("path", "rank"),
    [
        ("rank3_stderr.log", 3),
        ("ranks/rank2_stdout.log", 2),
        ("logs/run_x/attempt_0/3/stderr.log", 3),
        ("attempt_1/12/error.json", 12),
        ("node0/rank-5.log", 5),
        ("sweep_rank_0_lr1e-3/rank3.log", 3),  # the match nearest the file wins
        ("rank3/worker_rank5.log", 5),
        ("logs/rank_3/stderr.log", 3),
        ("gen-dist-rank2-keyerror/log.txt", None),  # a rank inside a folder's name is not the file's rank
        ("rank_0_sweep/train.log", None),
        ("attempt_0/x/3/stderr.log", None),
        ("train.log", None),
        ("ranks/log.txt", None),
        ("frank3.log", None),
    ],
)
def test_rank_from_path(path, rank):
    assert rank_from_path(path) == rank


def test_directory_skips_empty_binary_and_non_log_files(tmp_path):
    (tmp_path / "rank0.log").write_text("[rank0]: RuntimeError: boom\n")
    (tmp_path / "rank1.log").write_text("")
    (tmp_path / "core").write_bytes(b"\x7fELF\x02\x01\x01\x00" + bytes(100))
    (tmp_path / "model.pt").write_bytes(b"PK\x03\x04" + bytes(100))
    (tmp_path / "label.json").write_text("{}")
    (tmp_path / ".hidden.log").write_text("hidden\n")
    lines = lines_of(tmp_path)
    assert {Path(ln.file).name for ln in lines} == {"rank0.log"}


def test_fifo_is_read_once(tmp_path):  # `denpex diagnose <(zcat log.gz)` passes a pipe
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    payload = KEYERROR_LOG.read_bytes()

    def writer():
        with open(fifo, "wb") as handle:
            handle.write(payload)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        lines = lines_of(fifo)
    finally:
        thread.join(timeout=10)
    assert _keys(lines) == _keys(lines_of(KEYERROR_LOG))


def test_text_source_for_pasted_text():
    lines = list(frame(text_source("[rank1]: a\r\n[rank2]: b")))
    assert [(ln.file, ln.number, ln.rank, ln.body) for ln in lines] == [("<text>", 1, 1, "a"), ("<text>", 2, 2, "b")]


def test_bad_inputs_raise_input_errors(tmp_path):
    with pytest.raises(DenpexInputError, match="no such file"):
        resolve([os.fspath(tmp_path / "missing.log")])
    with pytest.raises(DenpexInputError, match="no input"):
        resolve([])
    with pytest.raises(DenpexInputError, match="file name too long|cannot read"):
        resolve(["x" * 5000])
    truncated = tmp_path / "t.log.gz"
    truncated.write_bytes(gzip.compress(os.urandom(300_000).hex().encode())[:5000])
    (source,) = resolve([os.fspath(truncated)])
    with pytest.raises(DenpexInputError, match="truncated"):
        check_readable(source)
        list(frame(source))
