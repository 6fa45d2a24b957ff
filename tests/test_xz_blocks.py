"""An .xz of several blocks is split across cores like a plain file (ingest.xz_blocks): its index gives every
block's place and size exactly; a single block, a damaged file or another filter chain is read as one stream."""

from __future__ import annotations

import lzma
import shutil
import subprocess
from pathlib import Path

import pytest

from denpex.api import diagnose
from denpex.ingest.framed_text import open_text
from denpex.ingest.xz_blocks import block_index
from tests.test_engines import _key
from tests.test_zstd_frames import _text, split_gives_the_streams_answer

XZ = shutil.which("xz")
pytestmark = pytest.mark.skipif(XZ is None, reason="needs the xz program")


def _blocks(path: Path, text: bytes, *options: str) -> Path:
    """What `xz -T0` writes on a multi-core machine: independent blocks, each recorded in the index."""
    assert XZ is not None
    path.write_bytes(subprocess.run([XZ, "-1", "-c", *options], input=text, capture_output=True, check=True).stdout)
    return path


def test_the_index_gives_every_blocks_place_and_the_text_reads_from_any_offset(tmp_path):
    text = _text()
    path = _blocks(tmp_path / "log.xz", text, "-T2", "--block-size=1MiB")
    blocks = block_index(str(path), path.stat().st_size)
    assert blocks is not None and len(blocks) == -(-len(text) // (1 << 20))
    assert blocks[-1].text_start + blocks[-1].text_size == len(text)
    with open_text(str(path), blocks) as reader:
        for offset in (0, (1 << 20) - 7, len(text) - 50, len(text) // 2 + 3):
            reader.seek(offset)
            assert reader.read(3000) == text[offset:offset + 3000]
        reader.seek(0)
        assert b"".join(iter(lambda: reader.read(1 << 16), b"")) == text


def test_what_cannot_be_split_has_no_index(tmp_path):
    text = _text()
    single = _blocks(tmp_path / "one.xz", text, "-T1")  # one block: what xz before 5.6 writes by default
    two_streams = tmp_path / "two.xz"
    two_streams.write_bytes(lzma.compress(text[:100_000]) + lzma.compress(text[100_000:]))
    blocks = _blocks(tmp_path / "log.xz", text, "-T2", "--block-size=1MiB").read_bytes()
    truncated = tmp_path / "cut.xz"
    truncated.write_bytes(blocks[:-100])
    delta = _blocks(tmp_path / "delta.xz", text, "-T2", "--block-size=1MiB", "--delta=dist=4", "--lzma2")
    for path in (single, two_streams, truncated, delta):
        assert block_index(str(path), path.stat().st_size) is None, path.name


def test_a_multi_block_xz_split_across_cores_gives_the_plain_files_answer(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    text = _text()
    split_gives_the_streams_answer(_blocks(tmp_path / "train.log.xz", text, "-T2", "--block-size=1MiB"), text,
                                   tmp_path, monkeypatch)


def test_a_damaged_block_gives_the_streams_partial_answer(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    # the whole file is ~75 KB: the stream reader reads 64 KB at a time but feeds its decompressor 16 KB at a time,
    # so the text before the damage is kept (fed 64 KB at once, this file gave `cannot read` and no answer)
    path = _blocks(tmp_path / "train.log.xz", _text(), "-T2", "--block-size=1MiB")
    blocks = block_index(str(path), path.stat().st_size)
    assert blocks is not None and path.stat().st_size < 1 << 17
    data = bytearray(path.read_bytes())
    middle = blocks[-1].offset + 400  # inside the last block's LZMA2 data: the index still adds up
    data[middle:middle + 64] = bytes(64)
    path.write_bytes(bytes(data))
    assert block_index(str(path), path.stat().st_size) is not None
    one = diagnose(path, workers=1)
    two = diagnose(path, workers=2)
    assert _key(two) == _key(one)
    assert any("after" in note for note in two.notes), two.notes
