"""`denpex eval` over the labelled corpus, with the acceptance thresholds of the core issue asserted."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from denpex.evaluate import evaluate, summary_line
from tests.conftest import CORPUS


@pytest.fixture(scope="module")
def score():
    return evaluate([str(CORPUS)])


def test_corpus_is_complete(score):
    # every case folder of the shared corpus is here, so a fresh clone scores the same
    assert len(score.results) >= 90
    assert not [r for r in score.results if r.error], [r.error for r in score.results if r.error]


def test_category_rate(score):
    assert score.fraction("category") >= 0.85, summary_line(score)


def test_decisive_line_rate(score):
    assert score.fraction("decisive_line") >= 0.85, summary_line(score)


def test_verdict_rate(score):
    assert score.fraction("verdict") >= 0.90, summary_line(score)


def test_initiating_rank_rate(score):
    assert score.fraction("rank") >= 0.90, summary_line(score)


def test_every_healthy_log_is_clean(score):
    healthy = [r for r in score.results if r.label.get("category") == "none"]
    assert len(healthy) >= 5
    dirty = [(r.case, r.category, r.evidence) for r in healthy if r.verdict != "clean"]
    assert not dirty


def test_eval_cli_enforces_thresholds():
    ok = subprocess.run(
        [sys.executable, "-m", "denpex", "eval", str(CORPUS), "--min-category", "0.85",
         "--min-decisive", "0.85", "--min-verdict", "0.9", "--format", "json"],
        capture_output=True, text=True, check=False,
    )
    assert ok.returncode == 0, ok.stderr
    rates = json.loads(ok.stdout)["rates"]
    assert rates["category"]["total"] >= 80


def test_eval_cli_fails_below_threshold(tmp_path):
    # a copy of a real case whose label is deliberately wrong (in tmp, never in the corpus) must score 0
    case = tmp_path / "relabelled"
    case.mkdir()
    src = CORPUS / "generated" / "gen-cpp-compile-error"
    (case / "log.txt").write_bytes((src / "log.txt").read_bytes())
    label = json.loads((src / "label.json").read_text())
    label["category"] = "dist.collective_timeout"
    (case / "label.json").write_text(json.dumps(label))
    result = subprocess.run(
        [sys.executable, "-m", "denpex", "eval", str(tmp_path), "--min-category", "0.5"],
        capture_output=True, text=True, check=False,
    )
    assert result.returncode == 4
    assert "MISS" in result.stdout and "below threshold" in result.stderr


def test_a_decisive_line_quoted_with_its_colour_codes_matches_the_line_as_shown():
    # FORCE_COLOR rich output (real torchrun run): the label quotes the raw line, escape codes and all; the report
    # shows the line as a terminal does
    case = CORPUS.parent / "blind" / "dev28" / "run28b-rich-torchrun-forcecolor"
    wanted = json.loads((case / "label.json").read_text())["decisive_line"]
    assert "\x1b[" in wanted
    result = evaluate([str(case)]).results[0]
    assert "\x1b" not in (result.evidence or "") and result.checks["decisive_line"]
