"""Real 2-rank NCCL failures (2x H200, torch 2.11, NCCL 2.28; tests/corpus/gpu-multi, generators/gpu_multi).

For every case and every input a user would have (the torchrun console log.txt, and the per-rank files of
--log-dir where the run kept them): the root cause has the label's category, initiating rank and decisive
line, the report says why that rank, and the echoes on the waiting rank (NCCL watchdog timeouts, torchrun's
SIGTERMs) are filed as collateral, never as the root, whenever the failing rank's own cause is in the log.
Where Denpex misses, the test stays as it should be and is marked xfail(strict=True) with what it said.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from denpex import diagnose
from denpex.catalog import load
from denpex.model import Role, Verdict
from denpex.report.json_schema import build
from tests.conftest import CORPUS

CASES = CORPUS / "gpu-multi"
ECHO_CATEGORIES = {"dist.collective_timeout", "dist.peer_or_store_failure"}
LABELS = {p.parent.name: json.loads(p.read_text()) for p in sorted(CASES.glob("*/label.json"))}


def _inputs() -> list[tuple[str, str]]:
    out = []
    for case in LABELS:
        out.append((case, "log.txt"))
        if (CASES / case / "ranks").is_dir():
            # gpu-multi-sigkill's per-rank files hold no trace of the kill (exit code -9 is only in torchrun's
            # console lines), so there the per-rank files are read together with the console log
            out.append((case, "ranks+log.txt" if case == "gpu-multi-sigkill" else "ranks"))
    return out


INPUTS = _inputs()

# The misdiagnosis: Denpex gets category and decisive line right but not the initiating rank.
# (case, input) -> why Denpex misses the initiating rank there; empty while it names every labelled rank
RANK_MISSES: dict[tuple[str, str], str] = {}


def _paths(case: str, which: str) -> list[Path]:
    folder = CASES / case
    return {
        "log.txt": [folder / "log.txt"],
        "ranks": [folder / "ranks"],
        "ranks+log.txt": [folder / "ranks", folder / "log.txt"],
    }[which]


_CACHE: dict[tuple[str, str], object] = {}


def _diagnosis(case: str, which: str):
    key = (case, which)
    if key not in _CACHE:
        _CACHE[key] = diagnose(_paths(case, which))
    return _CACHE[key]


def _ids(params: list[tuple[str, str]]) -> list[str]:
    return [f"{c}:{w}" for c, w in params]


def test_every_case_is_here():
    assert len(LABELS) >= 12
    for case, label in LABELS.items():
        assert label["id"] == case
        assert "2x NVIDIA H200" in label["source"] and "tests/corpus/generators/gpu_multi/" in label["source"]
        if label.get("decisive_file"):
            assert (CASES / case / label["decisive_file"]).is_file()


@pytest.mark.parametrize(("case", "which"), INPUTS, ids=_ids(INPUTS))
def test_category_verdict_and_decisive_line(case, which):
    label = LABELS[case]
    result = _diagnosis(case, which)
    if label["category"] == "none":
        assert result.verdict is Verdict.CLEAN, [(f.entry_id, f.evidence.text) for f in result.findings]
        assert result.root_cause is None
        return
    root = result.root_cause
    assert root is not None
    assert result.verdict is (Verdict.FAILURE if label["fatal"] else Verdict.WARNING)
    assert root.category == label["category"], (root.entry_id, root.evidence.text)
    wanted = [label["decisive_line"], *label.get("also_acceptable", [])]
    assert any(w in root.evidence.text for w in wanted), root.evidence.text


RANKED = [p for p in INPUTS if LABELS[p[0]]["category"] != "none"]
RANK_PARAMS = [
    pytest.param(c, w, marks=pytest.mark.xfail(strict=True, reason=RANK_MISSES[(c, w)]))
    if (c, w) in RANK_MISSES
    else (c, w)
    for c, w in RANKED
]


@pytest.mark.parametrize(("case", "which"), RANK_PARAMS, ids=_ids(RANKED))
def test_initiating_rank(case, which):
    root = _diagnosis(case, which).root_cause
    assert root is not None
    wanted = LABELS[case]["initiating_rank"]
    if wanted is None:
        # the log cannot tell which rank started it: Denpex may only offer torchrun's hint, flagged as such
        assert root.rank is None or "low confidence" in root.rank_reason, (root.rank, root.rank_reason)
    else:
        assert root.rank == wanted, (root.rank, root.rank_reason, root.evidence.text)


@pytest.mark.parametrize(("case", "which"), RANKED, ids=_ids(RANKED))
def test_report_says_which_evidence_decided_the_rank(case, which):
    result = _diagnosis(case, which)
    report = build(result, load())
    assert report.root_cause is not None
    assert report.root_cause.rank_reason.strip()


@pytest.mark.parametrize(("case", "which"), RANKED, ids=_ids(RANKED))
def test_timeouts_and_peer_loss_are_collateral(case, which):
    label = LABELS[case]
    result = _diagnosis(case, which)
    root = result.root_cause
    assert root is not None
    echoes = [f for f in result.findings if f.category in ECHO_CATEGORIES and f.role is not Role.CONTEXT]
    if label["category"] not in ECHO_CATEGORIES:
        # the failing rank's own cause is in the log: every timeout / lost-peer line is an echo of it
        assert root.role is Role.CAUSE
        assert root.category not in ECHO_CATEGORIES
        for f in echoes:
            assert f is not root
            assert f.role is Role.COLLATERAL, (f.entry_id, f.role, f.evidence.text)
    else:
        # a straggler has no error of its own: the first timeout is the evidence, the rest are echoes
        for f in echoes:
            if f is not root:
                assert f.role is Role.COLLATERAL, (f.entry_id, f.role, f.evidence.text)
    if "log.txt" in which:
        # the waiting rank's timeout and/or torchrun stopping it are in the console log and are grouped
        assert any(f.role is Role.COLLATERAL for f in echoes)
        assert result.collateral


WATCHDOG = [
    ("gpu-multi-oom-watchdog", "log.txt"),
    ("gpu-multi-oom-watchdog", "ranks"),
    ("gpu-multi-oom-watchdog-aeh0", "log.txt"),
    ("gpu-multi-oom-watchdog-nccl-info", "log.txt"),
]


@pytest.mark.parametrize(("case", "which"), WATCHDOG, ids=_ids(WATCHDOG))
def test_rank0_watchdog_timeout_is_an_echo_of_rank1_oom(case, which):
    # the hard case: rank 0 is the first to die (SIGABRT after its watchdog timeout, or hangs), yet the cause
    # is rank 1's OutOfMemoryError; torchrun's "Root Cause (first observed failure)" names rank 0
    result = _diagnosis(case, which)
    assert result.root_cause is not None and result.root_cause.category == "mem.cuda_oom"
    timeouts = [f for f in result.findings if f.entry_id == "nccl-watchdog-timeout"]
    assert timeouts, [f.entry_id for f in result.findings]
    assert all(f.role is Role.COLLATERAL and f.rank == 0 for f in timeouts)
