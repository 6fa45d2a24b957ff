"""Command line: thin wrappers over the library. Heavy imports stay inside commands to start fast."""

from __future__ import annotations

import json
import sys

import click

from denpex import __version__
from denpex.command_errors import one_line_errors, quiet_stdout
from denpex.errors import DenpexInputError, ExitCode
from denpex.exit_codes import epilog

_CONTROL_COMMANDS = ("doctor", "run", "bisect", "verify")  # defined in denpex.control.commands


class _Commands(click.Group):
    """Loads the control commands only when one is named or help lists them (~5 ms off a diagnose)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_CONTROL_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in _CONTROL_COMMANDS and cmd_name not in self.commands:
            from denpex.control.commands import COMMANDS

            for command in COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, cmd_name)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"]}, epilog=epilog("denpex"))
@click.version_option(__version__, prog_name="denpex")
def cli() -> None:
    """Find what failed first in a PyTorch 2 job's logs, why, how to fix it and how to prove the fix.

    Everything runs locally; nothing is uploaded.
    """


@cli.command(epilog=epilog("diagnose"))
@click.argument("inputs", nargs=-1)
@click.option(
    "--format", "fmt", type=click.Choice(["terminal", "json", "markdown", "html"]), default="terminal",
    show_default=True,
)
@click.option("--context", "context", type=click.IntRange(0, 100000), default=100, show_default=True,
              help="Lines of context kept before the decisive line.")
@click.option("--shown", type=click.IntRange(0, 100000), default=12, show_default=True,
              help="Context lines the terminal report shows (JSON carries all of --context).")
@click.option("--command", "command_hint", default="<your command>", help="Your command, for the verify line.")
@click.option("--print-schema", is_flag=True, help="Print the JSON Schema of --format json and exit.")
@click.option("--example", "example", is_flag=False, flag_value="torchrun-4-ranks-keyerror", default=None,
              help="Diagnose a real log bundled with Denpex (torchrun-4-ranks-keyerror, inductor-lowering-error).")
@click.option("--redact", is_flag=True,
              help="Mask host names, IP addresses, user names in paths, e-mail addresses and tokens in the "
                   "report, to share it; the diagnosis itself is unchanged.")
@click.option("--doctor", "with_doctor", is_flag=True,
              help="Also probe this machine (`denpex doctor`) and say when it confirms the root cause.")
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="Processes for big inputs (default: every core this process may use).")
@click.option("--engine", type=click.Choice(["auto", "hyperscan", "re2", "python", "lines"]), default="auto",
              show_default=True,
              help="Scanner for big inputs: auto picks Hyperscan, else RE2; lines parses every line (slowest).")
@click.option("--baseline", "baselines", multiple=True, metavar="GOOD",
              help="A healthy run of the same job (file or per-rank folder; repeatable): report where the failed "
                   "run first departs from it.")
@one_line_errors
def diagnose(
    inputs: tuple[str, ...], fmt: str, context: int, shown: int, command_hint: str, print_schema: bool,
    example: str | None, redact: bool = False, with_doctor: bool = False, workers: int | None = None,
    engine: str = "auto", baselines: tuple[str, ...] = (),
) -> None:
    """Diagnose log files, directories of per-rank logs, .gz/.zst/.bz2/.xz logs, or '-' (stdin)."""
    from denpex.report.json_schema import build, json_schema

    if print_schema:
        click.echo(json.dumps(json_schema(), indent=2))
        return
    from denpex.api import diagnose_sources
    from denpex.catalog import load
    from denpex.ingest import check_readable, resolve

    if example is not None:
        from denpex import examples

        try:
            inputs = (*inputs, str(examples.path(example)))
        except KeyError:
            raise DenpexInputError(
                f"no bundled example {example!r} (available: {', '.join(examples.names())})"
            ) from None
    left_out: list[str] = []
    sources = resolve(list(inputs), left_out=left_out)  # an unreadable one among several is left out, noted
    healthy = [resolve([good]) for good in baselines]
    for source in [*sources, *(s for run in healthy for s in run)]:  # bad input is reported before the catalog
        check_readable(source)
    catalog = load()
    from denpex.report.progress import ScanProgress

    with ScanProgress(sum(source.size_hint() for source in sources if source.kind == "log")) as progress:
        result = diagnose_sources(sources, context=context, catalog=catalog, engine=engine, workers=workers,
                                  progress=progress, baselines=healthy or None)
    result.notes[:0] = left_out
    environment = None
    if with_doctor:
        from denpex.doctor import fold, probe

        doctor = probe()
        fold(result, doctor)
        environment = doctor.checks
    report = build(result, catalog, command_hint)
    if environment is not None:
        from denpex.report.json_schema import EnvironmentCheckOut

        report.environment = [EnvironmentCheckOut(c.section, c.name, c.status, c.summary) for c in environment]
    if redact:
        from denpex.report.redact import redacted

        report = redacted(report)
    from denpex.report.formats import emit

    emit(report, fmt, shown)
    sys.exit(
        {"failure": ExitCode.FAILURE, "warning": ExitCode.WARNINGS, "clean": ExitCode.CLEAN}[report.verdict]
    )


@cli.command(epilog=epilog("explain"))
@click.argument("entry_id")
@click.option("--format", "fmt", type=click.Choice(["terminal", "markdown", "json"]), default="terminal")
@one_line_errors
def explain(entry_id: str, fmt: str) -> None:
    """Print a catalog entry: what it means, how to confirm, fix and verify it.

    ENTRY_ID is an id from `denpex catalog`, or a Dynamo graph-break id (GB0170, any case): then every entry
    that carries it is printed (as a JSON list with --format json).
    """
    from denpex.catalog import load
    from denpex.catalog.docs import entry_markdown

    catalog = load()
    entries = catalog.explaining(entry_id)
    if not entries and catalog.is_graph_break_id(entry_id):
        known = ", ".join(sorted({g.upper() for e in catalog.entries for g in e.graph_break_ids}))
        raise DenpexInputError(f"no catalog entry carries graph-break id {entry_id.upper()} (known: {known})")
    if not entries:
        close = [e.id for e in catalog.entries if entry_id.lower() in e.id or entry_id.lower() in e.category]
        hint = f" (did you mean: {', '.join(close[:5])})" if close else " (see `denpex catalog`)"
        raise DenpexInputError(f"no catalog entry {entry_id!r}{hint}")
    if fmt == "json":
        from denpex.catalog.schema import validator

        dumped = [json.loads(validator().dump_json(entry, by_alias=True)) for entry in entries]
        click.echo(json.dumps(dumped if catalog.is_graph_break_id(entry_id) else dumped[0], indent=2))
        return
    text = "\n".join(entry_markdown(entry) for entry in entries)
    if fmt == "markdown":
        click.echo(text)
        return
    from rich.console import Console
    from rich.markdown import Markdown

    Console().print(Markdown(text))


@cli.command(name="catalog", epilog=epilog("catalog"))
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal")
@click.option("--schema", is_flag=True, help="Print the JSON Schema of an entry file and exit.")
@one_line_errors
def catalog_cmd(fmt: str, schema: bool) -> None:
    """List the catalog's entries."""
    from denpex.catalog import load
    from denpex.catalog.schema import validator

    if schema:
        click.echo(json.dumps(validator().json_schema(by_alias=True), indent=2))
        return
    entries = load().entries
    if fmt == "json":
        click.echo(json.dumps([{"id": e.id, "category": e.category, "layer": e.layer, "role": e.role,
                                "fatal": e.fatal, "title": e.title} for e in entries], indent=2))
        return
    from rich.console import Console

    from denpex.catalog.listing import render

    render(entries, Console(highlight=False))


@cli.command(name="eval", epilog=epilog("eval"))
@click.argument("roots", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal")
@click.option("--min-category", type=click.FloatRange(0, 1), default=None, help="Fail (exit 4) below this rate.")
@click.option("--min-decisive", type=click.FloatRange(0, 1), default=None, help="Fail (exit 4) below this rate.")
@click.option("--min-verdict", type=click.FloatRange(0, 1), default=None, help="Fail (exit 4) below this rate.")
@one_line_errors
def eval_cmd(
    roots: tuple[str, ...],
    fmt: str,
    min_category: float | None,
    min_decisive: float | None,
    min_verdict: float | None,
) -> None:
    """Score Denpex on labelled cases (folders with label.json and log.txt or ranks/)."""
    from denpex.evaluate import CHECKS, evaluate, summary_line

    score = evaluate(list(roots))
    if fmt == "json":
        click.echo(json.dumps({
            "cases": len(score.results),
            "rates": {c: dict(zip(("good", "total"), score.rate(c), strict=True)) for c in CHECKS},
            "misses": [{"case": m.case, "failed": [k for k, v in m.checks.items() if not v], "error": m.error,
                        "got": {"verdict": m.verdict, "category": m.category, "rank": m.rank,
                                "evidence": m.evidence},
                        "want": {k: m.label.get(k) for k in ("category", "fatal", "initiating_rank",
                                                            "decisive_line")}}
                       for m in score.misses()],
        }, indent=2))
    else:
        for miss in score.misses():
            failed = ",".join(k for k, v in miss.checks.items() if not v) or "error"
            click.echo(f"MISS {miss.case} [{failed}]")
            if miss.error:
                click.echo(f"  error: {miss.error}")
                continue
            click.echo(f"  want {miss.label.get('category')} rank={miss.label.get('initiating_rank')} "
                       f"line={miss.label.get('decisive_line')!r}")
            click.echo(f"  got  {miss.category} rank={miss.rank} verdict={miss.verdict} "
                       f"line={(miss.evidence or '')[:160]!r}")
        click.echo(summary_line(score))
    limits = {"category": min_category, "decisive_line": min_decisive, "verdict": min_verdict}
    below = [f"{k} {score.fraction(k):.3f} < {v}" for k, v in limits.items() if v is not None
             and score.fraction(k) < v]
    if any(not r.checks.get("healthy_clean", True) for r in score.results) and any(
        v is not None for v in limits.values()):
        below.append("a healthy case was not clean")
    if below:
        click.echo("below threshold: " + "; ".join(below), err=True)
        sys.exit(ExitCode.EVAL_BELOW_THRESHOLD)


@cli.command(epilog=epilog("triage"))
@click.argument("jobs", nargs=-1)
@click.option("--format", "fmt", type=click.Choice(["terminal", "json", "markdown"]), default="terminal",
              show_default=True)
@click.option("--workers", type=click.IntRange(1, 1024), default=None,
              help="Processes diagnosing jobs (default: every core); 1 runs them in this process. With "
                   "--engine ray: the CPUs of the local cluster it starts.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local", show_default=True,
              help="local: a process pool on this machine; ray: Ray tasks on a cluster (pip install "
                   "'denpex[ray]').")
@click.option("--ray-address", "ray_address", default=None, metavar="ADDR",
              help="Ray cluster to join ('auto': the one running here). Default: the running one, else a "
                   "local one started for the run.")
@click.option("--batch-size", "batch_size", type=click.IntRange(1, 100_000), default=None,
              help="Jobs per Ray task (default: 4 tasks per CPU, at most 64 jobs a task).")
@click.option("--sort", type=click.Choice(["count", "gpu-hours", "recent"]), default="count", show_default=True,
              help="How groups are ranked (the other two keys break ties).")
@click.option("--db", "db", type=click.Path(dir_okay=False), default=None,
              help="History database (default: $XDG_DATA_HOME/denpex/history.sqlite3).")
@click.option("--no-history", is_flag=True, help="Do not read or record the history.")
@click.option("--db-timeout", type=click.FloatRange(0, 3600), default=10.0, show_default=True,
              help="Seconds to wait for another process writing the history.")
@click.option("--print-schema", is_flag=True, help="Print the JSON Schema of --format json and exit.")
@one_line_errors
def triage(jobs: tuple[str, ...], fmt: str, workers: int | None, engine: str, ray_address: str | None,
           batch_size: int | None, sort: str, db: str | None, no_history: bool, db_timeout: float,
           print_schema: bool) -> None:
    """Diagnose many jobs and group them by failure: job folders, globs, or a manifest (.csv/.jsonl with
    job_id, paths and optionally owner, gpus, start, end)."""
    from pathlib import Path

    from denpex.fleet.schema import TriageOut

    if print_schema:
        click.echo(json.dumps(TriageOut.model_json_schema(), indent=2))
        return
    from denpex.fleet import history as store
    from denpex.fleet.manifest import jobs_from_inputs
    from denpex.fleet.progress import JobProgress
    from denpex.fleet.triage import record, run_jobs, summarise

    if engine == "ray":
        from denpex.fleet.ray_engine import import_ray

        import_ray()  # no Ray: one line and exit 2 before any work
    elif ray_address is not None or batch_size is not None:
        raise click.UsageError("--ray-address and --batch-size go with --engine ray")
    job_list = jobs_from_inputs(list(jobs))
    path = None if no_history else Path(db) if db else store.default_path()
    if path is not None:
        store.History(path, timeout=db_timeout).close()  # a corrupt or newer file: say so before the work
    with JobProgress(len(job_list)) as progress:
        if engine == "ray":
            from denpex.fleet.ray_engine import run_jobs_ray

            results, ray_run = run_jobs_ray(job_list, ray_address, workers, batch_size, progress)
        else:
            results = run_jobs(job_list, workers, progress)
    if engine == "ray":
        click.echo(ray_run.note(), err=True)
    recurrence, failure = None, None
    if path is not None:
        try:
            with store.History(path, timeout=db_timeout) as history:
                recurrence = record(history, results)
        except store.HistoryError as exc:
            failure = exc
    report = summarise(results, sort, recurrence, str(path) if path is not None and failure is None else None)
    if fmt == "json":
        click.echo(report.model_dump_json(indent=2))
    elif fmt == "markdown":
        from denpex.fleet.render import markdown

        click.echo(markdown(report), nl=False)
    else:
        from rich.console import Console

        from denpex.fleet.render import terminal

        terminal(report, Console(highlight=False))
    if failure is not None:
        raise failure
    verdicts = {g.verdict for g in report.groups}
    if not report.diagnosed:
        click.echo(f"denpex: error: none of the {report.jobs} jobs could be diagnosed", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    sys.exit(ExitCode.FAILURE if "failure" in verdicts else ExitCode.WARNINGS if verdicts else ExitCode.CLEAN)


@cli.command(epilog=epilog("history"))
@click.option("--db", "db", type=click.Path(dir_okay=False), default=None,
              help="History database (default: $XDG_DATA_HOME/denpex/history.sqlite3).")
@click.option("--entry", "entry_id", default=None, help="Only this catalog entry.")
@click.option("--since", "since", type=click.FloatRange(0), default=None, help="Only jobs seen in the last DAYS.")
@click.option("--format", "fmt", type=click.Choice(["terminal", "json"]), default="terminal", show_default=True)
@click.option("--db-timeout", type=click.FloatRange(0, 3600), default=10.0, show_default=True)
@one_line_errors
def history(db: str | None, entry_id: str | None, since: float | None, fmt: str, db_timeout: float) -> None:
    """List the failure fingerprints `denpex triage` recorded: jobs, first and last seen."""
    from pathlib import Path

    from denpex.fleet import history as store
    from denpex.fleet.schema import FingerprintOut, HistoryOut

    path = Path(db) if db else store.default_path()
    stats: list[store.FingerprintStats] = []
    if path.exists():  # reading never creates the file
        with store.History(path, timeout=db_timeout, readonly=True) as opened:
            stats = opened.stats(entry_id=entry_id, since=None if since is None else store.since_days(since))
    if fmt == "json":
        click.echo(HistoryOut(db=str(path), fingerprints=[
            FingerprintOut(fingerprint=s.fingerprint, entry_id=s.entry_id, category=s.category, decisive_line=s.line,
                           jobs=s.jobs, first_seen=s.first_seen.isoformat(), last_seen=s.last_seen.isoformat(),
                           gpu_hours=s.gpu_hours, summary=s.summary()) for s in stats]).model_dump_json(indent=2))
        return
    from rich.console import Console

    from denpex.fleet.render import history_terminal

    if not path.exists():
        click.echo(f"no history recorded yet ({path})")
        return
    history_terminal(stats, str(path), Console(highlight=False))


@cli.command(epilog=epilog("watch"))
@click.argument("inputs", nargs=-1, required=True)
@click.option("--format", "fmt", type=click.Choice(["terminal", "json", "markdown", "html"]), default="terminal",
              show_default=True, help="The final report's format (the live lines go to stderr unless terminal).")
@click.option("--interval", type=click.FloatRange(0.01, 60), default=0.2, show_default=True,
              help="Seconds between polls of the files.")
@click.option("--idle", type=click.FloatRange(0, min_open=True), default=None,
              help="End once every file has been idle (not grown) for this many seconds.")
@click.option("--until-exit", "until_pid", type=click.IntRange(1), default=None, metavar="PID",
              help="End after process PID exits, once what it left in the files is read.")
@click.option("--on-finding", "on_finding", default=None, metavar="CMD",
              help="Run CMD (split like a shell would, run without one) with the report as JSON on stdin each "
                   "time the root cause or its rank changes; its failure is reported, the watch goes on.")
@click.option("--context", "context", type=click.IntRange(0, 100000), default=100, show_default=True,
              help="Lines of context kept before the decisive line.")
@click.option("--shown", type=click.IntRange(0, 100000), default=12, show_default=True,
              help="Context lines the terminal report shows.")
@one_line_errors
def watch(
    inputs: tuple[str, ...], fmt: str, interval: float, idle: float | None, until_pid: int | None,
    on_finding: str | None, context: int, shown: int,
) -> None:
    """Follow growing logs and per-rank folders (like `tail -F`), print the root cause the moment it shows
    and when it changes, then the full report. Ends on Ctrl-C, --until-exit or --idle."""
    import signal

    from denpex.catalog import load
    from denpex.live.hooks import FindingHook
    from denpex.live.watch import Change, WatchOptions, change_line
    from denpex.live.watch import watch as follow
    from denpex.report.display import visible
    from denpex.report.formats import emit
    from denpex.report.json_schema import build

    live_to_stderr = fmt != "terminal"  # stdout then carries one document

    def say(message: str) -> None:
        click.echo(f"denpex watch: {visible(message)}", err=True)

    hook = FindingHook(on_finding, say) if on_finding else None
    catalog = load()
    interrupted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda *_: interrupted.append(1))

    def on_change(change: Change) -> None:
        click.echo(change_line(change), err=live_to_stderr)
        if hook is not None:
            hook.fire(build(change.diagnosis, catalog).to_json())

    try:
        result, _ = follow(list(inputs), catalog, WatchOptions(interval, idle, until_pid), on_change=on_change,
                           on_event=lambda e: say(f"{e.name} {e.what}"), stopped=lambda: bool(interrupted),
                           context=context)
    finally:
        signal.signal(signal.SIGINT, previous)
    if hook is not None:
        hook.wait()
    report = build(result, catalog)
    emit(report, fmt, shown)
    sys.exit(
        {"failure": ExitCode.FAILURE, "warning": ExitCode.WARNINGS, "clean": ExitCode.CLEAN}[report.verdict]
    )


def _usage_line(exc: click.UsageError) -> str:
    """click's multi-line usage error as one line: what was wrong and where to read more."""
    ctx = exc.ctx
    where = ctx.command_path if ctx is not None else "denpex"
    message = " ".join(exc.format_message().split())
    return f"denpex: error: {message} (see `{where} --help`)"


def main(argv: list[str] | None = None) -> None:
    """Entry point: every failure ends in one line on stderr and a documented exit code."""
    args = sys.argv[1:] if argv is None else list(argv)
    if not args:
        click.echo("denpex: error: no command given: try `denpex diagnose LOG` (`denpex --help` lists the "
                   "commands)", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    try:
        code = cli.main(args=args, prog_name="denpex", standalone_mode=False)
    except click.UsageError as exc:
        click.echo(_usage_line(exc), err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except click.ClickException as exc:
        click.echo(f"denpex: error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(exc.exit_code)
    except (click.Abort, KeyboardInterrupt):
        click.echo("denpex: interrupted", err=True)
        sys.exit(130)
    except BrokenPipeError:
        quiet_stdout()
        sys.exit(0)
    except SystemExit:
        raise
    except Exception as exc:  # a bug in Denpex: say so in one line, keep the traceback for --debug users
        import os

        if os.environ.get("DENPEX_DEBUG"):
            raise
        message = " ".join(str(exc).split())[:300]
        click.echo(f"denpex: internal error: {type(exc).__name__}: {message} (set DENPEX_DEBUG=1 for details)",
                   err=True)
        sys.exit(ExitCode.INTERNAL)
    sys.exit(code if isinstance(code, int) else 0)


def console() -> None:
    """The `denpex` script and `python -m denpex`: main(), then a quick exit.

    The interpreter's teardown (freeing every module and buffer the OS reclaims anyway) costs ~25 ms, a
    tenth of a pasted traceback's budget; like mypy's hard exit, output is flushed and atexit handlers
    (temporary directories, logging) run first, then the process leaves with main()'s exit code.
    """
    import atexit
    import contextlib
    import os

    try:
        main()
        code: object = 0
    except SystemExit as exc:
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):  # sys.exit("message"): Python prints it and exits 1
        sys.stderr.write(f"{code}\n")
        code = 1
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken pipe: nothing more to say there
            stream.flush()
    os._exit(code)
