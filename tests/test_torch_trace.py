"""TORCH_TRACE input: real traces from torch 2.13 CPU (tests/fixtures/torch_trace, made by make_traces.py
there), read alone and with the job's plain log, cut off and corrupted; and the corpus's traced cases."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from denpex.api import diagnose
from denpex.ingest import resolve
from denpex.ingest.torch_trace import read_trace, split_traces
from tests.conftest import CORPUS, TESTS
from tests.test_cli import diagnose_json, run

FIXTURES = TESTS / "fixtures" / "torch_trace"
CASES = ["fullgraph", "recompile", "dist", "cxx-missing", "dist-cache"]


def _label(case: Path) -> dict:
    return json.loads((case / "label.json").read_text(encoding="utf-8"))


def _rank(report: dict, rank: int | None) -> dict:
    return next(r for r in report["torch_trace"]["ranks"] if r["rank"] == rank)


def _plain_copy(case: str, tmp_path: Path) -> Path:
    """The case's trace folder with its files decompressed (as TORCH_TRACE writes them)."""
    out = tmp_path / case / "trace"
    out.mkdir(parents=True)
    for gz in sorted((FIXTURES / case / "trace").glob("*.log.gz")):
        (out / gz.name[:-3]).write_bytes(gzip.decompress(gz.read_bytes()))
    return out


# -- parsing real traces -------------------------------------------------------------------------------

def test_graph_break_under_fullgraph_gives_compile_id_fail_reason_and_user_frame():
    _, report = diagnose_json(FIXTURES / "fullgraph" / "trace")
    trace = report["torch_trace"]
    compiles = _rank(report, None)["compiles"]
    assert [(c["compile_id"], c["status"], c["fail_type"]) for c in compiles] == [("0/0", "failed", "UserError")]
    assert "Could not guard on data-dependent expression" in compiles[0]["fail_reason"]
    assert compiles[0]["user_frame"] == "/home/user/job/tt_job.py:16"
    assert trace["agreement"] == "trace_only"
    # trace alone: the diagnosis comes from dynamo_error, pointing at the trace file's own line
    root = report["root_cause"]
    assert root["category"] == _label(FIXTURES / "fullgraph")["category"]
    assert root["evidence"]["file"].endswith(".log.gz")
    assert root["evidence"]["text"].startswith("torch._dynamo.exc.UserError: ")
    lines = gzip.decompress(next((FIXTURES / "fullgraph" / "trace").glob("*.gz")).read_bytes()).decode().split("\n")
    assert lines[root["evidence"]["line"] - 1] == "\t" + root["evidence"]["text"]


def test_graph_break_ids_recompile_reasons_and_cache_hits():
    _, dist = diagnose_json(FIXTURES / "dist" / "trace")
    breaks = _rank(dist, 0)["graph_breaks"]
    assert [(b["compile_id"], b["gb_id"], b["user_frame"]) for b in breaks] == [
        ("0/0", "GB0124", "/home/user/job/tt_job.py:16")]
    assert "Tensor.item()" in breaks[0]["reason"]
    _, recompile = diagnose_json(FIXTURES / "recompile" / "trace")
    rank = _rank(recompile, None)
    assert [c["compile_id"] for c in rank["compiles"]] == ["0/0", "0/1", "0/2"]
    assert rank["compiles"][2]["fail_type"] == "Unsupported"
    assert [r["compile_id"] for r in rank["recompiles"]] == ["0/1", "0/2"]
    assert "dtype mismatch" in rank["recompiles"][0]["reasons"][0]
    assert recompile["root_cause"]["id"] == "recompile-limit" and recompile["verdict"] == "warning"
    _, cache = diagnose_json(FIXTURES / "dist-cache" / "trace")
    assert _rank(cache, 0)["cache"] == {"fx_graph_cache_hit": 1, "aotautograd_cache_hit": 1}
    assert _rank(cache, 1)["cache"] == {"fx_graph_cache_miss": 1, "aotautograd_cache_miss": 1}
    assert _rank(cache, 1)["compiles"][0]["output_code"].endswith(".py")
    assert cache["verdict"] == "clean"


def test_inductor_failure_from_the_trace():
    _, report = diagnose_json(FIXTURES / "cxx-missing" / "trace")
    compile_ = _rank(report, None)["compiles"][0]
    assert (compile_["status"], compile_["fail_type"]) == ("failed", "InductorError")
    assert compile_["fail_reason"].startswith("InvalidCxxCompiler: No working C++ compiler found")
    assert (compile_["attempts"], compile_["started_at"]) == (1, "/home/user/job/tt_job.py:54 in <lambda>")
    # the corpus's run graph-breaks on .item() first: Dynamo restarts its analysis, attempt 1 fails
    _, corpus = diagnose_json(CORPUS / "traces" / "cpu-cxx-missing" / "trace")
    assert _rank(corpus, None)["compiles"][0]["attempts"] == 2
    assert report["root_cause"]["category"] == _label(FIXTURES / "cxx-missing")["category"]


# -- cross-rank divergence -----------------------------------------------------------------------------

def test_two_rank_trace_divergence():
    _, report = diagnose_json(FIXTURES / "dist" / "trace")
    assert report["root_cause"]["rank"] == 1
    divergences = report["torch_trace"]["divergences"]
    assert "compile 0/0 failed on rank 1 (UserError); rank 0: ok" in divergences
    assert "compile 1/0 is on rank 0 only, not on rank 1" in divergences
    _, cache = diagnose_json(FIXTURES / "dist-cache" / "trace")
    assert "fx_graph cache: hit on rank 0, miss on rank 1" in cache["torch_trace"]["divergences"]


# -- merged with the plain log -------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_log_and_trace_name_the_labelled_root_cause(case):
    folder = FIXTURES / case
    label = _label(folder)
    for inputs in ([folder], [folder / "log.txt", folder / "trace"]):
        _, merged = diagnose_json(*inputs)
        _, plain = diagnose_json(folder / "log.txt")
        assert merged["torch_trace"] is not None and plain["torch_trace"] is None
        if label["category"] == "none":
            assert merged["verdict"] == plain["verdict"] == "clean"
            assert merged["torch_trace"]["agreement"] == "silent"
            continue
        root = merged["root_cause"]
        assert root["category"] == label["category"] == plain["root_cause"]["category"]
        assert label["decisive_line"] in root["evidence"]["text"]
        assert root["rank"] == label["initiating_rank"]
        assert merged["torch_trace"]["agreement"] == "confirms"
        assert "TORCH_TRACE confirms it" in root["reason"]  # the trace's evidence is carried, file:line
        first = merged["torch_trace"]["evidence"][0]
        assert ".log.gz" in first["file"] and f"{first['file']}:{first['line']}" in root["reason"]


def test_trace_supplies_the_failure_a_cut_off_log_lacks(tmp_path):
    log = (FIXTURES / "fullgraph" / "log.txt").read_text(encoding="utf-8").splitlines(keepends=True)
    cut = tmp_path / "log.txt"
    cut.write_text("".join(line for line in log if "Traceback" not in line and "Error" not in line
                           and not line.startswith(" ")), encoding="utf-8")
    _, plain = diagnose_json(cut)
    assert plain["verdict"] == "clean"
    _, merged = diagnose_json(cut, FIXTURES / "fullgraph" / "trace")
    assert merged["torch_trace"]["agreement"] == "supplies"
    assert merged["root_cause"]["category"] == _label(FIXTURES / "fullgraph")["category"]
    assert merged["root_cause"]["evidence"]["file"].endswith(".log.gz")


def test_reports_show_the_trace_section():
    for fmt, marker in (("terminal", "TORCH_TRACE"), ("markdown", "## TORCH_TRACE"), ("html", 'id="torch-trace"')):
        result = run("diagnose", "--format", fmt, FIXTURES / "dist")
        assert result.returncode == 1, result.stderr
        assert marker in result.stdout
        assert "failed on rank 1" in result.stdout


# -- damaged traces -------------------------------------------------------------------------------------

def test_truncated_trace_gives_partial_results_and_a_note(tmp_path):
    trace = _plain_copy("recompile", tmp_path)
    path = next(trace.iterdir())
    data = path.read_bytes()
    at = data.index(b'{"compilation_metrics": {"compile_id": "0/1"') + 200  # cut mid-record
    path.write_bytes(data[:at])
    code, report = diagnose_json(trace)
    rank = _rank(report, None)
    assert [c["compile_id"] for c in rank["compiles"]] == ["0/0", "0/1"]
    assert rank["compiles"][1]["status"] == "unfinished"  # its metrics record is the cut one
    assert rank["bad_records"] == 1
    assert any("ends mid-record" in n for n in report["notes"])
    assert any("1 TORCH_TRACE record(s) with unreadable JSON skipped" in n for n in report["notes"])
    assert code == 0


def test_corrupted_json_line_is_skipped_and_counted(tmp_path):
    trace = _plain_copy("fullgraph", tmp_path)
    path = next(trace.iterdir())
    lines = path.read_text(encoding="utf-8").split("\n")
    index = next(i for i, ln in enumerate(lines) if '"dynamo_start"' in ln)
    lines[index] = lines[index][: len(lines[index]) // 2] + "\ufffd}}{not json"
    lines.insert(3, "garbage that is not a record")
    path.write_text("\n".join(lines), encoding="utf-8")
    result = run("diagnose", "--format", "json", trace)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    report = json.loads(result.stdout)
    assert _rank(report, None)["bad_records"] == 1
    assert _rank(report, None)["compiles"][0]["status"] == "failed"  # compilation_metrics still read
    assert report["root_cause"]["category"] == _label(FIXTURES / "fullgraph")["category"]
    assert any("unreadable JSON skipped (first at line" in n for n in report["notes"])
    assert any("not TORCH_TRACE records" in n for n in report["notes"])


# -- detection -------------------------------------------------------------------------------------------

def test_trace_files_are_never_read_as_log_text(tmp_path):
    trace = _plain_copy("fullgraph", tmp_path)
    renamed = tmp_path / "rank0.log"  # no trace name: its first line (an envelope and JSON) tells
    shutil.copy(next(trace.iterdir()), renamed)
    plain, traces = split_traces(resolve([str(FIXTURES / "fullgraph"), str(renamed)]))
    assert [Path(s.name).name for s in plain] == ["log.txt"]
    assert len(traces) == 2
    result = diagnose(renamed)
    assert result.torch_trace is not None and result.lines_read < 10  # only the evidence lines were matched
    not_a_trace = tmp_path / "glog.log"
    for text in ("I1202 01:37:00.280000 11091 train.py:12] {not json at all\n",
                 'I1202 01:37:00.280000 11091 train.py:12] {"loss": 0.5, "step": 3}\n'):
        not_a_trace.write_text(text, encoding="utf-8")
        assert split_traces(resolve([str(not_a_trace)]))[1] == []


def test_records_are_parsed_never_executed(tmp_path):
    trace = tmp_path / "dedicated_log_torch_trace_x.log"
    canary = tmp_path / "ran"
    trace.write_text(
        'V1202 01:37:00.280000 1 torch/_dynamo/utils.py:1] {"artifact": {"name": "dynamo_error", '
        f'"encoding": "string"}}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}}\n'
        f"\t__import__('pathlib').Path({str(canary)!r}).touch()\n", encoding="utf-8")
    records = read_trace(resolve([str(trace)])[0]).records
    assert [r.kind for r in records] == ["artifact"]
    code, report = diagnose_json(trace)
    assert not canary.exists() and code == 0 and report["torch_trace"]["agreement"] == "silent"


# -- the corpus's traced cases (tests/corpus/traces), where present ----------------------------------------

TRACED = sorted(p.parent for p in (CORPUS / "traces").glob("*/label.json")) if (CORPUS / "traces").is_dir() else []


@pytest.mark.parametrize("case", TRACED, ids=[p.name for p in TRACED])
def test_corpus_traced_cases_keep_the_labelled_root_cause(case):
    label = _label(case)
    _, merged = diagnose_json(case / "log.txt", case / label.get("trace", "trace"))
    if label["category"] == "none":
        assert merged["verdict"] == "clean"
        return
    assert merged["root_cause"]["category"] == label["category"]
    assert label["decisive_line"] in merged["root_cause"]["evidence"]["text"]
    assert merged["torch_trace"]["agreement"] in ("confirms", "silent")


def test_report_with_a_trace_matches_the_printed_schema():
    import jsonschema

    schema = json.loads(run("diagnose", "--print-schema").stdout)
    assert "torch_trace" in schema["properties"]
    for case in ("dist", "dist-cache", "cxx-missing"):
        _, report = diagnose_json(FIXTURES / case)
        jsonschema.validate(report, schema)
        assert report["schema_version"] == "1.2"


def test_older_release_envelopes_and_fields(tmp_path):
    # the 2.2-2.4 writer: `[rankN]:` before the envelope, the thread id, no `rank` or `compile_id` in the
    # metadata, fail_type as str(type(e)), no exception_stack_trace (torch/_logging/_internal.py of those tags)
    def record(rank: int, line: int, meta: str) -> str:
        return (f"[rank{rank}]:V0806 12:00:0{line}.123456 139872 torch/_dynamo/utils.py:{line}] {meta[:-1]}, "
                '"frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n')

    start = '{"dynamo_start": {"stack": [{"line": 12, "name": "forward", "filename": 1}]}}'
    failed = ('{"compilation_metrics": {"frame_key": "1", "co_name": "forward", "co_filename": "/job/train.py", '
              '"co_firstlineno": 10, "fail_type": "<class \'torch._dynamo.exc.UserError\'>", "fail_reason": '
              '"Could not guard on data-dependent expression u0 > 100.0 (unhinted: u0 > 100.0)", '
              '"fail_user_frame_filename": "/job/train.py", "fail_user_frame_lineno": 12}}')
    ok = '{"compilation_metrics": {"frame_key": "1", "co_name": "forward", "fail_type": null}}'
    (tmp_path / "dedicated_log_torch_trace_a.log").write_text(record(0, 1, start) + record(0, 2, ok))
    (tmp_path / "dedicated_log_torch_trace_b.log").write_text(record(1, 1, start) + record(1, 2, failed))
    code, report = diagnose_json(tmp_path)
    assert code == 1
    compile_ = _rank(report, 1)["compiles"][0]
    assert (compile_["compile_id"], compile_["fail_type"], compile_["user_frame"]) == (
        "0/0", "UserError", "/job/train.py:12")
    assert _rank(report, 0)["compiles"][0]["status"] == "ok"
    assert report["torch_trace"]["divergences"] == ["compile 0/0 failed on rank 1 (UserError); rank 0: ok"]
    assert report["root_cause"]["id"] == "data-dependent-guard" and report["root_cause"]["rank"] == 1
    assert report["root_cause"]["evidence"]["line"] == 2


def test_hostile_trace_text_stays_inert_in_reports(tmp_path):
    trace = tmp_path / "dedicated_log_torch_trace_x.log"
    trace.write_text(
        'V1202 01:37:00.280000 1 torch/_dynamo/utils.py:1] {"compilation_metrics": {"compile_id": "0/0", '
        '"fail_type": "InductorError", "fail_reason": "<script>alert(1)</script>\\u001b]2;owned\\u0007 '
        '| **bold** [x](http://e)"}, "frame_id": 0, "frame_compile_id": 0, "attempt": 0}\n', encoding="utf-8")
    html = run("diagnose", "--format", "html", trace).stdout
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    for fmt in ("terminal", "markdown", "json"):
        out = run("diagnose", "--format", fmt, trace).stdout
        assert "\x1b]2;" not in out and "\x07" not in out
