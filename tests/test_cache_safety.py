"""Denpex's cache holds data, never code, and ignores what someone else could have written (issue 14, item 12)."""

from __future__ import annotations

import os
import pickle

import pytest

from denpex.cachefiles import cache_dir, read_cached, write_cached
from denpex.catalog import loader


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("DENPEX_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DENPEX_NO_CACHE", raising=False)
    loader.load.cache_clear()
    yield tmp_path / "cache"
    loader.load.cache_clear()


def test_the_cached_catalog_is_json_and_equals_the_validated_one(own_cache):
    fresh = loader.load()
    files = list(own_cache.glob("catalog-*"))
    assert len(files) == 1 and files[0].suffix == ".json"
    assert oct(files[0].stat().st_mode & 0o777) == oct(0o600) and oct(own_cache.stat().st_mode & 0o777) == oct(0o700)
    loader.load.cache_clear()
    cached = loader.load()
    assert cached.entries == fresh.entries
    entries = loader._validated(loader.entries_dir(), sorted(loader.entries_dir().glob("*.toml")))
    assert cached.entries == entries.entries


class _Payload:
    def __reduce__(self):
        return (open, (os.environ["DENPEX_MARKER"], "w"))


def test_a_pickle_planted_in_the_cache_is_never_executed(own_cache, tmp_path, monkeypatch):
    loader.load()
    marker = tmp_path / "executed"
    monkeypatch.setenv("DENPEX_MARKER", str(marker))
    (target,) = own_cache.glob("catalog-*")
    target.write_bytes(pickle.dumps(_Payload()))
    loader.load.cache_clear()
    catalog = loader.load()  # the damaged file is rebuilt from the TOML sources
    assert not marker.exists()
    assert catalog.get("cuda-oom") is not None


def test_a_cache_file_others_can_write_is_ignored(own_cache):
    path = cache_dir() / "probe-x.bin"
    write_cached(path, b"data")
    assert read_cached(path) == b"data"
    path.chmod(0o666)
    assert read_cached(path) is None
    path.chmod(0o600)
    own_cache.chmod(0o777)
    assert read_cached(path) is None
    own_cache.chmod(0o700)
