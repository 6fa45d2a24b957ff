"""`denpex bisect`: rerun a failing command under controls and name the layer that owns the failure.

Controls, each a fresh run of the unmodified command (logs under <runs dir>/<stamp>-bisect-<prog>/):

  baseline                     as written (the hook only observes)
  fresh-cache                  new empty TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR (deleted afterwards),
                               Inductor's remote caches off (TORCHINDUCTOR_*_REMOTE_CACHE=0)
  eager                        TORCHDYNAMO_DISABLE=1: torch.compile does nothing
  dynamo                       backend="eager": Dynamo traces, the graph runs as is
  aot_eager                    + AOTAutograd (joint graph, functionalization)
  aot_eager_decomp_partition   + Inductor's decompositions and the min-cut partitioner
  (inductor)                   the baseline itself, when it compiles with inductor (the default backend)

The owner is the lowest layer whose control fails the same way as the baseline (same catalog entry, or
for uncaught exceptions the same exception type); a passing fresh-cache control means the cached artifacts
own it. Runs stop once the owner is known (`--all` runs every control). With `jobs` > 1 the controls after
the baseline run that many at a time (good for CPU repros; a job that needs a whole GPU should keep 1).

How the backend is switched from outside the process: a startup hook. A temp dir holding denpex's
`sitecustomize.py` (control/_sitehook.py) is put first on PYTHONPATH; Python's `site` imports it in every
Python process the command starts (torchrun workers too). It waits for the job's own `import torch` through a
meta-path finder, then wraps `torch.compile` so every call uses the control's backend (dropping the
inductor-only `mode=`/`options=`), and records each call in a report file. An existing sitecustomize is
chained. Because the hook reports what it saw, a control it could not reach is marked invalid instead of
being read as a pass.

What this cannot do from outside the process (reported when it matters):
  * switch backends that the code picks without torch.compile: `torch._dynamo.optimize(...)`, torch.export,
    AOTInductor packages, a pre-compiled artifact, or `torch.compile` bound before torch finished importing
    (never, in practice);
  * reach interpreters that skip sitecustomize or PYTHONPATH: `python -S`, `-I`, `-E`, embedded Pythons,
    launchers that reset the environment (some schedulers, containers started by the command);
  * split a layer further: which Inductor pass or lowering (use `python -m torch._inductor.compiler_bisector`)
    or which graph (the minifier, TORCHDYNAMO_REPRO_AFTER);
  * see or undo configuration the code sets in-process (torch._inductor.config.*, torch._dynamo.config.*,
    e.g. cpp.cxx or suppress_errors): it applies in every control;
  * make a flaky or non-deterministic failure reproduce (each control runs once), or isolate the
    precompiled-header dir that torch keeps under the default cache dir even when TORCHINDUCTOR_CACHE_DIR is
    set; each control reruns the whole command (bound it with --timeout).
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from denpex.catalog import Catalog, load
from denpex.control.hook import Hook, HookReport, read_report
from denpex.control.runner import RunResult, private_dir, run, runs_dir, stamp_name
from denpex.model import Diagnosis, Verdict

EXIT_OWNER = 0
EXIT_INCONCLUSIVE = 1
EXIT_NOT_REPRODUCED = 3


@dataclass(frozen=True, slots=True)
class Control:
    name: str
    what: str  # how it is set up, for the report
    layer: str  # what a failure here (and a pass below) points at
    backend: str | None = None  # forced through the hook
    env: tuple[tuple[str, str], ...] = ()
    fresh_cache: bool = False


BASELINE = Control("baseline", "the command as written", "as written")
_REMOTE_CACHES_OFF = tuple((f"TORCHINDUCTOR_{name}_REMOTE_CACHE", "0")
                           for name in ("FX_GRAPH", "AUTOGRAD", "AUTOTUNE", "BUNDLED_AUTOTUNE"))
FRESH_CACHE = Control("fresh-cache", "new empty TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR, remote caches off",
                      "cache", env=_REMOTE_CACHES_OFF, fresh_cache=True)
EAGER = Control("eager", "TORCHDYNAMO_DISABLE=1 (no compilation)", "eager", env=(("TORCHDYNAMO_DISABLE", "1"),))
DYNAMO = Control("dynamo", 'torch.compile(backend="eager") (Dynamo only)', "dynamo", backend="eager")
AOT_EAGER = Control("aot_eager", 'torch.compile(backend="aot_eager")', "aot_autograd", backend="aot_eager")
DECOMP = Control("aot_eager_decomp_partition", 'torch.compile(backend="aot_eager_decomp_partition")',
                 "decompositions/partitioner", backend="aot_eager_decomp_partition")
LAYERS = (EAGER, DYNAMO, AOT_EAGER, DECOMP)
CONTROLS = (BASELINE, FRESH_CACHE, *LAYERS)


@dataclass
class Outcome:
    control: Control
    result: RunResult
    hook: HookReport
    status: str  # pass | same | other | invalid | timeout
    signature: str  # the decisive finding of this run, "" when none
    why: str = ""  # for invalid / other


@dataclass
class BisectResult:
    argv: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    owner: str | None = None  # cache | eager | dynamo | aot_autograd | decompositions/partitioner | <backend>
    exit_code: int = EXIT_INCONCLUSIVE
    summary: str = ""
    next_steps: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    directory: Path | None = None
    baseline_signature: str = ""

    def outcome(self, name: str) -> Outcome | None:
        return next((o for o in self.outcomes if o.control.name == name), None)


def signature(diagnosis: Diagnosis | None) -> str:
    """What identifies a failure across reruns: its catalog entry, plus the exception type for generic ones."""
    if diagnosis is None or diagnosis.root_cause is None or diagnosis.verdict is not Verdict.FAILURE:
        return ""
    root = diagnosis.root_cause
    exc = root.fields.get("exception") if root.generic else None
    return f"{root.entry_id}:{exc}" if exc else root.entry_id


def decisive_line(diagnosis: Diagnosis | None) -> str:
    if diagnosis is None or diagnosis.root_cause is None:
        return ""
    return diagnosis.root_cause.evidence.text.strip()


def _classify(control: Control, result: RunResult, hook: HookReport, baseline: str) -> tuple[str, str, str]:
    sig = signature(result.diagnosis)
    if result.timed_out:
        return "timeout", sig, "timed out"
    if control.backend is not None:
        if hook.loaded == 0:
            return "invalid", sig, ("the startup hook did not load: the command does not start Python through "
                                    "site/PYTHONPATH (python -S/-I/-E, an embedded interpreter, or a launcher that "
                                    "resets the environment)")
        if not hook.compiles:
            return "invalid", sig, ("torch.compile was never called, so the backend could not be switched (the "
                                    "code compiles through torch._dynamo.optimize, torch.export or AOTInductor, "
                                    "or fails before compiling)")
    failed = result.exit_code != 0 or bool(sig)
    if not failed:
        return "pass", sig, ""
    if baseline and sig == baseline:
        return "same", sig, ""
    if not sig and result.exit_code != 0 and not baseline:
        return "same", sig, ""  # neither run left a recognisable finding: compare by exit status only
    why = f"fails differently: {sig or 'exit ' + str(result.exit_code)}" + (
        f" ({decisive_line(result.diagnosis)[:160]})" if result.diagnosis and result.diagnosis.root_cause else "")
    return "other", sig, why


def bisect(
    argv: Sequence[str],
    *,
    run_all: bool = False,
    timeout: float | None = None,
    echo: bool = False,
    directory: Path | None = None,
    env: Mapping[str, str] | None = None,
    on_outcome: Callable[[Outcome], None] | None = None,
    on_start: Callable[[Control], None] | None = None,
    keep_caches: bool = False,
    catalog: Catalog | None = None,
    jobs: int = 1,
) -> BisectResult:
    argv = list(argv)
    catalog = catalog or load()
    base_env = dict(os.environ if env is None else env)
    directory = directory or (private_dir(runs_dir(base_env)) / stamp_name(argv, "bisect"))
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    out = BisectResult(argv, directory=directory)
    jobs = max(1, jobs)
    with Hook() as hook:

        def go(control: Control) -> Outcome:
            if on_start is not None:
                on_start(control)
            return _run_control(control, argv, hook, base_env, directory, timeout, echo, catalog,
                                out.baseline_signature, keep_caches)

        base = go(BASELINE)  # first and alone: the others are judged against its signature
        out.outcomes.append(base)
        out.baseline_signature = base.signature
        if on_outcome is not None:
            on_outcome(base)
        if base.status != "pass":
            todo = list(CONTROLS[1:])
            with ThreadPoolExecutor(max_workers=jobs) as pool:
                running: dict[Future[Outcome], Control] = {}
                while todo or running:
                    while todo and len(running) < jobs and (run_all or not _decided(out)):
                        control = todo.pop(0)
                        running[pool.submit(go, control)] = control
                    if not running:
                        break
                    finished, _ = wait(running, return_when=FIRST_COMPLETED)
                    for future in finished:
                        running.pop(future)
                        outcome = future.result()
                        out.outcomes.append(outcome)
                        if on_outcome is not None:
                            on_outcome(outcome)
        out.outcomes.sort(key=lambda o: CONTROLS.index(o.control))
    _judge(out, catalog, base_env)
    return out


def _run_control(control: Control, argv: list[str], hook: Hook, base_env: dict[str, str], directory: Path,
                 timeout: float | None, echo: bool, catalog: Catalog, baseline_sig: str,
                 keep_caches: bool) -> Outcome:
    report_path = directory / f"{control.name}.hook.jsonl"
    report_path.unlink(missing_ok=True)
    env = hook.env(base_env, backend=control.backend, report=report_path)
    env.update(dict(control.env))
    caches = directory / f"{control.name}.caches"
    if control.fresh_cache:
        shutil.rmtree(caches, ignore_errors=True)
        (caches / "inductor").mkdir(parents=True)
        (caches / "triton").mkdir(parents=True)
        env["TORCHINDUCTOR_CACHE_DIR"] = str(caches / "inductor")
        env["TRITON_CACHE_DIR"] = str(caches / "triton")
    try:
        result = run(argv, log_path=directory / f"{control.name}.log", env=env, echo=echo, timeout=timeout,
                     catalog=catalog, meta={"control": control.name, "control_setup": control.what})
    finally:
        if control.fresh_cache and not keep_caches:
            shutil.rmtree(caches, ignore_errors=True)
    seen = read_report(report_path)
    if control is BASELINE:
        sig = signature(result.diagnosis)
        status = "pass" if result.exit_code == 0 and not sig else "same"
        return Outcome(control, result, seen, status, sig)
    status, sig, why = _classify(control, result, seen, baseline_sig)
    return Outcome(control, result, seen, status, sig, why)


def _decided(out: BisectResult) -> bool:
    """Enough runs to name the owner (the remaining controls could not change the verdict)."""
    if not out.outcomes:
        return False
    base = out.outcome("baseline")
    if base is None or base.status == "pass":
        return True
    fresh = out.outcome("fresh-cache")
    if fresh is not None and fresh.status == "pass":
        return True
    for control in LAYERS:
        got = out.outcome(control.name)
        if got is None:
            return False
        if got.status == "same":
            return True
        if got.status in ("invalid", "timeout") and control is not EAGER:
            return False
    return True


def _judge(out: BisectResult, catalog: Catalog, env: Mapping[str, str]) -> None:
    base = out.outcome("baseline")
    cmd = shlex.join(out.argv)
    assert base is not None
    if base.status == "pass":
        out.exit_code = EXIT_NOT_REPRODUCED
        out.summary = (f"the command passed as written (exit 0, no failure in {base.result.lines} lines): "
                       "nothing to bisect; a flaky failure or one that needs another environment")
        return
    requested = base.hook.requested
    backend = requested[0] if len(requested) == 1 else ("inductor" if not requested else "/".join(requested))
    if base.hook.loaded == 0:
        out.notes.append("the startup hook did not load in the baseline run: backend controls cannot work here "
                         "(python -S/-I/-E, or the command is not Python)")
    elif not base.hook.compiles:
        out.notes.append("the baseline never called torch.compile: the backend controls cannot switch anything "
                         "(compiles through torch._dynamo.optimize / torch.export / AOTInductor, or fails before)")
    for o in out.outcomes:
        if o.status == "other":
            out.notes.append(f"{o.control.name}: {o.why}")
        if o.hook.dropped and o.control.backend:
            out.notes.append(f"{o.control.name}: dropped inductor-only torch.compile arguments {o.hook.dropped}")
    fresh = out.outcome("fresh-cache")
    line = decisive_line(base.result.diagnosis)
    failing = f"fails with [{base.signature or 'exit ' + str(base.result.exit_code)}]" + (
        f": {line[:200]}" if line else "")
    if fresh is not None and fresh.status == "pass":
        out.owner = "cache"
        out.exit_code = EXIT_OWNER
        inductor = env.get("TORCHINDUCTOR_CACHE_DIR") or "/tmp/torchinductor_$USER"
        triton = env.get("TRITON_CACHE_DIR") or "~/.triton/cache"
        out.summary = (f"the cache owns it: as written the command {failing}; with new empty Inductor and Triton "
                       "cache dirs it passes")
        out.next_steps = [
            "see what is damaged: denpex doctor",
            f"clear the caches: rm -rf {inductor} {triton}",
            f"prove it: denpex verify --log {shlex.quote(str(base.result.log_path))} -- {cmd}",
        ]
        return
    owner: str | None = None
    passed: list[str] = []
    blocked: Outcome | None = None
    for control in LAYERS:
        got = out.outcome(control.name)
        if got is None:
            continue
        if got.status == "same":
            owner = control.layer
            break
        if got.status in ("invalid", "timeout"):
            if control is EAGER:
                continue
            blocked = got
            break
        passed.append(control.name)
    if owner is None and blocked is not None:
        out.exit_code = EXIT_INCONCLUSIVE
        out.owner = None
        out.summary = (f"inconclusive: {', '.join(passed) or 'no control'} passed, then the {blocked.control.name} "
                       f"control could not run: {blocked.why}")
        out.next_steps = [f"force the backend in code: torch.compile(..., backend=\"{blocked.control.backend}\")"]
        return
    if owner is None:
        eager = out.outcome("eager")
        if eager is None or eager.status in ("invalid", "timeout"):
            out.exit_code = EXIT_INCONCLUSIVE
            out.summary = "inconclusive: the eager control did not run"
            return
        owner = backend
    out.owner = owner
    out.exit_code = EXIT_OWNER
    lower = ", ".join(passed)
    if owner == "eager":
        out.summary = (f"eager owns it: the command {failing}, and fails the same way with compilation disabled "
                       "(TORCHDYNAMO_DISABLE=1): not a torch.compile problem")
        out.next_steps = [f"debug it without the compiler: TORCHDYNAMO_DISABLE=1 {cmd}"]
        return
    out.summary = (f"{owner} owns it: {lower} pass{'es' if len(passed) == 1 else ''}; "
                   f"{'the ' + owner + ' control' if owner != backend else 'the ' + owner + ' run as written'} "
                   f"{failing}")
    out.next_steps = _repro(owner, backend, cmd, base, catalog)


def _repro(owner: str, backend: str, cmd: str, base: Outcome, catalog: Catalog) -> list[str]:
    root = base.result.diagnosis.root_cause if base.result.diagnosis else None
    entry = catalog.get(root.entry_id) if root is not None else None
    steps: list[str] = []
    if owner == "dynamo":
        steps.append(f"Dynamo fails while tracing: TORCHDYNAMO_VERBOSE=1 TORCH_LOGS=\"+dynamo,graph_breaks\" "
                     f"denpex run --backend eager -- {cmd}")
        steps.append("the minifier works on graphs Dynamo produced, not on tracing errors; "
                     "torch._dynamo.explain(fn)(*args) lists the breaks")
    elif owner in ("aot_autograd", "decompositions/partitioner"):
        forced = "aot_eager" if owner == "aot_autograd" else "aot_eager_decomp_partition"
        steps.append(f"minify (dumps torch_compile_debug/run_*/minifier/minifier_launcher.py): "
                     f"TORCHDYNAMO_REPRO_AFTER=dynamo TORCHDYNAMO_REPRO_LEVEL=2 denpex run --backend {forced} -- {cmd}")
        steps.append("then: python torch_compile_debug/run_*/minifier/minifier_launcher.py")
    else:
        if entry is not None and entry.layer in ("cpp_toolchain", "cache", "cuda", "launcher"):
            steps.append(f"[{entry.id}] is an environment failure inside {owner}: minifying the graph will not "
                         f"help; check the machine: denpex doctor; denpex explain {entry.id}")
        steps.append(f"minify after AOTAutograd (dumps torch_compile_debug/run_*/minifier/minifier_launcher.py): "
                     f"TORCHDYNAMO_REPRO_AFTER=aot TORCHDYNAMO_REPRO_LEVEL=2 {cmd}")
        steps.append("then: python torch_compile_debug/run_*/minifier/minifier_launcher.py")
        if owner == "inductor":
            steps.append(f"which Inductor pass or lowering: python -m torch._inductor.compiler_bisector run {cmd}")
    log = shlex.quote(str(base.result.log_path))
    steps.append(f"after the fix: denpex verify --log {log} -- {cmd}")
    return steps


def to_dict(result: BisectResult) -> dict[str, object]:
    return {
        "command": result.argv,
        "owner": result.owner,
        "exit_code": result.exit_code,
        "summary": result.summary,
        "baseline_signature": result.baseline_signature,
        "controls": [
            {
                "name": o.control.name,
                "setup": o.control.what,
                "status": o.status,
                "exit_code": o.result.exit_code,
                "seconds": round(o.result.duration, 2),
                "signature": o.signature,
                "decisive_line": decisive_line(o.result.diagnosis),
                "why": o.why,
                "log": str(o.result.log_path),
                "hook": {"loaded": o.hook.loaded, "compiles": len(o.hook.compiles),
                         "requested": o.hook.requested, "dropped": o.hook.dropped},
            }
            for o in result.outcomes
        ],
        "next_steps": result.next_steps,
        "notes": result.notes,
        "directory": str(result.directory) if result.directory else None,
    }
