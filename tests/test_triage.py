"""`denpex triage` as a user runs it (a subprocess) on job folders made from real corpus cases."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from denpex.evaluate import case_input
from denpex.fleet.fingerprint import fingerprint, normalise_line
from tests.conftest import CORPUS, REPO

GPU = CORPUS / "gpu"
GEN = CORPUS / "generated"


def run(*args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "DENPEX_DEBUG"}
    env["COLUMNS"] = "120"
    result = subprocess.run([sys.executable, "-m", "denpex", *map(os.fspath, args)], capture_output=True,
                            stdin=subprocess.DEVNULL, env=env, cwd=REPO, timeout=600)
    return subprocess.CompletedProcess(result.args, result.returncode, result.stdout.decode(),
                                       result.stderr.decode())


def label(case: Path) -> dict[str, object]:
    return json.loads((case / "label.json").read_text(encoding="utf-8"))


def make_job(case: Path, root: Path, name: str | None = None) -> Path:
    """A job folder holding the case's log(s) as the corpus contract names them (log.txt or ranks/)."""
    job = root / (name or case.name)
    source = case_input(case, label(case))
    if source.is_dir():
        shutil.copytree(source, job)
    else:
        job.mkdir(parents=True)
        shutil.copy(source, job / source.name)
    return job


def triage_json(*args: str | os.PathLike[str]) -> tuple[dict, subprocess.CompletedProcess[str]]:
    result = run("triage", "--format", "json", "--workers", "1", *args)
    assert result.returncode in (0, 1, 3), result.stderr
    return json.loads(result.stdout), result


def test_normalise_masks_what_varies_between_jobs() -> None:
    a = normalise_line("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3")
    b = normalise_line("[rank12]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512 MiB. GPU 0")
    assert a == b == "[rank<n>]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate <size>. GPU <n>"
    nccl = normalise_line("node-a12:1234:5678 [0] NCCL WARN Connection closed by peer 10.0.0.12<58932>")
    assert nccl == "<host>:<n>:<n> [<n>] NCCL WARN Connection closed by peer <ip><<n>>"
    assert normalise_line('  File "/home/alice/run-3/train.py", line 42') == 'File "<path>", line <n>'
    assert normalise_line("illegal address 0x7f3a2b000000 in a3f9c1b2d4e5") == "illegal address <hex> in <hex>"
    assert normalise_line("see https://x.org/a/1 on gpu7.cluster.internal") == "see <url> on <host>"
    # a different message stays a different key; an entry is part of the fingerprint
    assert normalise_line("KeyError: 'labels'") != normalise_line("KeyError: 'input_ids'")
    assert fingerprint("cuda-oom", a) != fingerprint("host-oom-killed", a)
    assert fingerprint("cuda-oom", a) == fingerprint("cuda-oom", b)
    assert len(normalise_line("x " * 10000)) == 400


def test_same_failure_lands_in_one_group(tmp_path: Path) -> None:
    """Two real CUDA OOMs (other sizes, eager and compiled) are one group; a compiler error is another."""
    jobs = tmp_path / "jobs"
    for case in (GPU / "gpu-cuda-oom", GPU / "gpu-cuda-oom-compiled", GEN / "gen-cpp-compile-error"):
        make_job(case, jobs)
    report, _ = triage_json(*sorted(jobs.iterdir()), "--no-history")
    assert report["jobs"] == 3 and report["diagnosed"] == 3 and report["errors"] == []
    assert [g["count"] for g in report["groups"]] == [2, 1]
    oom = report["groups"][0]
    assert oom["category"] == "mem.cuda_oom"
    assert sorted(oom["example_jobs"]) == ["gpu-cuda-oom", "gpu-cuda-oom-compiled"]
    assert oom["fix"] and oom["verify"].startswith("denpex verify --entry cuda-oom")
    assert "<size>" in oom["decisive_line"] and oom["history"] is None
    assert report["groups"][1]["category"] == "compile.cpp_compile_error"


def test_purity_over_a_sample_of_the_corpus(tmp_path: Path) -> None:
    """Every 4th case (about 40): the share of jobs whose group's category is their label's."""
    cases = sorted(p.parent for p in CORPUS.rglob("label.json") if "generators" not in p.parts)[::4]
    assert len(cases) >= 40
    jobs = tmp_path / "jobs"
    for i, case in enumerate(cases):
        make_job(case, jobs, f"{i:03d}-{case.name}")
    report, _ = triage_json(jobs / "*", "--no-history")
    category = {job: g["category"] for g in report["groups"] for job in g["jobs"]}
    category.update({job: "none" for job in report["clean_jobs"]})
    good = sum(category.get(f"{i:03d}-{case.name}") == label(case)["category"] for i, case in enumerate(cases))
    purity = good / len(cases)
    print(f"\ntriage purity over {len(cases)} corpus cases: {purity:.3f} in {len(report['groups'])} groups, "
          f"{len(report['errors'])} errors")
    assert report["errors"] == []
    assert purity >= 0.9


def test_manifests_csv_and_jsonl(tmp_path: Path) -> None:
    """A CSV with owner, gpus and times (GPU-hours ranked), a JSONL with a JSON list of paths."""
    oom = make_job(GPU / "gpu-cuda-oom", tmp_path / "jobs")
    sigkill_case = GEN / "gen-dist-rank1-sigkill"
    sigkill = make_job(sigkill_case, tmp_path / "jobs")
    ranks_case = GEN / "gen-dist-rank2-keyerror-logdir"
    ranks = make_job(ranks_case, tmp_path / "jobs")
    rank_files = ";".join(str(p.relative_to(tmp_path)) for p in sorted(ranks.rglob("*")) if p.is_file())
    csv = tmp_path / "jobs.csv"
    csv.write_text(
        "job_id,paths,owner,gpus,start,end\n"
        f"a-oom,jobs/{oom.name},ana,8,2026-11-24T10:00:00Z,2026-11-24T12:00:00Z\n"
        f"b-kill,jobs/{sigkill.name},bo,64,2026-11-25T00:00:00+00:00,2026-11-25T01:00:00\n"
        f"c-ranks,\"{rank_files}\",cy,,,\n", encoding="utf-8")
    report, result = triage_json(csv, "--no-history", "--sort", "gpu-hours")
    assert report["errors"] == [] and report["jobs"] == 3
    hours = [g["gpu_hours"] for g in report["groups"]]
    assert hours[:2] == [64.0, 16.0] and hours[2] is None
    assert report["groups"][0]["example_jobs"] == ["b-kill"] and report["groups"][0]["owners"] == ["bo"]
    assert report["groups"][1]["last_seen"] == "2026-11-24T12:00:00+00:00"
    assert report["groups"][2]["category"] == label(ranks_case)["category"]
    jsonl = tmp_path / "jobs.jsonl"
    files = [str(p) for p in sorted(ranks.rglob("*")) if p.is_file()]
    jsonl.write_text(json.dumps({"job_id": "c-ranks", "paths": files, "owner": "cy"}) + "\n\n"
                     + json.dumps({"job_id": "a-oom", "paths": str(oom), "gpus": 2, "start": "2026-11-24T10:00",
                                   "end": "2026-11-24T10:30"}) + "\n"
                     + "not json\n", encoding="utf-8")
    report, _ = triage_json(jsonl, "--no-history", "--sort", "gpu-hours")
    assert [g["gpu_hours"] for g in report["groups"]] == [1.0, None]
    assert [e["job_id"] for e in report["errors"]] == ["jobs.jsonl:4"]
    assert "not JSON" in report["errors"][0]["message"]
    bad = tmp_path / "bad.csv"
    bad.write_text("id,logs\nx,y\n", encoding="utf-8")
    result = run("triage", bad, "--no-history")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "job_id" in result.stderr


def test_a_bad_job_is_an_error_and_the_run_goes_on(tmp_path: Path) -> None:
    good = make_job(GEN / "gen-cpp-compile-error", tmp_path)
    empty = tmp_path / "empty-job"
    empty.mkdir()
    report, result = triage_json(good, tmp_path / "no-such-job", empty, "--no-history")
    assert result.returncode == 1  # the good job failed
    assert report["diagnosed"] == 1 and len(report["groups"]) == 1
    errors = {e["job_id"]: e["message"] for e in report["errors"]}
    assert set(errors) == {"no-such-job", "empty-job"}
    assert "no such file or directory" in errors["no-such-job"]
    assert "no log files" in errors["empty-job"]
    assert all("\n" not in m for m in errors.values())
    text = run("triage", good, tmp_path / "no-such-job", "--no-history", "--workers", "1")
    assert "could not be diagnosed" in text.stdout and "no-such-job" in text.stdout
    nothing = run("triage", tmp_path / "no-such-job", "--no-history")
    assert nothing.returncode == 2 and "none of the 1 jobs could be diagnosed" in nothing.stderr


def test_process_pool_gives_the_same_groups(tmp_path: Path) -> None:
    jobs = tmp_path / "jobs"
    for case in (GPU / "gpu-cuda-oom", GPU / "gpu-cuda-oom-compiled", GEN / "gen-cpp-compile-error"):
        make_job(case, jobs)
    one, _ = triage_json(jobs / "*", "--no-history")
    result = run("triage", "--format", "json", "--workers", "2", jobs / "*", "--no-history")
    assert json.loads(result.stdout)["groups"] == one["groups"]


def test_markdown_escapes_log_text(tmp_path: Path) -> None:
    """A decisive line with Markdown, HTML and a terminal escape reaches neither page nor terminal raw."""
    job = tmp_path / "hostile"
    job.mkdir()
    (job / "log.txt").write_text(
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "KeyError: '<img src=x onerror=alert(1)>`|**\u009b2J\x01'\n", encoding="utf-8")
    result = run("triage", job, "--format", "markdown", "--no-history", "--workers", "1")
    assert result.returncode == 1, result.stderr
    assert "\u009b" not in result.stdout and "\x01" not in result.stdout and "\\x9b" in result.stdout
    outside_code = [ln for ln in result.stdout.splitlines() if "<img" in ln and not ln.startswith("`")]
    assert all("\\<img" in ln or "`" in ln for ln in outside_code)
    terminal = run("triage", job, "--no-history", "--workers", "1")
    assert "\u009b" not in terminal.stdout and "\x01" not in terminal.stdout and "\\x9b" in terminal.stdout


def test_json_output_follows_its_schema(tmp_path: Path) -> None:
    import jsonschema

    schema = json.loads(run("triage", "--print-schema").stdout)
    assert "groups" in schema["properties"] and "GroupOut" in schema["$defs"]
    job = make_job(GPU / "gpu-cuda-oom", tmp_path)
    report, _ = triage_json(job, tmp_path / "missing", "--db", tmp_path / "h.sqlite3")
    jsonschema.validate(report, schema)
    assert report["schema_version"] == "1.0" and report["groups"][0]["history"]["jobs"] == 1


@pytest.mark.parametrize("args", [(), ("--workers", "0")])
def test_bad_usage_is_one_line(args: tuple[str, ...]) -> None:
    result = run("triage", *args, "--no-history")
    assert result.returncode == 2 and result.stderr.count("\n") == 1


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    """stderr a pipe: nothing there; stderr a terminal (a pty): the bar, with its jobs/s column."""
    import pty

    jobs = tmp_path / "jobs"
    for i in range(12):
        make_job(GPU / "gpu-cuda-oom", jobs, f"job-{i:02d}")
    piped = run("triage", jobs / "*", "--no-history", "--workers", "1")
    assert piped.returncode == 1 and piped.stderr == ""
    leader, follower = pty.openpty()
    env = {**os.environ, "COLUMNS": "120"}
    proc = subprocess.Popen([sys.executable, "-m", "denpex", "triage", str(jobs / "*"), "--no-history",
                             "--workers", "1"], stdout=subprocess.PIPE, stderr=follower, env=env, cwd=REPO)
    os.close(follower)
    out, _ = proc.communicate(timeout=120)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert proc.returncode == 1 and b"12 jobs" in out
    assert b"triage" in seen and b"/12" in seen


def test_folders_of_the_same_name_are_told_apart(tmp_path: Path) -> None:
    for run_name in ("run-a", "run-b"):
        make_job(GPU / "gpu-cuda-oom", tmp_path / run_name, "logs")
    report, _ = triage_json(tmp_path / "run-*" / "logs", "--no-history")
    assert report["errors"] == [] and report["groups"][0]["count"] == 2
    assert sorted(report["groups"][0]["jobs"]) == [str(tmp_path / "run-a" / "logs"), str(tmp_path / "run-b" / "logs")]
    csv = tmp_path / "m.csv"
    csv.write_text(f"job_id,paths\nx,{tmp_path / 'run-a' / 'logs'}\nx,{tmp_path / 'run-b' / 'logs'}\n")
    report, _ = triage_json(csv, "--no-history")
    assert [e["message"] for e in report["errors"]] == [
        f"job id 'x' given more than once (this one: {tmp_path / 'run-b' / 'logs'})"]
