"""A .zst of several sized frames is split across cores like a plain file (ingest.zstd_frames), with the same
answer; anything else is read as one stream."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from denpex.api import diagnose
from denpex.ingest.framed_text import open_text
from denpex.ingest.zstd_frames import frame_index
from tests.test_engines import _key

zstandard = pytest.importorskip("zstandard")
CORPUS = Path(__file__).parent / "corpus"
OOM = (b"[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 40.00 GiB. GPU 0 has a total "
       b"capacity of 139.80 GiB of which 18.38 GiB is free.\n")


def _text() -> bytes:
    """A real healthy run's lines, repeated with a varying step so that the text does not compress to nothing."""
    healthy = (CORPUS / "generated" / "gen-dist-success-4rank" / "log.txt").read_bytes().splitlines(keepends=True)
    body = b"".join(line.replace(b"step", b"step %d" % (k * 7919 % 100_003), 1)
                    for k, line in enumerate(healthy * (3_000_000 // sum(map(len, healthy)) + 1)))
    return body + OOM + body[: len(body) // 3]


def _frames(path: Path, text: bytes, frame: int = 1 << 20, level: int = 1) -> Path:
    compressor = zstandard.ZstdCompressor(level=level)  # writes each frame's size in its header
    with open(path, "wb") as out:
        for at in range(0, len(text), frame):
            out.write(compressor.compress(text[at:at + frame]))
    return path


def test_the_index_finds_sized_frames_and_refuses_what_it_cannot_split(tmp_path):
    text = _text()
    framed = _frames(tmp_path / "log.zst", text)
    frames = frame_index(str(framed), framed.stat().st_size)
    assert frames is not None and len(frames) == -(-len(text) // (1 << 20))
    assert frames[-1].text_start + frames[-1].text_size == len(text)
    with open_text(str(framed), frames) as reader:  # any offset, across frame ends
        for offset in (0, (1 << 20) - 7, len(text) - 50):
            reader.seek(offset)
            assert reader.read(3000) == text[offset:offset + 3000]
        reader.seek(10)
        assert reader.readline() == text[10:text.index(b"\n", 10) + 1]
    single = tmp_path / "one.zst"
    single.write_bytes(zstandard.ZstdCompressor().compress(text))
    truncated = tmp_path / "cut.zst"
    truncated.write_bytes(framed.read_bytes()[:-100])
    for path in (single, truncated):
        assert frame_index(str(path), path.stat().st_size) is None, path.name
    plain = tmp_path / "log.txt"
    plain.write_bytes(text)
    pzstd = tmp_path / "p.zst"  # pzstd's frames do not say their size: one stream (Debian's zstd package)
    if shutil.which("pzstd") and subprocess.run(["pzstd", "-q", "-p", "2", str(plain), "-o", str(pzstd)],
                                                check=False).returncode == 0:
        assert frame_index(str(pzstd), pzstd.stat().st_size) is None


def split_gives_the_streams_answer(compressed: Path, text: bytes, tmp_path: Path, monkeypatch) -> None:
    """One worker streams the compressed file; two split it (scan_file is called) with the same answer, which is
    also the plain file's."""
    plain = tmp_path / "train.log"
    plain.write_bytes(text)
    calls: list[int] = []
    from denpex.scan import parallel

    scan_file = parallel.scan_file
    monkeypatch.setattr(parallel, "scan_file", lambda *a, **k: calls.append(1) or scan_file(*a, **k))
    streamed = _key(diagnose(compressed, workers=1))  # one stream, decompressed ahead of the scan
    assert not calls
    assert "'cuda-oom'" in repr(streamed)
    assert _key(diagnose(compressed, workers=2)) == streamed
    assert calls  # split across two processes this time
    assert repr(_key(diagnose(plain, workers=2))) == repr(streamed).replace(str(compressed), str(plain))


def test_a_framed_zst_split_across_cores_gives_the_plain_files_answer(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    text = _text()
    split_gives_the_streams_answer(_frames(tmp_path / "train.log.zst", text), text, tmp_path, monkeypatch)


def test_a_damaged_frame_falls_back_to_the_stream_and_its_partial_answer(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    text = _text()
    framed = _frames(tmp_path / "train.log.zst", text)
    frames = frame_index(str(framed), framed.stat().st_size)
    assert frames is not None
    data = bytearray(framed.read_bytes())
    middle = frames[len(frames) // 2].offset + 40  # inside a compressed block: the structure still adds up
    data[middle:middle + 64] = bytes(64)
    framed.write_bytes(bytes(data))
    assert frame_index(str(framed), framed.stat().st_size) is not None
    one = diagnose(framed, workers=1)
    two = diagnose(framed, workers=2)
    assert _key(two) == _key(one)
    assert any("after" in note for note in two.notes), two.notes  # where the stream stopped


def test_the_walk_gives_up_on_more_blocks_than_it_is_worth(tmp_path, monkeypatch):
    # a hostile file of tiny frames or blocks must not stall the start: past the budget it is one stream
    from denpex.ingest import zstd_frames

    framed = _frames(tmp_path / "log.zst", _text(), frame=1 << 16)
    assert frame_index(str(framed), framed.stat().st_size) is not None
    monkeypatch.setattr(zstd_frames, "_MAX_BLOCKS", 10)
    assert frame_index(str(framed), framed.stat().st_size) is None
    monkeypatch.setattr(zstd_frames, "_MAX_BLOCKS", 1 << 21)
    monkeypatch.setattr(zstd_frames, "_MAX_FRAMES", 10)
    assert frame_index(str(framed), framed.stat().st_size) is None


def test_a_frame_whose_header_lies_about_its_size_is_caught_by_the_decompressor(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    text = _text()
    compressor = zstandard.ZstdCompressor(level=1)
    frames = [bytearray(compressor.compress(text[at:at + (1 << 20)])) for at in range(0, len(text), 1 << 20)]
    assert frames[1][4] == 0b10000000  # a 4-byte content size right after the descriptor and window bytes
    size = int.from_bytes(frames[1][6:10], "little")
    frames[1][6:10] = (size - 1000).to_bytes(4, "little")
    path = tmp_path / "lying.zst"
    path.write_bytes(b"".join(frames))
    assert frame_index(str(path), path.stat().st_size) is not None  # the structure adds up
    assert _key(diagnose(path, workers=2)) == _key(diagnose(path, workers=1))


def test_skippable_frames_count_against_the_walk_budget(tmp_path, monkeypatch):
    # skippable frames hold no text but are walked too: a file of millions of them must not stall the start
    import struct

    from denpex.ingest import zstd_frames

    framed = tmp_path / "log.zst"
    two_frames = _frames(tmp_path / "two.zst", _text(), frame=len(_text()) // 2 + 1).read_bytes()
    skippable = struct.pack("<II", 0x184D2A50, 0)
    framed.write_bytes(skippable * 20 + two_frames)
    assert frame_index(str(framed), framed.stat().st_size) is not None  # skippable frames are allowed
    monkeypatch.setattr(zstd_frames, "_MAX_FRAMES", 10)
    assert frame_index(str(framed), framed.stat().st_size) is None
