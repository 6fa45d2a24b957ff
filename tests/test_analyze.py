"""Causal ranking on real logs: unwrap wrappers, causes over echoes, one event at a time, honest verdicts."""

from __future__ import annotations

from denpex import diagnose
from denpex.model import Role, Verdict
from tests.conftest import CORPUS

GEN = CORPUS / "generated"
REAL = CORPUS / "realworld"


def _roles(result):
    return {(f.entry_id, f.role) for f in result.findings}


def test_wrapper_is_unwrapped_to_the_backend_exception():
    result = diagnose(GEN / "gen-custom-backend-unsupported-op" / "log.txt")
    root = result.root_cause
    assert root.evidence.text.startswith("NotImplementedError: ASIC backend cannot lower")
    assert root.category == "compile.backend_internal_error"  # raised under Dynamo's call into the backend
    assert ("backend-compiler-failed", Role.WRAPPER) in _roles(result)


def test_lowering_exception_details_are_captured():
    root = diagnose(GEN / "gen-lowering-adaptive-maxpool-long" / "log.txt").root_cause
    assert root.entry_id == "inductor-lowering-exception"
    assert root.fields["op"] == "aten.adaptive_max_pool2d.default"
    assert "torch.int64" in root.fields["dtype"]
    assert "[2, 1, 32, 32]" in root.fields["size"]
    assert root.fields["device"] == ["cpu"]


def test_source_echoed_in_a_traceback_is_not_evidence():
    root = diagnose(REAL / "gh-nixpkgs-pr-446105" / "log.txt").root_cause
    assert "raise exc.InvalidCxxCompiler" not in root.evidence.text
    assert "InvalidCxxCompiler: No working C++ compiler found" in root.evidence.text


def test_cause_on_one_rank_outranks_echoes_on_the_others():
    result = diagnose(GEN / "gen-dist-rank2-keyerror" / "log.txt")
    root = result.root_cause
    assert root.rank == 2 and "KeyError" in root.evidence.text
    collateral = [f for f in result.findings if f.role is Role.COLLATERAL]
    assert {f.entry_id for f in collateral} >= {"peer-connection-lost", "torchrun-sigterm-survivors"}
    assert {f.evidence.rank for f in collateral if f.entry_id == "peer-connection-lost"} == {1, 3}


def test_per_rank_files_of_a_log_dir():
    result = diagnose(GEN / "gen-dist-rank2-keyerror-logdir" / "ranks")
    assert result.root_cause.rank == 2
    assert result.root_cause.evidence.file.endswith("rank2_stderr.log")
    assert set(result.ranks) == {0, 1, 2, 3}


def test_straggler_is_the_rank_missing_from_the_timeouts():
    root = diagnose(GEN / "gen-dist-rank3-straggler" / "log.txt").root_cause
    assert root.category == "dist.collective_timeout"
    assert root.rank == 3
    assert "absent" in root.rank_reason


def test_earlier_kernel_assertion_outranks_the_async_cuda_error():
    result = diagnose(REAL / "gh-pytorch-unet-258" / "log.txt")
    # the loss-target entry is the specific kernel-assertion entry for nll_loss's `t < n_classes` check
    assert result.root_cause.entry_id == "loss-target-out-of-range"
    assert "Assertion `t >= 0 && t < n_classes` failed" in result.root_cause.evidence.text


def test_most_specific_finding_of_one_error_wins():
    # CppCompileError carries the compiler output; the compiler's own error line is the decisive one
    root = diagnose(GEN / "gen-cpp-compile-error" / "log.txt").root_cause
    assert root.entry_id == "cpp-compiler-error-line"
    assert "fatal error: algorithm: No such file or directory" in root.evidence.text


def test_cache_context_refiles_a_compiler_error():
    root = diagnose(GEN / "gen-cache-corrupt-isa-probe-so" / "log.txt").root_cause
    assert root.category == "compile.cache_corruption"
    assert "‘at::vec’ has not been declared" in root.evidence.text
    assert "re-filed from cpp-compiler-error-line" in root.reason


def test_non_fatal_problems_give_a_warning_verdict():
    result = diagnose(GEN / "gen-recompile-limit-warning" / "log.txt")
    assert result.verdict is Verdict.WARNING
    assert result.root_cause.entry_id == "recompile-limit" and not result.root_cause.fatal


def test_a_fatal_reporter_hands_the_fatality_to_the_earlier_event():
    result = diagnose(GEN / "gen-recompile-limit-fatal" / "log.txt")
    assert result.verdict is Verdict.FAILURE
    assert result.root_cause.entry_id == "recompile-limit" and result.root_cause.fatal
    assert ("recompile-limit-hard-failure", Role.WRAPPER) in _roles(result)


def test_benign_graph_breaks_are_clean():
    result = diagnose(GEN / "gen-neg-compile-graph-breaks-print" / "log.txt")
    assert result.verdict is Verdict.CLEAN and result.root_cause is None


def test_context_window_before_the_first_occurrence():
    log = GEN / "gen-verbose-cpp-compile-error" / "log.txt"
    root = diagnose(log).root_cause
    assert len(root.context_before) == 100
    assert root.context_before[-1].number == root.evidence.line - 1
    assert len(diagnose(log, context=7).root_cause.context_before) == 7


def test_pasted_text_gives_the_same_answer_as_the_file():
    log = GEN / "gen-dynamo-fullgraph-print" / "log.txt"
    from_file = diagnose(log).root_cause
    from_text = diagnose(log.read_text(encoding="utf-8")).root_cause
    assert (from_text.entry_id, from_text.evidence.text, from_text.evidence.line) == (
        from_file.entry_id, from_file.evidence.text, from_file.evidence.line)
    assert from_text.evidence.file == "<text>"


def test_rank_progress_is_read_from_step_lines():
    # every rank logs `step N`: the tracker keeps each rank's last step (used when all ranks time out)
    result = diagnose(GEN / "gen-dist-rank3-straggler" / "log.txt")
    assert {r: s.last_step for r, s in result.ranks.items() if r in (0, 1, 2, 3)} == {0: 2, 1: 2, 2: 2, 3: 2}


def test_the_rank_behind_in_steps_is_the_straggler():
    from denpex.analyze.attribution import _behind_in_steps
    from denpex.analyze.collect import Collection
    from denpex.model import RankState

    ranks = {r: RankState(rank=r, last_step=step) for r, step in {0: 41, 1: 41, 2: 37, 3: 41}.items()}
    collection = Collection(ranks=ranks)
    assert _behind_in_steps(collection, reporters={0, 1, 2, 3}) == (2, 37, 41)  # it timed out too, later
    assert _behind_in_steps(collection, reporters=set()) is None  # no timeout: nothing waited for it
    ranks[1].last_step = 30  # two ranks behind: no single straggler
    assert _behind_in_steps(collection, reporters={0, 3}) is None


def test_skewed_clock_is_reported_not_trusted(tmp_path):
    # the real console log of a 4-rank job, with rank 2's host clock set 30 s fast (a skewed node)
    import re

    def later(match):
        h, m, sec = (int(x) for x in match.group(1).split(":"))
        total = h * 3600 + m * 60 + sec + 30
        return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d},{match.group(2)} [rank2]"

    original = GEN / "gen-dist-rank2-keyerror" / "log.txt"
    skewed = tmp_path / "console.log"
    skewed.write_text(re.sub(r"(\d\d:\d\d:\d\d),(\d{3}) \[rank2\]", later, original.read_text()))
    result = diagnose(skewed)
    assert result.root_cause.rank == 2 and "KeyError" in result.root_cause.evidence.text
    assert any("clocks may disagree" in note for note in result.notes), result.notes
    assert not any("clocks" in note for note in diagnose(original).notes)
