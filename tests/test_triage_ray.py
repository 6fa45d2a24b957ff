"""`denpex triage --engine ray` on a real local Ray cluster (2 CPUs, started once for the module), and job
logs read through fsspec URLs (`memory://` filled from corpus logs, `file://` on the Ray workers)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import pytest
from click.testing import CliRunner

from denpex.cli import cli
from denpex.fleet.manifest import jobs_from_inputs
from denpex.fleet.triage import run_jobs
from tests.conftest import REPO
from tests.test_triage import GEN, GPU, label, make_job, run

try:
    import ray
except ImportError as missing:  # Ray is in the test extra: CI must have it (a failure), a developer may not
    if os.environ.get("CI") == "true":
        raise ImportError("ray is in the test extra, CI must have it: pip install -e '.[test]'") from missing
    pytest.skip("ray is not installed (pip install -e '.[test]')", allow_module_level=True)

CASES = (GPU / "gpu-cuda-oom", GPU / "gpu-cuda-oom-compiled", GEN / "gen-cpp-compile-error",
         GEN / "gen-dist-rank2-keyerror-logdir", GEN / "gen-dist-rank1-sigkill")


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A real local cluster of 2 CPUs (so 2 worker processes), shared by the module; its GCS address."""
    context = ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield context.address_info["gcs_address"]
    ray.shutdown()


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ray-jobs")
    for case in CASES:
        make_job(case, root / "jobs")
    clean = next(p.parent for p in sorted((REPO / "tests" / "corpus").rglob("label.json"))
                 if label(p.parent)["category"] == "none")
    make_job(clean, root / "jobs", "zz-clean")
    return root


def test_ray_report_is_the_local_report_byte_for_byte(jobs: Path, cluster: str) -> None:
    """A manifest (owners, GPU-hours, a bad row, a missing folder) through both engines: the same bytes out."""
    manifest = jobs / "jobs.csv"
    rows = [f"{p.name},jobs/{p.name},owner-{i % 2},{i + 1},2026-11-2{i}T10:00:00Z,2026-11-2{i}T1{i}:30:00Z"
            for i, p in enumerate(sorted((jobs / "jobs").iterdir()))]
    manifest.write_text("job_id,paths,owner,gpus,start,end\n" + "\n".join(rows)
                        + "\nmissing,jobs/no-such-job,,,,\nbad,jobs/x,,many,,\n", encoding="utf-8")
    local = run("triage", "--format", "json", "--no-history", "--workers", "2", manifest)
    remote = run("triage", "--format", "json", "--no-history", "--engine", "ray", "--ray-address", cluster,
                 "--batch-size", "2", manifest)
    assert remote.returncode == local.returncode == 1, remote.stderr
    assert remote.stdout == local.stdout
    report = json.loads(remote.stdout)
    assert report["jobs"] == 8 and report["diagnosed"] == 6 and len(report["groups"]) == 4
    assert {e["job_id"] for e in report["errors"]} == {"missing", "bad"}
    assert report["clean_jobs"] == ["zz-clean"]
    note = remote.stderr.strip().splitlines()[-1]
    assert note.startswith(f"denpex: note: ray: 4 tasks (at most 2 jobs each) on the Ray cluster at {cluster}")
    assert "in 2 worker processes" in note  # the batches really ran in parallel, in two processes
    markdown = [run("triage", "--format", "markdown", "--no-history", *engine, jobs / "jobs" / "*").stdout
                for engine in ((), ("--engine", "ray", "--ray-address", cluster))]
    assert markdown[0] == markdown[1] and "gpu-cuda-oom" in markdown[0]


def test_library_on_this_process_cluster_with_file_urls(jobs: Path, cluster: str) -> None:
    """run_jobs_ray in a process where Ray is up uses that cluster; file:// URLs are fetched on the workers
    through fsspec and diagnose as their folders do (same groups, same seen times)."""
    from denpex.fleet.ray_engine import IN_PROCESS, run_jobs_ray

    folders = sorted(str(p) for p in (jobs / "jobs").iterdir())
    local = run_jobs(jobs_from_inputs(folders), workers=1)
    urls = [f"file://{p}" for p in folders]
    remote, ray_run = run_jobs_ray(jobs_from_inputs(urls), batch=3)
    assert ray_run.cluster == IN_PROCESS and not ray_run.started and ray_run.tasks == 2
    assert ray_run.note().startswith("denpex: note: ray: 2 tasks (at most 3 jobs each) on the Ray cluster this "
                                     "process is connected to (2 CPUs), in ")
    assert [r.paths for r in remote] == [[u] for u in urls]
    assert [{**asdict(r), "paths": None, "verify": None} for r in remote] == \
        [{**asdict(r), "paths": None, "verify": None} for r in local]
    # a verify command names the log as given (the URL), not the worker's temporary copy
    want = [r.verify.replace(p, f"file://{p}") for r, p in zip(local, folders, strict=True)]
    assert [r.verify for r in remote] == want
    assert any("--log file://" in r.verify for r in remote)
    assert ray.is_initialized()  # a cluster the engine did not start is left running


def test_memory_urls_diagnose_as_folders(jobs: Path) -> None:
    """Corpus logs copied into fsspec's memory:// store (a URL glob, a folder, one object) group as the same
    logs in folders; a missing object is that job's error. memory:// lives in one process, so this runs the
    per-job function Ray runs, in this process (--workers 1)."""
    import fsspec

    memory = fsspec.filesystem("memory")
    if memory.exists("/bucket"):
        memory.rm("/bucket", recursive=True)
    folders = sorted((jobs / "jobs").iterdir())
    for folder in folders:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            memory.pipe(f"/bucket/runs/{file.relative_to(jobs / 'jobs').as_posix()}", file.read_bytes())
    single = next(f for f in folders if (f / "log.txt").exists())
    runner = CliRunner()
    args = ["triage", "--format", "json", "--no-history", "--workers", "1"]
    from_memory = runner.invoke(cli, [*args, "memory://bucket/runs/*"])
    from_folders = runner.invoke(cli, [*args, *map(str, folders)])
    assert from_memory.exit_code == from_folders.exit_code == 1, from_memory.output
    got, want = json.loads(from_memory.stdout), json.loads(from_folders.stdout)
    # memory:// objects carry the time they were written, not the files'; verify names the log as given
    differ = ("first_seen", "last_seen", "verify")
    assert [{k: v for k, v in g.items() if k not in differ} for g in got["groups"]] == \
        [{k: v for k, v in g.items() if k not in differ} for g in want["groups"]]
    assert [g["verify"] for g in got["groups"]] == [g["verify"].replace(str(jobs / "jobs"), "memory:///bucket/runs")
                                                    for g in want["groups"]]
    assert got["clean_jobs"] == want["clean_jobs"] and got["errors"] == [] and got["jobs"] == len(folders)
    one = runner.invoke(cli, [*args, f"memory://bucket/runs/{single.name}/log.txt",
                              "memory://bucket/runs/nothing-here"])
    report = json.loads(one.stdout)
    assert report["diagnosed"] == 1 and report["groups"][0]["jobs"] == ["log.txt"]
    assert report["errors"][0]["message"] == "cannot read memory://bucket/runs/nothing-here: no such object or prefix"


def test_without_ray_one_line_and_exit_2(jobs: Path) -> None:
    """Ray made unimportable (sys.modules['ray'] = None, as in an install without the extra)."""
    code = ("import sys; sys.modules['ray'] = None; from denpex.cli import console; "
            "sys.argv = ['denpex', *sys.argv[1:]]; console()")
    result = subprocess.run([sys.executable, "-c", code, "triage", "--engine", "ray", "--no-history",
                             str(jobs / "jobs" / "*")], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == "denpex: error: --engine ray needs Ray, which is not installed: pip install " \
                            "'denpex[ray]'\n"
    light = subprocess.run([sys.executable, "-c", "import sys, denpex.cli, denpex.fleet.triage; "
                            "print('ray' in sys.modules, 'fsspec' in sys.modules)"],
                           capture_output=True, text=True, timeout=120, cwd=REPO)
    assert light.stdout == "False False\n"  # the local engine imports neither


def test_bad_ray_usage_is_one_line(jobs: Path) -> None:
    nobody = run("triage", "--engine", "ray", "--ray-address", "127.0.0.1:9", "--no-history", jobs / "jobs" / "*")
    assert nobody.returncode == 2 and nobody.stderr.count("\n") == 1
    assert nobody.stderr.startswith("denpex: error: --ray-address 127.0.0.1:9: no Ray cluster there")
    mixed = run("triage", "--batch-size", "4", "--no-history", jobs / "jobs" / "*")
    assert mixed.returncode == 2 and "go with --engine ray" in mixed.stderr and mixed.stderr.count("\n") == 1
