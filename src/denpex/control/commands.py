"""Thin click wrappers for `denpex run`, `denpex bisect`, `denpex verify` and `denpex doctor`.

Only click is imported here; the work (and torch-free but heavier imports) happens inside the commands.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from denpex.command_errors import one_line_errors
from denpex.errors import DenpexInputError, ExitCode
from denpex.exit_codes import epilog

# everything after `--` (or after the first word that is not an option) is the command, untouched
_PASSTHROUGH = {"allow_interspersed_args": False, "help_option_names": ["-h", "--help"]}
_BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


def _need_command(command: tuple[str, ...], name: str) -> list[str]:
    if not command:
        raise DenpexInputError(f"no command given: usage: denpex {name} [OPTIONS] -- COMMAND [ARGS]...")
    return list(command)


def _console() -> Any:
    from rich.console import Console

    return Console(stderr=True, highlight=False)


def _flag_printer(console: Any) -> Callable[[Any], None]:
    from rich.text import Text

    def show(flag: Any) -> None:
        style = "bold red" if flag.role in ("cause", "symptom") and flag.fatal else "bold yellow"
        text = flag.text.strip()
        console.print(Text.assemble(("[denpex] ", style), (f"{flag.entry_id}", "cyan"),
                                    f" at log line {flag.line} (+{flag.elapsed:.1f}s): {flag.title}\n         ",
                                    (text[:300], "dim")), soft_wrap=True)

    return show


# -- run ----------------------------------------------------------------------------------------------------------
@click.command(name="run", context_settings=_PASSTHROUGH, epilog=epilog("run"))
@click.option("--log", "log", type=click.Path(dir_okay=False), default=None,
              help="Write the log here. Default: $DENPEX_RUNS_DIR, else $XDG_STATE_HOME/denpex/runs/ "
                   "(~/.local/state/denpex/runs; $TMPDIR/denpex-runs-<uid> when home is not writable), a 0700 "
                   "folder, named <time>-run-<program>.log (0600), with a .log.json summary.")
@click.option("--backend", type=click.Choice(_BACKENDS), default=None,
              help="Force torch.compile's backend through denpex's startup hook (see `denpex bisect --help`).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Stop the command (SIGTERM, then SIGKILL) after this many seconds.")
@click.option("--quiet", "-q", is_flag=True, help="No final report: only live flags and the summary line.")
@click.option("--report-json", type=click.Path(dir_okay=False), default=None,
              help="Also write the final diagnosis as JSON (the schema of `denpex diagnose --format json`).")
@click.option("--redact", is_flag=True,
              help="Mask host names, IP addresses, user names, e-mail addresses and tokens in the final report "
                   "and --report-json (the log itself is kept as the command wrote it).")
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@one_line_errors
def run_cmd(command: tuple[str, ...], log: str | None, backend: str | None, timeout: float | None, quiet: bool,
            report_json: str | None, redact: bool = False) -> None:
    """Run COMMAND unchanged, stream its output and a log, flag failures live, diagnose it at the end.

    denpex run -- python train.py --epochs 3

    The command's stdout and stderr go to yours as they arrive and, line by line, to the log. The moment a
    line matches the catalog, a [denpex] flag appears on stderr. When the command ends, the diagnosis is
    printed on stderr (your stdout carries only the command's output) and denpex exits with the command's
    exit code. PYTHONUNBUFFERED=1 is set unless already set, so Python output arrives line by line.
    """
    argv = _need_command(command, "run")
    from denpex.catalog import load
    from denpex.control.runner import new_log_path, run

    catalog = load()
    log_path = Path(log) if log else new_log_path(argv)
    console = _console()
    console.print(f"[denpex] log: {log_path}", style="dim", markup=False, soft_wrap=True)
    hook_ctx = None
    env = None
    if backend:
        import os

        from denpex.control.hook import Hook

        hook_ctx = Hook().__enter__()
        env = hook_ctx.env(os.environ, backend=backend, report=log_path.with_name(log_path.name + ".hook.jsonl"))
    try:
        result = run(argv, log_path=log_path, env=env, on_flag=_flag_printer(console), timeout=timeout,
                     catalog=catalog, meta={"backend": backend} if backend else None)
    finally:
        if hook_ctx is not None:
            hook_ctx.__exit__(None, None, None)
    if result.error:
        click.echo(f"denpex: error: {result.error}", err=True)
        sys.exit(result.exit_code)
    from denpex.report.json_schema import build

    report = build(result.diagnosis, catalog, shlex.join(argv))  # type: ignore[arg-type]
    if redact:
        from denpex.report.redact import redacted

        report = redacted(report)
    if report_json:
        Path(report_json).write_text(report.to_json(), encoding="utf-8")
    if not quiet and report.verdict != "clean":
        from denpex.report.terminal import render

        console.print()
        render(report, console)
    signalled = (result.returncode or 0) < 0
    how = (f"timed out after {timeout:g}s" if result.timed_out else
           f"exit code {result.exit_code}" + (f" (signal {-(result.returncode or 0)})" if signalled else ""))
    console.print(f"[denpex] {how}, {report.verdict}, {result.lines} lines in {result.duration:.1f}s; "
                  f"log: {log_path}", markup=False, soft_wrap=True)
    sys.exit(result.exit_code)


# -- bisect -------------------------------------------------------------------------------------------------------
@click.command(name="bisect", context_settings=_PASSTHROUGH, epilog=epilog("bisect"))
@click.option("--all", "run_all", is_flag=True, help="Run every control, even after the owner is known.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None,
              help="Per-control time limit in seconds (a control that hits it counts as inconclusive).")
@click.option("--verbose", "-v", is_flag=True, help="Stream each control's output.")
@click.option("--keep-caches", is_flag=True, help="Keep the fresh-cache control's cache dirs for inspection.")
@click.option("--jobs", "-j", type=click.IntRange(1, 16), default=1, show_default=True,
              help="Run this many controls at a time after the baseline (CPU repros; keep 1 for jobs that "
                   "need a whole GPU).")
@click.option("--dir", "directory", type=click.Path(file_okay=False), default=None,
              help="Where the controls' logs go (default: a <time>-bisect-<program> dir in the runs dir).")
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@one_line_errors
def bisect_cmd(command: tuple[str, ...], run_all: bool, timeout: float | None, verbose: bool, keep_caches: bool,
               jobs: int, directory: str | None, fmt: str) -> None:
    """Rerun a failing COMMAND under controls and say which layer owns the failure.

    denpex bisect -- python train.py

    Controls: as written; fresh Inductor/Triton cache dirs; eager (TORCHDYNAMO_DISABLE=1); Dynamo only
    (backend="eager"); aot_eager; aot_eager_decomp_partition. The owner is the lowest layer that fails the
    same way; when all of them pass, the backend the code asked for (inductor) owns it. The backend is switched
    by a startup hook (a sitecustomize.py put first on PYTHONPATH that wraps torch.compile), so the script
    stays unmodified. Prints the minifier/repro command for the owner.
    """
    argv = _need_command(command, "bisect")
    from denpex.control.bisect import bisect, to_dict

    console = _console()

    def started(control: Any) -> None:
        if fmt == "terminal":
            console.print(f"[denpex] {control.name}: {control.what} ...", style="dim", markup=False)

    def finished(outcome: Any) -> None:
        if fmt != "terminal":
            return
        style = {"pass": "green", "same": "red", "other": "yellow"}.get(outcome.status, "yellow")
        label = {"pass": "passes", "same": "fails (same)", "other": "fails differently", "invalid": "invalid",
                 "timeout": "timed out"}.get(outcome.status, outcome.status)
        if outcome.control.name == "baseline":
            label = "fails" if outcome.status != "pass" else "passes"
        extra = f" [{outcome.signature}]" if outcome.signature and outcome.status != "pass" else ""
        why = f" - {outcome.why}" if outcome.why else ""
        from rich.text import Text

        console.print(Text.assemble(f"[denpex] {outcome.control.name}: ", (label, style),
                                    f"{extra} (exit {outcome.result.exit_code}, {outcome.result.duration:.1f}s){why}"),
                      soft_wrap=True)

    result = bisect(argv, run_all=run_all, timeout=timeout, echo=verbose,
                    directory=Path(directory) if directory else None, on_start=started, on_outcome=finished,
                    keep_caches=keep_caches, jobs=jobs)
    if fmt == "json":
        click.echo(json.dumps(to_dict(result), indent=2))
    else:
        from rich.console import Console

        out = Console(highlight=False)
        out.print()
        out.print(f"Owner: {result.owner or 'unknown'}", style="bold", markup=False, soft_wrap=True)
        out.print(result.summary, soft_wrap=True, markup=False)
        if result.next_steps:
            out.print("Next", style="bold")
            for step in result.next_steps:
                out.print(f"  {step}", soft_wrap=True, markup=False)
        for note in result.notes:
            out.print(f"note: {note}", style="yellow", soft_wrap=True, markup=False)
        out.print(f"logs: {result.directory}", style="dim", markup=False, soft_wrap=True)
    sys.exit(result.exit_code)


# -- verify -------------------------------------------------------------------------------------------------------
@click.command(name="verify", context_settings=_PASSTHROUGH, epilog=epilog("verify"))
@click.option("--entry", "entry_id", default=None, help="The catalog entry whose signature must be gone.")
@click.option("--log", "old_log", type=click.Path(), default=None,
              help="The failing run's log: its root cause is the signature that must be gone.")
@click.option("--save-log", type=click.Path(dir_okay=False), default=None,
              help="Where the rerun's log goes (default: the runs dir, like `denpex run`).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), default=None)
@click.option("--quiet", "-q", is_flag=True, help="Do not stream the command's output.")
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
@one_line_errors
def verify_cmd(command: tuple[str, ...], entry_id: str | None, old_log: str | None, save_log: str | None,
               timeout: float | None, quiet: bool, fmt: str) -> None:
    """Rerun COMMAND after a fix: verified only if the failure's signature is gone and the command exits 0.

    denpex verify --log failed.log -- python train.py

    denpex verify --entry cxx-compiler-missing -- python train.py

    The report quotes the old decisive line (or the entry's signatures) and what the rerun shows instead.
    """
    argv = _need_command(command, "verify")
    from denpex.catalog import load
    from denpex.control.runner import new_log_path
    from denpex.control.verify import to_dict, verify

    catalog = load()
    if entry_id and catalog.get(entry_id) is None:  # fail before running anything
        from denpex.control.verify import before_from_entry

        before_from_entry(entry_id, catalog)
    if old_log and not Path(old_log).exists():
        raise DenpexInputError(f"--log {old_log}: no such file")
    console = _console()
    log_path = Path(save_log) if save_log else new_log_path(argv, kind="verify")
    echo = not quiet and fmt == "terminal"
    result = verify(argv, entry_id=entry_id, old_log=old_log, log_path=log_path, echo=echo,
                    on_flag=_flag_printer(console) if fmt == "terminal" else None, timeout=timeout, catalog=catalog)
    if fmt == "json":
        click.echo(json.dumps(to_dict(result), indent=2))
        sys.exit(result.exit_code)
    from rich.console import Console
    from rich.text import Text

    out = Console(highlight=False)
    out.print()
    verdict = ("VERIFIED", "bold green") if result.verified else ("NOT VERIFIED", "bold red")
    out.print(Text.assemble(("denpex verify ", "bold"), verdict))
    out.print(Text.assemble(("before ", "bold"), f"({result.before.where}):"), soft_wrap=True)
    for quote in result.before.quotes[:6] or ["(no earlier failure given: the rerun must simply pass)"]:
        out.print(Text(f"  > {quote}"), soft_wrap=True)
    out.print(Text("after:", style="bold"))
    for line in result.after:
        out.print(Text(f"  > {line}"), soft_wrap=True)
    for reason in result.reasons:
        out.print(Text(f"  ✗ {reason}", style="red"), soft_wrap=True)
    out.print(Text(f"log: {result.run.log_path}", style="dim"), soft_wrap=True)
    sys.exit(result.exit_code)


# -- doctor -------------------------------------------------------------------------------------------------------
@click.command(name="doctor", epilog=epilog("doctor"), context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.option("--python", "python", default=None,
              help="The interpreter the job runs with (default: the one running denpex).")
@click.option("--no-import", is_flag=True, help="Do not import torch (skips the import check and the CUDA arch list).")
@click.option("--deep", is_flag=True, help="Check every cache file (default: a few seconds per cache dir).")
@click.option("--verbose", "-v", is_flag=True, help="Show the facts behind each check.")
@one_line_errors
def doctor_cmd(fmt: str, python: str | None, no_import: bool, deep: bool, verbose: bool) -> None:
    """Probe this machine for what torch.compile needs, offline: compilers, versions, GPU, caches, env vars.

    Every problem names the catalog entry it explains (`denpex explain ID`) and a fix for this machine.
    Works without torch installed (it says so and checks compilers and caches with torch's defaults).
    It writes nothing but one empty file, created and removed at once, in each cache dir to prove it is
    writable, and the compiler checks' throwaway builds in a temp dir.
    """
    from denpex.doctor import probe

    report = probe(python=python, import_torch=not no_import, deep=deep)
    if fmt == "json":
        click.echo(json.dumps(report.to_dict(), indent=2, default=str))
    else:
        from rich.console import Console

        from denpex.doctor.render import render

        render(report, Console(highlight=False), verbose=verbose)
    sys.exit({"error": ExitCode.FAILURE, "warning": ExitCode.WARNINGS, "ok": ExitCode.CLEAN}[report.worst])


COMMANDS = (doctor_cmd, run_cmd, bisect_cmd, verify_cmd)
