"""Every command's exit codes, in one table that each command's `--help` epilog is generated from.

Why one table: the codes are a contract scripts rely on; written by hand in each command's help they drifted
(the root help listed `4` for every command, `run` listed no `70`). tests/test_cli_polish.py checks that each
command's help lists its row and that the control modules' constants agree with it.
"""

from __future__ import annotations

from denpex.errors import ExitCode

_BAD_INPUT = (int(ExitCode.BAD_INPUT), "bad usage or input: one line on stderr, no traceback")
_INTERNAL = (int(ExitCode.INTERNAL), "internal error, a bug in Denpex (DENPEX_DEBUG=1 shows the traceback)")
_INTERRUPTED = (130, "interrupted (Ctrl-C)")
_HISTORY = (int(ExitCode.HISTORY), "the history file is corrupt, not Denpex's, newer, or locked: left as it is")

# command name ("denpex" for the root) -> (code, meaning); a code is an int, or a word for `run`'s pass-through
EXIT_CODES: dict[str, tuple[tuple[int | str, str], ...]] = {
    "denpex": (
        (int(ExitCode.CLEAN), "success; for diagnose: no problem found"),
        (int(ExitCode.FAILURE), "diagnose: a failure found"),
        _BAD_INPUT,
        (int(ExitCode.WARNINGS), "diagnose: warnings only"),
        (int(ExitCode.EVAL_BELOW_THRESHOLD), "eval: below a --min-* threshold"),
        (int(ExitCode.HISTORY), "triage, history: the history file is unusable (corrupt, locked, newer)"),
        _INTERNAL,
        _INTERRUPTED,
    ),
    "diagnose": (
        (int(ExitCode.CLEAN), "clean: no problem found"),
        (int(ExitCode.FAILURE), "a failure found (the job died)"),
        _BAD_INPUT,
        (int(ExitCode.WARNINGS), "warnings only (graph breaks, recompiles, eager fallback)"),
        _INTERNAL,
        _INTERRUPTED,
    ),
    "explain": ((int(ExitCode.CLEAN), "the entry was printed"), _BAD_INPUT, _INTERNAL, _INTERRUPTED),
    "catalog": ((int(ExitCode.CLEAN), "the catalog was listed"), _BAD_INPUT, _INTERNAL, _INTERRUPTED),
    "eval": (
        (int(ExitCode.CLEAN), "scored, and every --min-* threshold given was met"),
        _BAD_INPUT,
        (int(ExitCode.EVAL_BELOW_THRESHOLD), "below a --min-* threshold, or a healthy case was not clean"),
        _INTERNAL,
        _INTERRUPTED,
    ),
    "watch": (
        (int(ExitCode.CLEAN), "clean: no problem found in what was watched"),
        (int(ExitCode.FAILURE), "a failure found"),
        _BAD_INPUT,
        (int(ExitCode.WARNINGS), "warnings only"),
        _INTERNAL,
        (130, "interrupted before the watch began (Ctrl-C during the watch ends it with the report, exit by verdict)"),
    ),
    "doctor": (
        (int(ExitCode.CLEAN), "no problem found"),
        (int(ExitCode.FAILURE), "problems found"),
        _BAD_INPUT,
        (int(ExitCode.WARNINGS), "only warnings"),
        _INTERNAL,
        _INTERRUPTED,
    ),
    "triage": (
        (int(ExitCode.CLEAN), "no job failed"),
        (int(ExitCode.FAILURE), "a job failed"),
        (int(ExitCode.BAD_INPUT), "bad usage or input (--engine ray without Ray), or no job could be "
                                  "diagnosed: one line on stderr"),
        (int(ExitCode.WARNINGS), "warnings only"),
        _HISTORY,
        _INTERNAL,
        _INTERRUPTED,
    ),
    "history": ((int(ExitCode.CLEAN), "the history was listed"), _BAD_INPUT, _HISTORY, _INTERNAL, _INTERRUPTED),
    "run": (
        ("N", "the command's own exit code"),
        ("128+N", "a signal N killed the command"),
        (127, "the program was not found"),
        (126, "the program could not be executed"),
        (int(ExitCode.BAD_INPUT), "bad usage of denpex run itself (no command)"),
        _INTERNAL,
    ),
    "bisect": (
        (0, "the owning layer was found"),
        (1, "inconclusive: a control could not run (see its reason)"),
        _BAD_INPUT,
        (3, "the command passed as written: nothing to bisect"),
        _INTERNAL,
        _INTERRUPTED,
    ),
    "verify": (
        (0, "verified: the signature is gone and the command exited 0"),
        (1, "not verified"),
        (int(ExitCode.BAD_INPUT), "bad usage: no command, an unknown entry, an old log without a failure"),
        _INTERNAL,
        _INTERRUPTED,
    ),
}


def epilog(command: str) -> str:
    """The `Exit codes:` block of a command's --help, laid out as a list click does not re-wrap."""
    rows = EXIT_CODES[command]
    width = max(len(str(code)) for code, _ in rows)
    lines = [f"  {str(code):<{width}}  {meaning}" for code, meaning in rows]
    return "\b\nExit codes:\n" + "\n".join(lines)
