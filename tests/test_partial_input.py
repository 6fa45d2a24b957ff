"""Partial, padded and streamed input (#14 items 2, 4, 6, 7): a partial answer with a note, never silence.

Each test is the regression test of one reproduced defect: a truncated compressed log gave only an error, NUL
padding, link loops and colour-only files passed without a word, a FIFO blocked silently and an endless writer
was read into memory, and a CR followed by a colour reset joined progress-bar segments.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import zstandard

from denpex.api import diagnose_sources
from denpex.ingest import resolve, sources
from denpex.ingest.lines import build_line
from tests.conftest import REPO

HEALTHY_LINES = [f"[rank0]:I1201 10:00:{i % 60:02d}.000 train.py:10] step {i} loss 0.{i % 97}\n"
                 for i in range(60_000)]
HEALTHY = "".join(HEALTHY_LINES)
OOM = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB\n"
LOG = ("".join(HEALTHY_LINES[:8_000]) + OOM + HEALTHY * 2).encode()  # ~8 MB: the failure sits in its first 10%
COMPRESS = {".gz": gzip.compress, ".bz2": bz2.compress, ".xz": lzma.compress,
            ".zst": lambda data: zstandard.ZstdCompressor().compress(data)}


def run_json(*args: str, stdin: bytes | None = None, timeout: float = 300) -> tuple[int, dict, str]:
    result = subprocess.run([sys.executable, "-m", "denpex", "diagnose", "--format", "json", *args],
                            input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL,
                            capture_output=True, cwd=REPO, timeout=timeout)
    stderr = result.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr, stderr
    return result.returncode, json.loads(result.stdout), stderr


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
@pytest.mark.parametrize("engine", ["auto", "lines"])
def test_a_truncated_compressed_log_is_diagnosed_up_to_where_it_stops(tmp_path, suffix, engine):
    packed = COMPRESS[suffix](LOG)
    path = tmp_path / f"train.log{suffix}"
    path.write_bytes(packed[: len(packed) * 3 // 4])
    code, report, _ = run_json("--engine", engine, os.fspath(path))
    assert code == 1 and report["verdict"] == "failure"
    assert report["root_cause"]["id"] == "cuda-oom" and report["root_cause"]["rank"] == 1
    assert any("truncated" in note and "diagnosed what was read" in note for note in report["notes"])
    assert path.read_bytes() == packed[: len(packed) * 3 // 4]


def test_a_truncated_log_among_others_in_a_directory_counts_with_a_note(tmp_path):
    (tmp_path / "rank0.log").write_text("".join(HEALTHY_LINES[:100]))
    packed = gzip.compress(LOG)
    (tmp_path / "rank1.log.gz").write_bytes(packed[: len(packed) // 2])
    code, report, _ = run_json(os.fspath(tmp_path))
    assert code == 1 and report["root_cause"]["id"] == "cuda-oom"
    assert any("rank1.log.gz" in note and "truncated" in note for note in report["notes"])


def test_a_log_cut_before_any_text_is_still_an_error(tmp_path):
    path = tmp_path / "train.log.gz"
    path.write_bytes(gzip.compress(LOG)[:20])
    result = subprocess.run([sys.executable, "-m", "denpex", "diagnose", os.fspath(path)], capture_output=True,
                            cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and b"truncated" in result.stderr and b"Traceback" not in result.stderr


@pytest.mark.parametrize("engine", ["auto", "lines"])
def test_nul_padding_after_the_text_is_noted(tmp_path, engine):
    path = tmp_path / "train.log"
    head = "".join(HEALTHY_LINES[:6_000]).encode()
    path.write_bytes(head + b"\x00" * (3 << 20))
    code, report, _ = run_json("--engine", engine, os.fspath(path))
    assert code == 0 and report["verdict"] == "clean"
    assert any(f"NUL bytes from byte {len(head):,}" in note for note in report["notes"]), report["notes"]


def test_nul_padding_is_noted_on_the_parallel_path_too(tmp_path):
    path = tmp_path / "train.log"  # over PARALLEL_FILE_BYTES: split across two workers
    path.write_bytes(HEALTHY.encode() * 12 + b"\x00" * (1 << 20) + OOM.encode())
    code, report, _ = run_json("--workers", "2", os.fspath(path))
    assert code == 1 and report["root_cause"]["id"] == "cuda-oom"
    assert any("1,048,576 NUL bytes" in note for note in report["notes"]), report["notes"]


def test_a_file_of_only_colour_codes_is_empty_not_clean(tmp_path):
    path = tmp_path / "train.log"
    path.write_bytes(b"\x1b[0m\x1b[1;31m\n\x1b[0m\r\n")
    result = subprocess.run([sys.executable, "-m", "denpex", "diagnose", os.fspath(path)], capture_output=True,
                            cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 2
    assert result.stderr.decode().strip() == f"denpex: error: empty input (only terminal control codes): {path}"


def test_links_that_loop_dangle_or_lead_to_folders_are_named_in_notes(tmp_path):
    (tmp_path / "rank1.log").write_text(OOM)
    (tmp_path / "loop.log").symlink_to("loop.log")
    (tmp_path / "gone.log").symlink_to("missing.log")
    (tmp_path / "elsewhere").symlink_to(tmp_path)
    code, report, _ = run_json(os.fspath(tmp_path))
    assert code == 1 and report["root_cause"]["id"] == "cuda-oom"
    notes = "\n".join(report["notes"])
    assert "loop.log: too many levels of symbolic links" in notes
    assert "gone.log: no such file or directory" in notes
    assert "not followed: symbolic link to a folder" in notes and "elsewhere" in notes


def test_a_fifo_without_a_writer_says_it_is_waiting(tmp_path):
    fifo = tmp_path / "live.log"
    os.mkfifo(fifo)
    proc = subprocess.Popen([sys.executable, "-m", "denpex", "diagnose", "--format", "json", os.fspath(fifo)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        notice = b""
        os.set_blocking(proc.stderr.fileno(), False)
        while b"waiting for a writer" not in notice and time.monotonic() < deadline:
            time.sleep(0.2)
            notice += proc.stderr.read() or b""
        assert b"denpex: waiting for a writer on " in notice and b"(a named pipe)" in notice
        with open(fifo, "wb") as writer:
            writer.write("".join(HEALTHY_LINES[:100]).encode() + OOM.encode())
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1 and json.loads(out)["root_cause"]["id"] == "cuda-oom"


def test_a_long_pipe_is_streamed_in_bounded_memory(tmp_path, monkeypatch):
    """Over PIPE_MEMORY_BYTES a pipe is read as it comes: the memory held is the head, not the input."""
    monkeypatch.setattr(sources, "PIPE_MEMORY_BYTES", 256 << 10)
    fifo = tmp_path / "endless.log"
    os.mkfifo(fifo)
    body = LOG[: 3 << 20] + OOM.encode() + LOG[: 1 << 20]

    def write() -> None:
        with open(fifo, "wb") as writer:
            writer.write(body)

    thread = threading.Thread(target=write)
    thread.start()
    (source,) = resolve([os.fspath(fifo)])
    assert source.data is None and source.stream is not None and len(source.stream.head) == 256 << 10
    assert source.size_hint() == 0  # unknown size: the streaming line path
    diagnosis = diagnose_sources([source], workers=1)
    thread.join(timeout=60)
    assert diagnosis.root_cause is not None and diagnosis.root_cause.entry_id == "cuda-oom"
    assert diagnosis.root_cause.evidence.line == body[: body.index(b"torch.OutOfMemory")].count(b"\n") + 1


def test_stdin_is_held_only_up_to_the_pipe_limit(monkeypatch):
    monkeypatch.setattr(sources, "PIPE_MEMORY_BYTES", 64 << 10)
    (short,) = resolve(["-"], stdin=io.BufferedReader(io.BytesIO(OOM.encode())))  # type: ignore[arg-type]
    assert short.data == OOM.encode() and short.stream is None
    (long,) = resolve(["-"], stdin=io.BufferedReader(io.BytesIO(LOG)))  # type: ignore[arg-type]
    assert long.stream is not None and long.data is None
    diagnosis = diagnose_sources([long], workers=1)
    assert diagnosis.root_cause is not None and diagnosis.root_cause.entry_id == "cuda-oom"


# -- item 2: CR as a terminal handles it -----------------------------------------------------------------

BAR = ["Epoch 1:  10%|#         | 1/10 [00:01<00:09,  1.00it/s]",
       "Epoch 1:  20%|##        | 2/10 [00:02<00:08,  1.00it/s]"]
ERROR = "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB"


def shown(raw: str) -> str:
    return build_line(raw.encode(), "x.log", 1, 1, None, None).text


@pytest.mark.parametrize("reset", ["", "\x1b[0m", "\x1b[2K", "\x1b[A\x1b[0m"])
def test_the_last_segment_wins_with_or_without_colour_codes(reset):
    assert shown(f"{BAR[0]}\r{reset}{BAR[1]}\r{reset}{ERROR}") == ERROR
    assert shown(f"{BAR[0]}\r{reset}{BAR[1]}\r{reset}") == BAR[1]  # a trailing redraw prefix joins nothing
    assert shown(f"{BAR[0]}{reset}\r{BAR[1]}{reset}") == BAR[1]


@pytest.mark.parametrize("reset", ["", "\x1b[0m"])
def test_a_log_line_that_a_bar_redrew_over_stays_the_line(reset):
    assert shown(f"{ERROR}\r{reset}{BAR[0]}\r{reset}{BAR[1]}") == ERROR
    assert shown(f"{BAR[0]}\r{reset}some log line\r{reset}another log line") == "another log line"


@pytest.mark.parametrize("engine", ["auto", "lines"])
def test_the_same_bytes_with_and_without_colour_give_the_same_answer(tmp_path, engine):
    answers = []
    for reset in ("", "\x1b[0m"):
        tail = f"{ERROR}\r{reset}{BAR[0]}\r{reset}{BAR[1]}\r{reset}\n"
        path = tmp_path / f"colour{len(reset)}.log"
        path.write_text(HEALTHY + tail + HEALTHY[:100_000])
        code, report, _ = run_json("--engine", engine, os.fspath(path))
        root = report["root_cause"]
        answers.append((code, root["id"], root["evidence"]["line"], root["evidence"]["text"]))
    assert answers[0] == answers[1] and answers[0][1] == "cuda-oom" and answers[0][3] == ERROR


def test_pipe_source_file_is_read_once_and_refuses_a_second_reader(tmp_path, monkeypatch):
    monkeypatch.setattr(sources, "PIPE_MEMORY_BYTES", 16 << 10)
    (source,) = resolve(["-"], stdin=io.BufferedReader(io.BytesIO(LOG[: 1 << 20])))  # type: ignore[arg-type]
    assert sum(len(c) for c in source.chunks()) == 1 << 20
    with pytest.raises(sources.DenpexInputError, match="only once"):
        list(source.chunks())



@pytest.mark.parametrize("engine", ["auto", "lines"])
def test_a_line_over_4_mib_is_read_the_same_way_on_every_path_with_a_cut_marker(tmp_path, engine):
    # the fast path used to frame only the part of a long line still in its window: a CUDA OOM at the start of
    # a 6 MB line came back clean there, and found on the line path
    head = "".join(HEALTHY_LINES[:20_000])
    path = tmp_path / "long.log"
    path.write_text(head + OOM.rstrip("\n") + " " + "y" * (6 << 20) + "\n" + head)
    code, report, _ = run_json("--engine", engine, os.fspath(path))
    root = report["root_cause"]
    assert code == 1 and root["id"] == "cuda-oom" and root["evidence"]["line"] == 20_001
    assert root["evidence"]["text"].endswith("bytes at reading cut]")
    cut = int(root["evidence"]["text"].rsplit(" and ", 1)[1].split(" ")[0].replace(",", ""))
    assert cut == len(OOM.rstrip("\n")) + 1 + (6 << 20) - (4 << 20)


def test_an_unterminated_osc_at_the_top_does_not_empty_the_log(tmp_path):
    # found by benchmarks/fuzz.py: `\x1b]` with no terminator made the whole head "control codes only" (empty
    # input), while the same text with a colour code inserted was diagnosed
    coloured = (Path(__file__).parent / "fixtures" / "fuzz" / "osc-unterminated-coloured.log").read_bytes()
    plain = re.sub(rb"\x1b\[[0-9;]*[A-Za-z]", b"", coloured)
    answers = []
    for name, data in (("plain.log", plain), ("coloured.log", coloured)):
        path = tmp_path / name
        path.write_bytes(data)
        code, report, _ = run_json("--engine", "lines", os.fspath(path))
        answers.append((code, report["verdict"], report["root_cause"] and report["root_cause"]["id"]))
    assert answers[0] == answers[1] and answers[0][1] == "failure"
