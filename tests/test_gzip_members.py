"""A .gz of several members is split across cores like a plain file (ingest.gzip_members), with the same answer;
a single member, a damaged member or an index the members contradict is read as one stream."""

from __future__ import annotations

import gzip
import shutil
import subprocess
from pathlib import Path

import pytest

from denpex.api import diagnose
from denpex.ingest import gzip_members
from denpex.ingest.framed_text import Frame, open_text
from denpex.ingest.gzip_members import member_index
from tests.test_engines import _key
from tests.test_zstd_frames import _text, split_gives_the_streams_answer

GZIP = shutil.which("gzip")


def _appended(path: Path, text: bytes, piece: int = 1 << 20) -> Path:
    """What log rotation does: each piece compressed by the gzip program and appended (`gzip -c part >> log.gz`)."""
    assert GZIP is not None
    with open(path, "wb") as out:
        for at in range(0, len(text), piece):
            out.write(subprocess.run([GZIP, "-1", "-c"], input=text[at:at + piece], capture_output=True,
                                     check=True).stdout)
    return path


pytestmark = pytest.mark.skipif(GZIP is None, reason="needs the gzip program")


def test_the_index_finds_appended_members_and_reads_from_any_offset(tmp_path):
    text = _text()
    path = _appended(tmp_path / "log.gz", text)
    members = member_index(str(path), path.stat().st_size)
    assert members is not None and len(members) == -(-len(text) // (1 << 20))
    assert all(member.codec == "gzip" for member in members)
    assert members[-1].text_start + members[-1].text_size == len(text)
    assert gzip.decompress(path.read_bytes()) == text  # what the stream reader gives
    with open_text(str(path), members) as reader:  # any offset, across member ends
        for offset in (0, (1 << 20) - 7, len(text) - 50, len(text) // 2 + 3):
            reader.seek(offset)
            assert reader.read(3000) == text[offset:offset + 3000]
        reader.seek(10)
        assert reader.readline() == text[10:text.index(b"\n", 10) + 1]
        reader.seek(0)
        whole = b"".join(iter(lambda: reader.read(1 << 16), b""))
    assert whole == text


def test_what_cannot_be_split_has_no_index(tmp_path):
    text = _text()
    single = tmp_path / "one.gz"
    single.write_bytes(subprocess.run([GZIP, "-c"], input=text, capture_output=True, check=True).stdout)
    appended = _appended(tmp_path / "log.gz", text)
    truncated = tmp_path / "cut.gz"
    truncated.write_bytes(appended.read_bytes()[:-100])  # the last member's trailer is gone: its size is not
    not_gzip = tmp_path / "plain.gz"
    not_gzip.write_bytes(text)
    assert member_index(str(single), single.stat().st_size) is None
    assert member_index(str(not_gzip), not_gzip.stat().st_size) is None
    members = member_index(str(truncated), truncated.stat().st_size)
    with pytest.raises(OSError), open_text(str(truncated), members) as reader:  # type: ignore[arg-type]
        reader.seek(0)
        while reader.read(1 << 20):
            pass


def test_a_multi_member_gz_split_across_cores_gives_the_plain_files_answer(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    text = _text()
    split_gives_the_streams_answer(_appended(tmp_path / "train.log.gz", text), text, tmp_path, monkeypatch)


def test_an_index_the_members_contradict_falls_back_to_the_stream(tmp_path, monkeypatch):
    # an index that is wrong all the same (a header imitated by compressed bytes would give one): the reader
    # checks each member's size and end where it decompresses it to its end, and the file is read as one stream
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    text = _text()
    path = _appended(tmp_path / "train.log.gz", text)
    real = member_index(str(path), path.stat().st_size)
    assert real is not None
    lying = [Frame(m.offset, m.text_start, m.text_size - (1000 if k == 1 else 0), "gzip")
             for k, m in enumerate(real)]
    lying = [Frame(m.offset, sum(x.text_size for x in lying[:k]), m.text_size, "gzip") for k, m in enumerate(lying)]
    expected = _key(diagnose(path, workers=1))
    monkeypatch.setattr("denpex.scan.fast.member_index", lambda *_: lying)
    assert _key(diagnose(path, workers=2)) == expected
    moved = [real[0], Frame(real[1].offset + 1, real[1].text_start, real[1].text_size, "gzip"), *real[2:]]
    monkeypatch.setattr("denpex.scan.fast.member_index", lambda *_: moved)
    assert _key(diagnose(path, workers=2)) == expected


def test_a_damaged_member_gives_the_streams_partial_answer(tmp_path, monkeypatch):
    monkeypatch.setattr("denpex.scan.fast.PARALLEL_FILE_BYTES", 1 << 20)
    path = _appended(tmp_path / "train.log.gz", _text())
    members = member_index(str(path), path.stat().st_size)
    assert members is not None
    data = bytearray(path.read_bytes())
    middle = members[len(members) // 2].offset + 400  # inside a member's deflate data
    data[middle:middle + 64] = bytes(64)
    path.write_bytes(bytes(data))
    one = diagnose(path, workers=1)
    two = diagnose(path, workers=2)
    assert _key(two) == _key(one)
    assert any("after" in note for note in two.notes), two.notes  # where the stream stopped


def test_the_search_gives_up_on_more_members_than_it_is_worth(tmp_path, monkeypatch):
    path = _appended(tmp_path / "log.gz", _text(), piece=1 << 16)
    assert member_index(str(path), path.stat().st_size) is not None
    monkeypatch.setattr(gzip_members, "_MAX_MEMBERS", 10)
    assert member_index(str(path), path.stat().st_size) is None


def test_sizes_that_could_be_wrong_give_no_index(tmp_path, monkeypatch):
    # a trailer holds the size modulo 4 GiB: only members too small to hold 4 GiB of text (deflate packs at most
    # 1032 bytes into one) are split; zero padding after or between members reads as a size of 0
    text = _text()
    path = _appended(tmp_path / "log.gz", text)
    data = path.read_bytes()
    assert member_index(str(path), len(data)) is not None
    padded = tmp_path / "padded.gz"
    padded.write_bytes(data + bytes(1024))
    assert gzip.decompress(padded.read_bytes()) == text  # the stream reader skips the padding
    assert member_index(str(padded), padded.stat().st_size) is None
    members = member_index(str(path), len(data))
    assert members is not None
    gap = tmp_path / "gap.gz"
    gap.write_bytes(data[: members[1].offset] + bytes(512) + data[members[1].offset :])
    assert member_index(str(gap), gap.stat().st_size) is None
    monkeypatch.setattr(gzip_members, "_EXACT_MEMBER_BYTES", 1 << 15)  # members of ~64 KB now count as too big
    assert member_index(str(path), len(data)) is None


def test_a_single_member_is_given_up_on_without_reading_the_whole_file(tmp_path, monkeypatch):
    single = tmp_path / "one.gz"
    single.write_bytes(subprocess.run([GZIP, "-1", "-c"], input=_text() * 4, capture_output=True, check=True).stdout)
    monkeypatch.setattr(gzip_members, "_EXACT_MEMBER_BYTES", 1 << 16)
    monkeypatch.setattr(gzip_members, "_SEARCH_BLOCK", 1 << 16)
    reads: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, handle):
            self._handle = handle

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self._handle.close()

        def read(self, size=-1):
            data = self._handle.read(size)
            reads.append(len(data))
            return data

        def seek(self, offset):
            return self._handle.seek(offset)

    monkeypatch.setattr(gzip_members, "open", lambda path, mode: Counting(real_open(path, mode)), raising=False)
    assert member_index(str(single), single.stat().st_size) is None
    assert sum(reads) < single.stat().st_size // 2, (sum(reads), single.stat().st_size)
