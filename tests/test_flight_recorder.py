"""Flight Recorder dumps as evidence: the real 2x H200 NCCL dumps of tests/corpus/gpu-multi/*/fr/ (with
PyTorch's reference analyzer's answer beside them, fr_trace.txt / fr_entries.txt) and real gloo dumps made on
CPU (tests/fixtures/flight_recorder/). The reader never runs code from a dump, and a cut-off dump is a partial
answer with a note, never a traceback."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from denpex.analyze.flight_recorder import summarise
from denpex.errors import DenpexInputError
from denpex.ingest.flight_recorder import DumpError, parse_dump, read_dump
from tests.conftest import CORPUS, REPO

MULTI = CORPUS / "gpu-multi"
FR_CASES = sorted(p.parent.parent.name for p in MULTI.glob("*/fr/fr_trace.txt"))
GLOO = REPO / "tests" / "fixtures" / "flight_recorder"


def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    env["COLUMNS"] = "120"
    return subprocess.run([sys.executable, "-m", "denpex", *map(os.fspath, args)], capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=120, stdin=subprocess.DEVNULL)


def diagnose_json(*args: str | os.PathLike[str]) -> dict:
    result = run("diagnose", "--format", "json", *args)
    assert result.returncode in (0, 1, 3), result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout)


def _dumps(folder: Path, pattern: str = "nccl_trace_rank_*") -> list:
    return [read_dump(p, str(p)) for p in sorted(folder.glob(pattern))]


def _reference(case: str) -> dict[str, object]:
    """The first `Not all ranks joining collective` record of torch's fr_trace on the same dumps."""
    text = (MULTI / case / "fr" / "fr_trace.txt").read_text()
    return {
        "seq": int(re.search(r"Not all ranks joining collective, sequence number: (\d+)", text).group(1)),
        "missing": sorted(int(r) for r in re.search(r"missing ranks: \{([\d, ]+)\}", text).group(1).split(",")),
        "op": re.search(r"collective: (\S+)", text).group(1),
        "group": re.search(r"group info: (\S+)", text).group(1),
    }


def test_there_are_real_dumps():
    assert len(FR_CASES) >= 4
    for case in FR_CASES:
        assert (MULTI / case / "fr" / "nccl_trace_rank_0").read_bytes()[:2] == b"\x80\x02"  # a pickle, as dumped


@pytest.mark.parametrize("case", FR_CASES)
def test_dumps_name_what_the_reference_analyzer_names(case):
    notes: list[str] = []
    summary = summarise(_dumps(MULTI / case / "fr"), notes)
    expected = _reference(case)
    assert summary is not None and summary.kind == "never_joined"
    assert summary.seq == expected["seq"]
    assert summary.missing == expected["missing"]
    assert summary.op == expected["op"]
    assert summary.process_group == expected["group"]
    assert summary.culprit == expected["missing"][0]
    assert not summary.partial and not notes


@pytest.mark.parametrize("case", FR_CASES)
def test_last_completed_matches_the_reference_entries_table(case):
    """fr_entries.txt (fr_trace -j) lists each rank's entries in a column; count its completed ones."""
    lines = (MULTI / case / "fr" / "fr_entries.txt").read_text().splitlines()
    second = lines[0].index("Rank 1")
    completed = {0: sum("state=completed" in ln[:second] for ln in lines[2:]),
                 1: sum("state=completed" in ln[second:] for ln in lines[2:])}
    summary = summarise(_dumps(MULTI / case / "fr"), [])
    assert summary.last_completed == completed  # sequence numbers start at 1, so the count is the last one


def _case_copy(case: str, tmp_path: Path) -> Path:
    """The case's console log and the raw dumps only: the reference analyzer's answer is not among the inputs."""
    folder = tmp_path / case
    (folder / "fr").mkdir(parents=True)
    shutil.copy(MULTI / case / "log.txt", folder / "log.txt")
    for dump in (MULTI / case / "fr").glob("nccl_trace_rank_*"):
        shutil.copy(dump, folder / "fr" / dump.name)
    return folder


@pytest.mark.parametrize("case", ["gpu-multi-fr-straggler", "gpu-multi-straggler"])
def test_case_folder_names_the_rank_that_never_joined(case, tmp_path):
    label = json.loads((MULTI / case / "label.json").read_text())
    report = diagnose_json(_case_copy(case, tmp_path))
    root = report["root_cause"]
    assert report["schema_version"] == "1.2"
    assert root["category"] == label["category"]
    assert root["rank"] == label["initiating_rank"] == 1
    assert root["rank_evidence"] == "flight_recorder"
    assert "nccl_trace_rank_0" in root["rank_reason"] and "never joined collective 7" in root["rank_reason"]
    fr = report["flight_recorder"]
    assert fr["culprit"] == 1 and fr["missing"] == [1] and fr["seq"] == 7 and fr["kind"] == "never_joined"
    assert fr["last_completed"] == {"0": 6, "1": 6}
    # the dumps are evidence, never log text: no finding comes from them, and no "binary data" note
    assert not [f for f in report["findings"] if "nccl_trace" in f["evidence"]["file"]]
    assert any("first observed failure" in n and "rank 0" in n for n in report["notes"])  # torchrun named rank 0


def test_original_case_folder_and_the_report_line(schema_validator):
    case = MULTI / "gpu-multi-fr-straggler"
    report = diagnose_json(case)
    schema_validator(report)
    assert report["root_cause"]["rank"] == 1 and report["root_cause"]["rank_evidence"] == "flight_recorder"
    terminal = run("diagnose", case)
    assert terminal.returncode == 1, terminal.stderr
    assert re.search(r"Flight Recorder +dumps \(nccl_trace_rank_0, nccl_trace_rank_1\): rank 1 never", terminal.stdout)
    markdown = run("diagnose", "--format", "markdown", case).stdout
    assert "**Flight Recorder:** dumps (nccl\\_trace\\_rank\\_0" in markdown


def test_own_error_keeps_its_rank_and_the_dumps_agree():
    """gpu-multi-oom-watchdog: rank 1's own CUDA OOM decides; the dumps (rank 1 never joined) agree."""
    report = diagnose_json(MULTI / "gpu-multi-oom-watchdog")
    root = report["root_cause"]
    assert root["category"] == "mem.cuda_oom" and root["rank"] == 1 and root["rank_evidence"] == "own_output"
    assert "the Flight Recorder dumps agree" in root["rank_reason"]


@pytest.fixture(scope="module")
def schema_validator():
    loaded = json.loads(run("diagnose", "--print-schema").stdout)
    return lambda report: jsonschema.validate(report, loaded, cls=jsonschema.Draft202012Validator)


# -- truncated and corrupt dumps ---------------------------------------------------------------------


def test_half_a_dump_is_a_partial_answer_with_a_note(tmp_path):
    folder = _case_copy("gpu-multi-fr-straggler", tmp_path)
    dump = folder / "fr" / "nccl_trace_rank_0"
    data = dump.read_bytes()
    dump.write_bytes(data[: len(data) // 2])
    report = diagnose_json(folder)
    fr = report["flight_recorder"]
    assert fr["partial"] is True
    assert any("nccl_trace_rank_0" in n and "truncated" in n for n in report["notes"])
    # half the bytes hold no whole entry of rank 0 (the first one spells out every key), but its pg_status does:
    # rank 0 enqueued collective 8, rank 1 only 6
    assert fr["culprit"] == 1 and fr["kind"] == "lagging"
    assert report["root_cause"]["rank"] == 1


@pytest.mark.parametrize("dump", [MULTI / "gpu-multi-fr-straggler" / "fr" / "nccl_trace_rank_0",
                                  GLOO / "gloo-rank2-skips" / "gloo_trace_json_rank_0"], ids=["pickle", "json"])
def test_every_cut_of_a_real_dump_is_read_or_refused_in_one_line(dump):
    data = dump.read_bytes()
    whole = len(parse_dump(data, "d").entries)
    seen = set()
    for size in range(len(data)):
        try:
            partial = parse_dump(data[:size], "d")
        except DumpError as exc:
            assert "\n" not in str(exc)
            continue
        assert len(partial.entries) <= whole
        assert partial.partial or size == 0
        seen.add(len(partial.entries))
    assert whole - 1 in seen  # a cut in the last entry still gives all the others


# -- hostile pickles -------------------------------------------------------------------------------


class _Shell:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _hostile(marker: Path) -> dict[str, bytes]:
    payload = {"version": "2.10", "entries": [_Shell(marker)]}
    return {
        "reduce-p2": pickle.dumps(payload, protocol=2),
        "reduce-p5": pickle.dumps(payload, protocol=5),
        "global-p0": f"cos\nsystem\n(S'touch {marker}'\ntR.".encode(),
        "eval-p4": pickle.dumps({"entries": [eval]}, protocol=4),  # a builtin is a global too
    }


@pytest.mark.parametrize("kind", ["reduce-p2", "reduce-p5", "global-p0", "eval-p4"])
def test_hostile_pickle_is_refused_and_nothing_runs(kind, tmp_path):
    marker = tmp_path / "ran"
    hostile = tmp_path / "nccl_trace_rank_0"
    hostile.write_bytes(_hostile(marker)[kind])
    with pytest.raises(DumpError, match="refused"):
        read_dump(hostile, str(hostile))
    alone = run("diagnose", hostile)  # named alone, it is bad input: one line, exit 2
    assert alone.returncode == 2 and alone.stderr.count("\n") == 1 and "refused" in alone.stderr
    folder = _case_copy("gpu-multi-fr-straggler", tmp_path / "case")
    shutil.copy(hostile, folder / "fr" / "nccl_trace_rank_0")  # among the logs, it is left out with a note
    report = diagnose_json(folder)
    assert any("nccl_trace_rank_0" in n and "refused" in n for n in report["notes"])
    assert report["root_cause"]["category"] == "dist.collective_timeout"
    assert not marker.exists()


def test_a_non_dump_pickle_is_not_a_log_either(tmp_path):
    (tmp_path / "state.pkl").write_bytes(pickle.dumps({"weights": [1.0, 2.0]}, protocol=4))
    with pytest.raises(DenpexInputError, match="no `entries`"):
        read_dump(tmp_path / "state.pkl", "state.pkl")


# -- gloo (torch 2.13 CPU), pickled and JSON ---------------------------------------------------------


@pytest.mark.parametrize("pattern", ["gloo_trace_rank_*", "gloo_trace_json_rank_*"], ids=["pickle", "json"])
def test_gloo_dumps_name_the_rank_that_skipped(pattern):
    """PyTorch's own analyzer fails on these (fr_trace-gloo.txt: KeyError on gloo's pg_config name)."""
    summary = summarise(_dumps(GLOO / "gloo-rank2-skips", pattern), [])
    assert (summary.culprit, summary.kind, summary.seq, summary.missing) == (2, "never_joined", 2, [2])
    assert summary.op == "gloo:all_reduce"
    assert summary.last_completed == ({0: 1, 1: 1, 2: 1} if "json" not in pattern else {0: None, 1: None, 2: None})


@pytest.mark.parametrize("pattern", ["gloo_trace_rank_*", "gloo_trace_json_rank_*"], ids=["pickle", "json"])
def test_gloo_dumps_name_the_rank_that_ran_another_collective(pattern):
    summary = summarise(_dumps(GLOO / "gloo-rank2-op-differs", pattern), [])
    assert (summary.culprit, summary.kind, summary.seq) == (2, "mismatch", 2)
    assert "rank 2: gloo:broadcast" in summary.summary and "ranks 0-1: gloo:all_reduce" in summary.summary


def test_dumps_alone_say_who_never_joined_in_a_note():
    report = diagnose_json(*sorted((GLOO / "gloo-rank2-skips").glob("gloo_trace_rank_*")))
    assert report["flight_recorder"]["culprit"] == 2
    assert any("rank 2 never joined collective 2" in n and "no log line" in n for n in report["notes"])


def test_dumps_under_other_names_are_found_by_their_bytes(tmp_path):
    """A pickle header is enough, whatever the name; a FIFO beside them is never opened to sniff it."""
    fr = MULTI / "gpu-multi-fr-straggler" / "fr"
    shutil.copy(MULTI / "gpu-multi-fr-straggler" / "log.txt", tmp_path / "log.txt")
    for rank in (0, 1):
        shutil.copy(fr / f"nccl_trace_rank_{rank}", tmp_path / f"r{rank}.bin")
    os.mkfifo(tmp_path / "pipe")
    report = diagnose_json(tmp_path)
    assert report["flight_recorder"]["culprit"] == 1
    assert report["root_cause"]["rank_evidence"] == "flight_recorder"


def test_text_from_a_dump_is_escaped_in_every_report(tmp_path):
    """A dump's op name and frames are untrusted text too: the real dump, its op renamed, re-pickled."""
    from denpex.ingest.flight_recorder import SafeUnpickler

    folder = _case_copy("gpu-multi-fr-straggler", tmp_path)
    path = folder / "fr" / "nccl_trace_rank_0"
    with open(path, "rb") as handle:
        raw = SafeUnpickler(handle).load()
    for entry in raw["entries"]:
        entry["profiling_name"] = "nccl:\x1b]2;owned\x07<script>alert(1)</script>"
    path.write_bytes(pickle.dumps(raw, protocol=2))
    terminal = run("diagnose", folder).stdout
    assert "\x1b]2;" not in terminal and "\\x1b]2;owned" in terminal
    html = run("diagnose", "--format", "html", folder).stdout
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    markdown = run("diagnose", "--format", "markdown", folder).stdout
    assert "<script>" not in markdown


def test_extension_codes_and_persistent_ids_are_refused_too():
    import copyreg

    copyreg.add_extension(os.system.__module__, "system", 0x7ffffff0)
    try:
        ext = pickle.dumps({"entries": [os.system]}, protocol=2)  # EXT4 0x7ffffff0: a global by number
    finally:
        copyreg.remove_extension(os.system.__module__, "system", 0x7ffffff0)
    assert b"\x84" in ext and b"system" not in ext
    with pytest.raises(DumpError, match="extension"):
        parse_dump(ext, "ext")
    with pytest.raises(DumpError, match="persistent id"):
        parse_dump(b"\x80\x02}q\x00X\x07\x00\x00\x00entriesq\x01]q\x02X\x01\x00\x00\x00xQs.", "pid")


def test_dumps_alone_in_the_terminal_do_not_say_all_is_well():
    shown = run("diagnose", *sorted((GLOO / "gloo-rank2-op-differs").glob("gloo_trace_json_rank_*")))
    assert shown.returncode == 0, shown.stderr
    assert "rank 2 is the only one that differs" in " ".join(shown.stdout.split())
    assert "No failure or warning found in the logs; see the Flight Recorder line above." in shown.stdout
