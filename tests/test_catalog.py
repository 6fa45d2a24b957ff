"""The catalog is data: every entry validates, refers to real entries, and wins on its real fixtures."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from denpex import diagnose
from denpex.catalog import load
from denpex.catalog.loader import CatalogError, load_entry
from denpex.catalog.schema import CATEGORIES
from denpex.evaluate import case_input
from tests.conftest import CORPUS, REPO

CATALOG = load()
ENTRIES = {e.id: e for e in CATALOG.entries}
FIXTURES = [(e.id, f.path, f.wins) for e in CATALOG.entries for f in e.fixtures]


def test_catalog_has_the_compile_stack_core():
    required = {
        "inductor-lowering-exception", "backend-compiler-failed", "inductor-error-wrapper", "cpp-compile-error",
        "cxx-compiler-missing", "python-h-missing", "cache-corrupt-stale-artifact", "cache-dir-unusable",
        "custom-backend-data-dependent-break", "graph-break-item", "graph-break-data-dependent-branch",
        "recompile-limit", "cudagraph-skipped", "triton-compile-error", "triton-out-of-resources", "cuda-oom",
        "device-assert-kernel", "illegal-memory-access", "nccl-error", "nccl-watchdog-timeout",
        "torchrun-child-failed", "host-oom-killed",
    }
    assert required <= set(ENTRIES)


def test_categories_are_the_corpus_ids():
    readme = (CORPUS / "README.md").read_text()
    listed = set(re.findall(r"`((?:compile|dist|mem|cuda|env|user)\.\w+)`", readme))
    assert set(CATEGORIES) == listed
    assert {e.category for e in CATALOG.entries} <= set(CATEGORIES)


def test_every_entry_is_documented():
    for entry in CATALOG.entries:
        assert len(entry.explanation.split()) >= 15, entry.id
        assert entry.checklist and entry.fix.strip(), entry.id
        assert entry.verify.startswith("denpex verify"), entry.id
        assert entry.siblings, f"{entry.id} names no competing hypothesis"


@pytest.mark.parametrize(("entry_id", "path", "wins"), FIXTURES, ids=[f"{e}:{Path(p).name}" for e, p, _ in FIXTURES])
def test_entry_is_found_on_its_fixture(entry_id, path, wins):
    case = REPO / path
    assert case.exists(), f"{entry_id}: fixture {path} is missing"
    target = case
    if (case / "label.json").exists():
        target = case_input(case, json.loads((case / "label.json").read_text()))
    result = diagnose(target)
    if wins:
        assert result.root_cause is not None, f"{entry_id} found nothing on {path}"
        assert result.root_cause.entry_id == entry_id, (
            f"{path}: {result.root_cause.entry_id} won, not {entry_id}: {result.root_cause.evidence.text!r}"
        )
    else:  # found, as itself or re-filed by one of its refine rules
        assert entry_id in {f.entry_id for f in result.findings} | {
            f.reason.split()[2].rstrip(":") for f in result.findings if f.reason.startswith("re-filed from ")
        }


def test_fixture_categories_match_their_labels():
    for entry in CATALOG.entries:
        for fixture in entry.fixtures:
            label_file = REPO / fixture.path / "label.json"
            if fixture.wins and label_file.exists():
                label = json.loads(label_file.read_text())
                assert label["category"] == entry.category, (entry.id, fixture.path)


def test_no_entry_fires_on_healthy_logs():
    healthy = [p.parent for p in CORPUS.rglob("label.json") if json.loads(p.read_text())["category"] == "none"]
    assert len(healthy) >= 5
    for case in healthy:
        result = diagnose(case / "log.txt")
        # advisory entries (torch's own UserWarnings) are listed on healthy logs too, and never change the verdict
        loud = [(f.entry_id, f.evidence.text) for f in result.findings
                if f.role.value != "context" and not CATALOG.get(f.entry_id).advisory]
        assert not loud, f"{case.name}: {loud}"
        assert result.verdict.value == "clean", case.name


def test_bad_entry_is_rejected_with_its_file_name(tmp_path):
    bad = tmp_path / "broken-entry.toml"
    bad.write_text('id = "broken-entry"\ncategory = "compile.nonsense"\n')
    with pytest.raises(CatalogError, match="broken-entry.toml"):
        load_entry(bad)
    mismatch = tmp_path / "other-name.toml"
    mismatch.write_text((REPO / "src/denpex/catalog/entries/cuda-oom.toml").read_text())
    with pytest.raises(CatalogError, match="must match the file name"):
        load_entry(mismatch)


def test_dangling_sibling_is_rejected(tmp_path):
    text = (REPO / "src/denpex/catalog/entries/cuda-oom.toml").read_text()
    (tmp_path / "cuda-oom.toml").write_text(text)
    load.cache_clear()
    try:
        with pytest.raises(CatalogError, match="unknown entry"):
            load(str(tmp_path))
    finally:
        load.cache_clear()


def test_generated_catalog_docs_are_current(tmp_path):
    # docs/catalog is generated from the entry files (python -m denpex.catalog.docs docs/catalog)
    from denpex.catalog.docs import write_docs

    write_docs(tmp_path)
    committed = REPO / "docs" / "catalog"
    fresh = {p.name: p.read_text() for p in tmp_path.glob("*.md")}
    current = {p.name: p.read_text() for p in committed.glob("*.md")}
    stale = sorted(name for name in fresh.keys() | current.keys() if fresh.get(name) != current.get(name))
    assert not stale, f"regenerate docs/catalog: {stale[:5]}"


def test_every_entry_has_a_fixture():
    missing = [e.id for e in CATALOG.entries if not e.fixtures and e.matched_by == "signature"]
    assert not missing


def test_validated_catalog_is_cached_and_follows_its_sources(tmp_path, monkeypatch):
    """The cache gives back the same entries; an edited entry file or a damaged cache file is re-validated."""
    monkeypatch.setenv("DENPEX_CACHE_DIR", str(tmp_path / "cache"))
    entries = tmp_path / "entries"
    entries.mkdir()
    source = REPO / "src/denpex/catalog/entries"
    for name in ("host-oom-killed.toml", "nccl-watchdog-timeout.toml"):  # siblings cut: they name entries not copied
        text = (source / name).read_text()
        (entries / name).write_text(text[: text.index("[[sibling]]")] if "[[sibling]]" in text else text)
    try:
        load.cache_clear()
        first = load(str(entries))
        cached = list((tmp_path / "cache").glob("catalog-*"))
        assert len(cached) == 1
        load.cache_clear()
        assert load(str(entries)).entries == first.entries  # from the cache this time

        cached[0].write_bytes(b"not a pickle")
        load.cache_clear()
        assert load(str(entries)).entries == first.entries

        oom = entries / "host-oom-killed.toml"
        oom.write_text(oom.read_text().replace('title = "', 'title = "EDITED ', 1))
        load.cache_clear()
        assert load(str(entries)).get("host-oom-killed").title.startswith("EDITED ")
        assert len(list((tmp_path / "cache").glob("catalog-*"))) == 2
    finally:
        load.cache_clear()


@pytest.mark.parametrize("where", ["anchor", "priority", "checklist"])
def test_field_constraints_are_enforced(tmp_path, where):
    """Lengths and ranges written as annotations on the dataclasses are checked by pydantic at load."""
    text = (REPO / "src/denpex/catalog/entries/cuda-oom.toml").read_text()
    if where == "anchor":  # 2 characters, under the minimum of 3
        text = text.replace('anchor = "', 'anchor = "ab" #', 1)
    elif where == "priority":
        text = text.replace("priority = ", "priority = 101 #", 1) if "priority = " in text else \
            text.replace('role = "cause"', 'role = "cause"\npriority = 101', 1)
    else:
        start = text.index("checklist = [")
        text = text[:start] + "checklist = []\n" + text[text.index("]", start) + 1 :]
    bad = tmp_path / "cuda-oom.toml"
    bad.write_text(text)
    with pytest.raises(CatalogError, match=where):
        load_entry(bad)
