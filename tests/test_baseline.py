"""`diagnose --baseline GOOD FAILED`: the first divergence from a healthy run, on the real run pairs of the
corpus (tests/corpus/pairs/<id>/{healthy,failed}); the job's phase on real corpus logs; the masking."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from denpex.catalog import load
from denpex.cli import cli
from denpex.exit_codes import ExitCode
from denpex.masking import normalise_line
from tests.conftest import CORPUS

PAIRS = sorted(p for p in (CORPUS / "pairs").iterdir() if (p / "label.json").is_file())
EXAMPLES = Path(__file__).parent.parent / "src" / "denpex" / "examples"
# entries that file what no signature matched
_GENERIC = {"uncaught_exception", "process_exit", "rank_silence", "rank_finished"}


def _diagnose(*args: str) -> dict:
    result = CliRunner().invoke(cli, ["diagnose", "--format", "json", *args])
    assert result.exit_code in (0, 1, 3), result.output
    return json.loads(result.stdout)


def _label(pair: Path) -> dict:
    return json.loads((pair / "label.json").read_text(encoding="utf-8"))


def _hits(text: str, label: dict) -> bool:
    return any(want in text for want in [label["decisive_line"], *label.get("also_acceptable", [])])


@pytest.fixture(scope="module")
def runs() -> dict[str, tuple[dict, dict]]:
    """Per pair: (plain diagnosis of the failed run, diagnosis with the healthy run as baseline)."""
    out = {}
    for pair in PAIRS:
        failed, healthy = str(pair / "failed" / "log.txt"), str(pair / "healthy" / "log.txt")
        out[pair.name] = (_diagnose(failed), _diagnose("--baseline", healthy, failed))
    return out


def _unmatched(plain: dict) -> bool:
    """No catalog entry explains the failure: clean, or only a generic entry."""
    root = plain["root_cause"]
    if root is None:
        return True
    entry = load().get(root["id"])
    return entry is not None and entry.matched_by in _GENERIC


def test_the_corpus_has_pairs():
    assert len(PAIRS) >= 10, [p.name for p in PAIRS]


def test_every_pair_reports_a_first_divergence(runs):
    for name, (_, with_baseline) in runs.items():
        div = with_baseline["divergence"]
        assert div is not None and div["against"] == "baseline", name
        assert div["ranks"], name
        assert div["baselines"] == [str(CORPUS / "pairs" / name / "healthy" / "log.txt")]


def test_where_no_entry_matches_the_first_divergent_line_is_the_decisive_line(runs):
    judged = {name: pair for name, pair in runs.items() if _unmatched(pair[0])}
    assert len(judged) >= 5, sorted(judged)
    hits = []
    for name, (_, with_baseline) in judged.items():
        root = with_baseline["root_cause"]
        div = with_baseline["divergence"]
        assert div["decisive"], name
        assert root["rank_evidence"] == "first_divergence", name
        assert root["reason"].startswith("first line that differs from the healthy run"), name
        assert root["evidence"] == div["ranks"][0]["line"], name
        if _hits(root["evidence"]["text"], _label(CORPUS / "pairs" / name)):
            hits.append(name)
    rate = len(hits) / len(judged)
    print(f"\nfirst divergence = decisive line: {len(hits)}/{len(judged)} = {rate:.1%} of the pairs no entry "
          f"matches ({', '.join(sorted(judged))}); missed: {sorted(set(judged) - set(hits))}")
    assert rate >= 0.8


def test_the_first_divergent_rank_is_the_initiating_rank(runs):
    ranked = {name: _label(CORPUS / "pairs" / name)["initiating_rank"] for name in runs}
    ranked = {name: rank for name, rank in ranked.items() if rank is not None}
    assert len(ranked) >= 8
    right = [name for name, rank in ranked.items() if runs[name][1]["divergence"]["first_rank"] == rank]
    print(f"\nfirst divergent rank = initiating rank: {len(right)}/{len(ranked)}; missed: "
          f"{sorted(set(ranked) - set(right))}")
    assert len(right) / len(ranked) >= 0.9
    for name, (_, with_baseline) in runs.items():  # and the root cause says so where the divergence decided
        if with_baseline["divergence"]["decisive"] and name in ranked:
            assert with_baseline["root_cause"]["rank"] == ranked[name], name


def test_where_an_entry_matches_the_divergence_is_extra_evidence_only(runs):
    matched = {name: pair for name, pair in runs.items() if not _unmatched(pair[0])}
    assert len(matched) >= 5
    for name, (plain, with_baseline) in matched.items():
        assert not with_baseline["divergence"]["decisive"], name
        assert with_baseline["root_cause"]["id"] == plain["root_cause"]["id"], name
        assert with_baseline["root_cause"]["evidence"] == plain["root_cause"]["evidence"], name
        assert with_baseline["verdict"] == plain["verdict"], name


def test_a_rank_that_stopped_logging_gets_the_healthy_runs_next_line(runs):
    _, with_baseline = runs["cpu-hang-silent"]
    first = with_baseline["divergence"]["ranks"][0]
    assert (first["rank"], first["kind"]) == (2, "missing")
    assert "[rank2] INFO trainer: step 5/12" in first["line"]["text"]
    assert first["expected"]["file"].endswith("healthy/log.txt")
    assert "[rank2] INFO trainer: step 6/12" in first["expected"]["text"]


def test_the_reports_show_the_divergence():
    pair = CORPUS / "pairs" / "cpu-exit0-early"
    args = ["--baseline", str(pair / "healthy" / "log.txt"), str(pair / "failed" / "log.txt")]
    for fmt, title in (("terminal", "First divergence from the healthy run"),
                       ("markdown", "### First divergence from the healthy run"),
                       ("html", '<section id="divergence">')):
        result = CliRunner().invoke(cli, ["diagnose", "--format", fmt, *args], terminal_width=200)
        assert result.exit_code == ExitCode.FAILURE, result.output
        assert title in result.stdout, fmt
        assert "training finished after 6 steps" in result.stdout, fmt


def test_several_baselines_and_a_folder_of_rank_files():
    pair = CORPUS / "pairs" / "cpu-keyerror"
    healthy = str(pair / "healthy" / "log.txt")
    out = _diagnose("--baseline", healthy, "--baseline", str(pair / "healthy" / "ranks"),
                    str(pair / "failed" / "log.txt"))
    assert len(out["divergence"]["baselines"]) == 2
    assert "KeyError: 'label'" in out["root_cause"]["evidence"]["text"]
    assert out["divergence"]["first_rank"] == 2


def test_a_missing_baseline_is_one_line_of_error():
    pair = CORPUS / "pairs" / "cpu-keyerror"
    result = CliRunner().invoke(cli, ["diagnose", "--baseline", str(pair / "nope.txt"), str(pair / "failed")])
    assert result.exit_code == ExitCode.BAD_INPUT
    assert result.output.count("\n") == 1 and "nope.txt" in result.output


def test_without_a_baseline_the_ranks_are_compared_with_each_other():
    out = _diagnose(str(EXAMPLES / "torchrun-4-ranks-keyerror.log"))
    div = out["divergence"]
    assert div["against"] == "ranks" and div["baselines"] == [] and not div["decisive"]
    assert div["first_rank"] == 2
    assert "KeyError: 'sample_02_00003'" in div["ranks"][0]["line"]["text"]


# --- normalisation: the keys compare what a job said, not when, where or as which process


def test_keys_mask_what_varies_between_runs_of_one_job():
    def key(text: str) -> str:
        return normalise_line(text, keep_shape=True)

    pair = CORPUS / "pairs" / "cpu-keyerror"
    healthy = (pair / "healthy" / "log.txt").read_text().splitlines()
    failed = (pair / "failed" / "log.txt").read_text().splitlines()
    assert key(healthy[0]) == key(failed[0])  # torchrun's banner: timestamp and pid differ
    assert healthy[0] != failed[0]
    assert key("Connection closed by peer [127.0.0.1]:49541") == key("Connection closed by peer [10.0.0.7]:4315")
    assert key("tensor at 0x7f3a2b1c00 freed") == key("tensor at 0x55d1e0a9f8 freed")
    assert key("error_file: /tmp/torchelastic_k2j1_x9/none_ab12/attempt_0/0/error.json") == key(
        "error_file: /tmp/torchelastic_zz81_q0/none_c3d4/attempt_0/0/error.json")
    assert key("rendezvous on node-17.cluster.internal done") == key("rendezvous on node-3.cluster.internal done")
    # numbers keep their shape: a config value or a step count that differs is a divergence
    assert key("config: steps=12 batch=32 lr=0.5") != key("config: steps=12 batch=32 lr=0.05")
    assert key("training finished after 6 steps") != key("training finished after 12 steps")
    assert key("step 3/12 loss=2.3413") == key("step 4/12 loss=2.2974")
    # without keep_shape (fleet fingerprints, comparing ranks) every number is one mask
    assert normalise_line("lr=0.5") == normalise_line("lr=0.05") == "lr=<n>"


# --- phases, on real logs


def _phase(path: Path) -> dict | None:
    return _diagnose(str(path))["phase"]


def test_a_keyerror_after_step_2_is_in_step_3():
    assert _phase(EXAMPLES / "torchrun-4-ranks-keyerror.log") == {"name": "step", "step": 3}


def test_compile_failures_say_compile():
    assert _phase(EXAMPLES / "inductor-lowering-error.log") == {"name": "compile", "step": None}
    assert _phase(CORPUS / "pairs" / "gpu-triton-smem" / "failed" / "log.txt")["name"] == "compile"
    real = []  # every fatal compile failure of a real run (generated on CPU, gpu on an H200)
    for label_file in sorted([*(CORPUS / "generated").rglob("label.json"), *(CORPUS / "gpu").rglob("label.json")]):
        label = json.loads(label_file.read_text())
        if label["category"].startswith("compile.") and label.get("fatal") is not False:
            log = label_file.parent / "log.txt"
            if log.is_file():
                real.append((label_file.parent.name, (_phase(log) or {}).get("name")))
    said = [name for name, phase in real if phase == "compile"]
    print(f"\ncompile failures of real runs whose phase is compile: {len(said)}/{len(real)}; others: "
          f"{[(n, p) for n, p in real if p != 'compile']}")
    assert len(real) >= 20 and len(said) / len(real) >= 0.9


def test_a_failure_at_a_numbered_step_names_it(runs):
    plain, _ = runs["cpu-nan-assert"]
    assert plain["phase"] == {"name": "step", "step": 8}  # "loss is nan at step 8 on rank 2"
    plain, _ = runs["gpu-nan-guard"]
    assert plain["phase"] == {"name": "step", "step": 3}  # "NaN guard: loss is inf at step 3"


def test_the_phase_table_is_data():
    text = (Path(__file__).parent.parent / "src" / "denpex" / "analyze" / "phases.toml").read_text()
    names = re.findall(r'^name = "([^"]+)"', text, re.MULTILINE)
    assert names == ["launch", "rendezvous", "model load", "compile", "checkpoint", "shutdown"]


def test_a_run_that_stopped_short_with_no_error_is_a_failure_against_its_baseline(tmp_path):
    # the healthy run's own first 30 lines: a job cut off (node lost, killed from outside) that printed no error
    healthy = CORPUS / "pairs" / "cpu-keyerror" / "healthy" / "log.txt"
    cut = tmp_path / "cut.log"
    cut.write_text("".join(healthy.read_text().splitlines(keepends=True)[:30]))
    assert _diagnose(str(cut))["verdict"] == "clean"
    out = _diagnose("--baseline", str(healthy), str(cut))
    root = out["root_cause"]
    assert out["verdict"] == "failure" and out["divergence"]["decisive"]
    assert root["id"] == "baseline-divergence" and root["rank_evidence"] == "first_divergence"
    first = out["divergence"]["ranks"][0]
    assert first["kind"] == "missing" and first["expected"]["file"] == str(healthy)
    assert root["evidence"] == first["line"]
    result = CliRunner().invoke(cli, ["diagnose", "--baseline", str(healthy), str(cut)], terminal_width=120)
    assert result.exit_code == ExitCode.FAILURE and "stopped after" in result.stdout
