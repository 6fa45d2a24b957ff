"""Issue 4: where a catalog entry's fix can be run here (CPU), apply it and show the signature gone.

Each case runs the REAL generator script of the entry's fixture (tests/fixtures/catalog/<script>) and
asserts that denpex names the entry; then it runs the SAME script with the fix that the entry's `fix`
text describes applied (a few exact text replacements, or a different launch where the fix is the
launch) through `denpex verify --entry <id> -- <command>`, which must exit 0: the signature is gone and
the command passed. The saved rerun log is diagnosed again to be sure the entry's finding is absent.

The scripts run from a neutral job directory (`train.py`), with torch's compile/log variables scrubbed
and a TORCHINDUCTOR_CACHE_DIR of their own. The failing run's cache is empty, as
tests/fixtures/catalog/capture.py makes it. The fixed run's cache starts as a copy of a seed cache that
one trivial compile filled (Inductor's vector-ISA probe binaries, built once per cache dir, ~17 CPU
seconds), and it compiles on one thread (no pool of compile workers, each of which imports torch): a
user's second run, rather than their first ever, at half the CPU. The committed .log fixtures are not
touched.

Every run starts on a small pool beside the other test modules, whose work leaves a core idle most of
the time: under xdist when the module's first test runs (the module is scheduled first), in one process
when the session begins, with this module's tests ordered last (tests/conftest.py); the tests collect
the results.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("torch")

import denpex  # noqa: E402
from tests.conftest import start_runs_once  # noqa: E402

pytestmark = pytest.mark.torch

HERE = Path(__file__).resolve().parent
FIXTURES = HERE / "fixtures" / "catalog"
BIN = Path(sys.executable).parent
PYTHON = sys.executable
TORCHRUN = str(BIN / "torchrun")
DENPEX = str(BIN / "denpex")
# generous: under load (the suite's other workers, other jobs on the machine) a CPU torch.compile took 85 s to
# compile one small model, and cache-lock-timeout's fixed rerun compiles twice
RUN_TIMEOUT = 360
RUN_LAST = True  # its runs take a pool of their own: tests/conftest.py orders the module (first under xdist)
_HANG_RERUNS = 2  # reruns of a run that hung where it should have died (see _run_broken)
_CGROUP_V1_MEMORY = "/sys/fs/cgroup/memory"
WORKERS = 3  # beside the foreground tests: enough to keep the idle core busy, not so many that runs time out

_SCRUB = ("CXX", "CC", "TORCH_LOGS", "TORCH_COMPILE_DEBUG", "PYTHONWARNINGS")
_SCRUB_PREFIXES = ("TORCHDYNAMO_", "TORCHINDUCTOR_", "TORCH_COMPILE_", "MASTER_", "RANK", "WORLD_SIZE")


@dataclass(frozen=True)
class Case:
    entry: str
    script: str  # generator script under tests/fixtures/catalog
    fix: tuple[tuple[str, str], ...] = ()  # (old, new): the entry's fix, applied to the script's text
    launch: str = "python"  # python | torchrun | torchrun-busy-port | torchrun-two-nodes | shm-64m | cgroup-1g | bash
    fixed_launch: str | None = None  # when the fix is the launch itself
    env: tuple[tuple[str, str], ...] = ()  # set for the failing run (and the fixed one, unless fixed_env)
    fixed_env: tuple[tuple[str, str], ...] | None = None  # when the fix is in the environment
    nproc: int = 2
    name: str = ""  # test id when one entry has several cases
    # A known gap: the fix removes the entry's signature but the program still fails with this message.
    still_fails_with: str = ""

    @property
    def id(self) -> str:
        return self.name or self.entry


CASES = [
    # --- user.code_error -------------------------------------------------------------------------
    Case("dtype-mismatch", "dtype-mismatch.py",
         (("torch.tensor(rows, dtype=torch.float64)", "torch.tensor(rows, dtype=torch.float64).float()"),)),
    Case("dtype-mismatch", "loss-target-dtype.py",
         (("torch.randint(0, 3, (64,)).float()", "torch.randint(0, 3, (64,)).float().long()"),),
         name="dtype-mismatch-loss-target"),
    Case("matmul-shape-mismatch", "matmul-shape-mismatch.py",
         (("nn.Linear(32 * 8 * 8, num_classes)", "nn.Linear(32 * 7 * 7, num_classes)"),)),
    Case("backward-no-grad", "backward-no-grad.py",
         (("for p in model.parameters():\n    p.requires_grad = False",
           "for p in model[:-1].parameters():\n    p.requires_grad = False"),)),
    Case("backward-graph-freed", "backward-graph-freed.py",
         (("rnn(emb(inp), hidden)", "rnn(emb(inp), hidden.detach())"),)),
    Case("inplace-modified-for-grad", "inplace-modified-for-grad.py",
         (("g *= mask", "g = g * mask"),)),
    Case("state-dict-key-mismatch", "state-dict-key-mismatch.py",
         (('model.load_state_dict(state["model"])',
           'model.load_state_dict({k.removeprefix("module."): v for k, v in state["model"].items()})'),)),
    Case("python-json-decode-error", "python-json-decode-error.py",
         (("""'{"shards": ["shard-00000.tar", "shard-00001.t')""",
           """'{"shards": ["shard-00000.tar", "shard-00001.tar"]}')"""),)),
    Case("python-syntax-error", "python-syntax-error-train.py",
         (("def train_step(model, batch)\n", "def train_step(model, batch):\n"),)),
    # --- distributed, gloo on CPU ----------------------------------------------------------------
    Case("ddp-unused-parameters", "ddp-unused-parameters.py",
         (("model = DDP(Net())", "model = DDP(Net(), find_unused_parameters=True)"),), launch="torchrun"),
    Case("ddp-model-mismatch", "ddp-model-mismatch.py",
         (("depth = 2 if rank == 0 else 3", "depth = 2"),), launch="torchrun"),
    Case("ddp-reentrant-checkpoint", "ddp-reentrant-checkpoint.py",
         (("use_reentrant=True", "use_reentrant=False"),), launch="torchrun"),
    Case("default-pg-not-initialized", "default-pg-not-initialized.py", fixed_launch="torchrun", nproc=1),
    Case("store-address-in-use", "train_ddp_toy.py", launch="torchrun-busy-port", fixed_launch="torchrun"),
    Case("monitored-barrier-timeout", "monitored-barrier-timeout.py",
         (("time.sleep(30)", "time.sleep(0.1)"),), launch="torchrun"),
    # GLOO_SOCKET_IFNAME copied from a cluster whose NIC is ib0 (socket-interface-not-found-gloo.sh)
    Case("socket-interface-not-found", "train_ddp_toy.py", launch="torchrun",
         env=(("GLOO_SOCKET_IFNAME", "ib0"),), fixed_env=(("GLOO_SOCKET_IFNAME", "lo"),)),
    # a two-node job whose second agent never starts (rendezvous-timeout.sh); the fix: the right --nnodes
    Case("rendezvous-timeout", "train_ddp_toy.py", launch="torchrun-two-nodes", fixed_launch="torchrun", nproc=1),
    # Casting everything to bf16 (the fix's first option) trades this error for the adapters' own fp32 matmul
    # (verify caught it); this program needs the other option: the fp32 adapters as FSDP units of their own.
    Case("fsdp-mixed-dtype-flatten", "fsdp-mixed-dtype-flatten.py",
         (('    model = FSDP(model, device_id=torch.device("cpu"))',
           '    for block in model:\n'
           '        block.adapter_a = FSDP(block.adapter_a, device_id=torch.device("cpu"))\n'
           '        block.adapter_b = FSDP(block.adapter_b, device_id=torch.device("cpu"))\n'
           '    model = FSDP(model, device_id=torch.device("cpu"))'),), launch="torchrun"),
    # --- host memory -----------------------------------------------------------------------------
    Case("cpp-bad-alloc", "cpp-bad-alloc.py",
         (("per_row = labels.unbind(0)  # one Tensor object per row: a C++ vector of 30M tensors",
           "per_row = labels  # rows indexed lazily from the one tensor"),)),
    # --- caches ----------------------------------------------------------------------------------
    Case("cache-lock-timeout", "cache-lock-timeout.sh",
         (('TORCHINDUCTOR_CACHE_DIR="$SHARED" TORCHINDUCTOR_FILE_LOCK_TIMEOUT=20',
           'TORCHINDUCTOR_CACHE_DIR="$JOB/own_cache" TORCHINDUCTOR_FILE_LOCK_TIMEOUT=20'),), launch="bash"),
    # --- compile (Dynamo / Inductor on CPU) ------------------------------------------------------
    Case("dynamo-generator-function", "dynamo-generator-function.py", ((
        """@torch.compile(fullgraph=True)
def stream(h, steps: int):
    x = torch.zeros_like(h)
    for _ in range(steps):
        h = cell(x, h)
        x = torch.tanh(head(h))
        yield x
""",
        """@torch.compile(fullgraph=True)
def step(x, h):
    h = cell(x, h)
    return torch.tanh(head(h)), h


def stream(h, steps: int):
    x = torch.zeros_like(h)
    for _ in range(steps):
        x, h = step(x, h)
        yield x
"""),)),
    Case("dynamo-unsupported-context-manager", "dynamo-unsupported-context-manager.py", (
        ("        with self.lock:\n            self.running", "        self.running"),
        ("        out = cmodel(torch.randn(16, 32))",
         "        with model.lock:\n            out = cmodel(torch.randn(16, 32))"),
    )),
    Case("dynamo-disabled-function-fullgraph", "dynamo-disabled-function-fullgraph.py",
         (("cmodel = torch.compile(model, fullgraph=True)", "cmodel = torch.compile(model)"),)),
    Case("graph-break-one-hot-num-classes", "graph-break-one-hot-num-classes.py",
         (("F.one_hot(labels).float()", "F.one_hot(labels, num_classes=logits.shape[-1]).float()"),)),
    Case("custom-op-missing-fake-impl", "custom-op-missing-fake-impl.py",
         (("\n\nclass Block(", "\n\n@fused_rmsnorm.register_fake\ndef _(x, weight, eps):\n"
                               "    return torch.empty_like(x)\n\n\nclass Block("),)),
    Case("recompile-forbidden", "recompile-forbidden.py",
         (("cmodel = torch.compile(model)", "cmodel = torch.compile(model, dynamic=True)"),)),
    # The fix's options do not rescue this program (a WGAN-GP penalty: autograd.grad with create_graph=True):
    # dropping fullgraph=True (below) or compiling only the critic both end in "does not currently support
    # double backward"; trace_autograd_ops=True gives another Unsupported (gb7324). Kept to show the gap.
    Case("dynamo-autograd-call-in-graph", "dynamo-autograd-call-in-graph.py",
         (("@torch.compile(fullgraph=True)", "@torch.compile"),),
         still_fails_with="torch.compile with aot_autograd does not currently support double backward"),
    Case("dynamic-dim-range-guard", "dynamic-dim-range-guard.py",
         (("torch._dynamo.mark_dynamic(x, 0, min=2, max=64)", "torch._dynamo.mark_dynamic(x, 0, min=2, max=8)"),)),
    Case("data-dependent-int-specialization", "unbacked-int-specialization.py", (
        ("n = int(num_iters.max().item())\n        for _ in range(n):", "for _ in range(num_iters):"),
        ("torch.tensor([2, 3, 1, 2]))", "int(torch.tensor([2, 3, 1, 2]).max()))"),
    )),
    Case("dynamo-fake-tensor-op-error", "fake-tensor-shape-mismatch.py",
         (("torch.randn(128, 10)", "torch.randn(96, 10)"),)),
    Case("inductor-missing-lowering", "inductor-missing-lowering.py",
         (("inductor_config.implicit_fallbacks = False", "inductor_config.implicit_fallbacks = True"),)),
    # --- C++ toolchain ---------------------------------------------------------------------------
    Case("cpp-extension-ninja-missing", "cpp-extension-ninja-missing.sh",
         (("for t in gcc g++ cc c++ as ld; do", "for t in gcc g++ cc c++ as ld ninja; do"),), launch="bash"),
]


_SEED_PROGRAM = "import torch\nprint(torch.compile(lambda x: x.sin() + 1)(torch.ones(8)).sum().item())\n"


def _seed_cache(root: Path) -> Path:
    """An Inductor cache filled by one trivial compile: what a second run finds in the user's cache."""
    seed = root / "seed-inductor-cache"
    env = _env(root)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(seed)
    proc = _run_group([PYTHON, "-c", _SEED_PROGRAM], root, env)
    assert proc.returncode == 0, f"the seed compile failed:\n{proc.stdout[-3000:]}"
    return seed


def _env(job: Path, extra: tuple[tuple[str, str], ...] = (), seed: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUB and not k.startswith(_SCRUB_PREFIXES)}
    env.update(extra)
    env["PYTHONUNBUFFERED"] = "1"
    env["TORCHINDUCTOR_CACHE_DIR"] = str(job / "inductor-cache")
    if seed is not None:  # the fixed run: a second run's cache, compiled on one thread (module docstring)
        shutil.copytree(seed, job / "inductor-cache")
        env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"
    env["DENPEX_TORCH_PYTHON"] = PYTHON
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def _command(launch: str, case: Case, port: int | None = None) -> list[str]:
    if launch == "python":
        return [PYTHON, "train.py"]
    if launch == "bash":
        return ["bash", "run.sh"]
    if launch == "cgroup-1g":  # python in a 1 GiB memory cgroup (v1), removed when the run ends
        script = (f'CG={_CGROUP_V1_MEMORY}/denpex-fixtest-$$; mkdir -p "$CG" && '
                  'echo 1073741824 > "$CG/memory.limit_in_bytes" || exit 3; '
                  f'sh -c "echo \\$\\$ > $CG/cgroup.procs && exec {shlex.quote(PYTHON)} train.py"; rc=$?; '
                  'rmdir "$CG" 2>/dev/null; exit $rc')
        return ["sh", "-c", script]
    if launch == "shm-64m":
        return ["unshare", "-m", "sh", "-c",
                f"mount -t tmpfs -o size=64m tmpfs /dev/shm && exec {shlex.quote(PYTHON)} train.py"]
    if launch == "torchrun-two-nodes":  # only this node's agent starts: the rendezvous waits for the other
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            free = probe.getsockname()[1]
        return [TORCHRUN, "--nnodes", "2", "--nproc-per-node", str(case.nproc), "--rdzv-backend", "c10d",
                "--rdzv-endpoint", f"localhost:{free}", "--rdzv-id", "job42", "--rdzv-conf", "join_timeout=20",
                "--monitor-interval", "0.5", "train.py"]
    rdzv = ["--master-port", str(port)] if port else ["--standalone"]
    return [TORCHRUN, *rdzv, "--nproc-per-node", str(case.nproc), "--monitor-interval", "0.5", "train.py"]


def _job(root: Path, case: Case, fixed: bool, attempt: int = 1) -> Path:
    job = root / ("broken" if not fixed else "fixed" if attempt == 1 else f"fixed-{attempt}")
    job.mkdir(parents=True)
    text = (FIXTURES / case.script).read_text()
    if fixed:
        for old, new in case.fix:
            assert text.count(old) == 1, f"{case.script} no longer holds exactly one {old!r}"
            text = text.replace(old, new)
    (job / ("run.sh" if case.script.endswith(".sh") else "train.py")).write_text(text)
    return job


def _entries(text: str) -> list[str]:
    return [f.entry_id for f in denpex.diagnose(text, workers=1).findings]


@dataclass
class Outcome:
    rc: int
    output: str  # the failing run's output, or verify's report
    rerun: str = ""  # the fixed run's log as `denpex verify --save-log` wrote it


def _run_group(cmd: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run in a process group of its own; on timeout the whole group is killed (workers included)."""
    with subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          errors="replace", start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
    return subprocess.CompletedProcess(cmd, proc.returncode, out)


def _run_broken(case: Case, root: Path) -> Outcome:
    """The real failing program, as its fixture was captured."""
    job = _job(root, case, fixed=False)
    holder = None
    if case.launch == "torchrun-busy-port":  # another job already listens on the rendezvous port
        holder = socket.socket()
        holder.bind(("0.0.0.0", 0))
        holder.listen()
        cmd = _command("torchrun", case, port=holder.getsockname()[1])
    else:
        cmd = _command(case.launch, case)
    try:
        for attempt in range(_HANG_RERUNS + 1):
            try:
                proc = _run_group(cmd, job, _env(job, case.env))
                break
            except subprocess.TimeoutExpired:
                # under load, DataLoader workers short of /dev/shm sometimes block instead of dying of SIGBUS
                # (seen once in CI, not reproduced alone): that run shows nothing to diagnose, so run it again
                if case.launch != "shm-64m" or attempt == _HANG_RERUNS:
                    raise
    finally:
        if holder is not None:
            holder.close()
    return Outcome(proc.returncode, proc.stdout)


def _run_fixed(case: Case, root: Path, seed: Path, attempt: int = 1) -> Outcome:
    """The same program with the entry's fix applied, through `denpex verify --entry`."""
    job = _job(root, case, fixed=True, attempt=attempt)
    log = root / f"fixed-{attempt}.log"
    cmd = [DENPEX, "verify", "--entry", case.entry, "--quiet", "--save-log", str(log),
           "--timeout", str(RUN_TIMEOUT), "--", *_command(case.fixed_launch or case.launch, case)]
    env = _env(job, case.env if case.fixed_env is None else case.fixed_env, seed=seed)
    proc = subprocess.run(cmd, cwd=job, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace", timeout=RUN_TIMEOUT + 30)
    outcome = Outcome(proc.returncode, proc.stdout, log.read_text(errors="replace") if log.exists() else "")
    # torch 2.13's gloo teardown can abort a rank after the job's work is done (1 run in 20-30 on a busy
    # machine, even after a barrier; more under CI's load): that upstream race, and only it, earns one more run
    if outcome.rc != 0 and attempt == 1 and _only_teardown_abort(outcome.rerun):
        return _run_fixed(case, root, seed, attempt=2)
    return outcome


def _only_teardown_abort(rerun: str) -> bool:
    diagnosis = denpex.diagnose(rerun, workers=1)
    return diagnosis.root_cause is not None and diagnosis.root_cause.entry_id == "teardown-abort"


_pool: ThreadPoolExecutor | None = None
_futures: dict[tuple[str, bool], Future[Outcome]] = {}
_seed: Future[Path] | None = None


def start_background_runs(items: list[pytest.Item], tmp_path_factory: pytest.TempPathFactory) -> None:
    """Start every selected case's two runs at once on a small pool (most of a run is waiting: torch
    import, rendezvous, barriers, the C++ compiler); called by tests/conftest.py when the session begins."""
    global _pool, _seed
    # other test modules parametrize a "case" of their own: keep only this module's selected items
    wanted = {item.callspec.params["case"].id for item in items
              if getattr(item, "function", None) is test_fix_removes_signature}
    if not wanted:
        return
    _pool = ThreadPoolExecutor(max_workers=WORKERS)
    _seed = _pool.submit(_seed_cache, tmp_path_factory.mktemp("seed"))
    for case in reversed(CASES):  # the slow compile cases are listed last: start them first
        if case.id in wanted:
            root = tmp_path_factory.mktemp(case.id)
            _futures[case.id, False] = _pool.submit(_run_broken, case, root)
            _futures[case.id, True] = _pool.submit(lambda c=case, r=root: _run_fixed(c, r, _seed.result()))


def stop_background_runs() -> None:
    if _pool is not None:
        _pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, bool],
                                                                                          Future[Outcome]]:
    start_runs_once(sys.modules[__name__], request.session, tmp_path_factory)  # under xdist: now (conftest)
    assert _futures, "this module's runs did not start"
    return _futures


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_fix_removes_signature(case: Case, runs) -> None:
    _check(case, runs[case.id, False].result(), runs[case.id, True].result())


# Run one at a time, after the pool above has drained: under the others' load the failing run's DataLoader
# hung twice (240 s timeout) instead of raising its shm error; alone it fails in ~2 s, as the fixture shows.
SERIAL_CASES = [
    # docker's default 64 MiB /dev/shm (a private tmpfs, as dataloader-shm-too-small.sh mounts it)
    Case("shared-memory-exhausted", "dataloader-shm-too-small.py", (("num_workers=4", "num_workers=0"),),
         launch="shm-64m"),
    # a 1 GiB memory cgroup, as dataloader-worker-oom-killed.sh sets up; the fix: no unbounded per-worker cache
    Case("dataloader-worker-oom-killed", "dataloader-worker-oom-killed.py", ((
        "        if i not in self.cache:\n"
        "            self.cache[i] = torch.randn(3, 256, 256)  # \"decoded\" frame kept forever in this worker\n"
        "        return self.cache[i], i % 10",
        "        return torch.randn(3, 256, 256), i % 10  # decoded on demand, not kept"),), launch="cgroup-1g"),
]


@pytest.mark.parametrize("case", SERIAL_CASES, ids=lambda c: c.id)
def test_fix_removes_signature_alone(case: Case, tmp_path: Path) -> None:
    if case.launch == "shm-64m" and not _can_mount_private_shm():
        pytest.skip("needs root and mount namespaces (unshare -m) to give the run a 64 MiB /dev/shm")
    if case.launch == "cgroup-1g" and not os.access(_CGROUP_V1_MEMORY, os.W_OK):
        pytest.skip(f"needs root and a cgroup v1 memory hierarchy at {_CGROUP_V1_MEMORY}")
    seed = _seed.result() if _seed is not None else _seed_cache(tmp_path)
    _check(case, _run_broken(case, tmp_path), _run_fixed(case, tmp_path, seed))


def _can_mount_private_shm() -> bool:
    probe = ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=1m tmpfs /dev/shm"]
    try:
        return subprocess.run(probe, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def _check(case: Case, broken: Outcome, fixed: Outcome) -> None:
    """The failing run names the entry as its root cause; the fixed run verifies (or fails as recorded)."""
    assert broken.rc != 0, f"the unfixed run passed:\n{broken.output[-3000:]}"
    diagnosis = denpex.diagnose(broken.output, workers=1)
    found = [f.entry_id for f in diagnosis.findings]
    assert case.entry in found, f"{case.entry} not found in the failing run ({found}):\n{broken.output[-3000:]}"
    assert diagnosis.root_cause is not None and diagnosis.root_cause.entry_id == case.entry, found
    if case.still_fails_with:  # known gap, asserted exactly so that a change in torch or the catalog shows
        assert case.entry not in _entries(fixed.rerun)
        assert fixed.rc == 1 and case.still_fails_with in fixed.rerun, fixed.output[-3000:]
        return
    if fixed.rc != 0 and _only_teardown_abort(fixed.rerun):
        # torch 2.13 gloo's teardown race (see _run_fixed) struck twice: the job's work completed and the only
        # failure left is that abort, which no entry's fix is about; the entry's signature must still be gone
        assert case.entry not in _entries(fixed.rerun)
        return
    assert fixed.rc == 0, f"not verified (rc={fixed.rc}):\n{fixed.output[-3000:]}\n--- rerun:\n{fixed.rerun[-3000:]}"
    assert fixed.rerun.strip(), "verify saved no rerun log"
    assert case.entry not in _entries(fixed.rerun)


def test_cases_cover_real_fixtures() -> None:
    """Every case's script is a committed generator whose entry lists that script's log as a fixture."""
    for case in CASES + SERIAL_CASES:
        assert (FIXTURES / case.script).is_file(), case.script
        entry_file = HERE.parent / "src" / "denpex" / "catalog" / "entries" / f"{case.entry}.toml"
        assert entry_file.is_file(), case.entry
    assert shutil.which("bash")
