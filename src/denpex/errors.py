"""Exit codes and the one error type that the CLI turns into a single line on stderr."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Documented in the README; scripts rely on them."""

    CLEAN = 0  # no problem found
    FAILURE = 1  # the log shows a failure (the job died)
    BAD_INPUT = 2  # bad usage or unreadable/unsupported input
    WARNINGS = 3  # only non-fatal problems (graph breaks, recompiles, eager fallback)
    EVAL_BELOW_THRESHOLD = 4  # `denpex eval --min-*` figures not met
    HISTORY = 5  # the triage history database is corrupt, locked, or from a newer Denpex (it is left as it is)
    INTERNAL = 70  # a bug in Denpex (EX_SOFTWARE)


class DenpexInputError(Exception):
    """Bad input: reported as one line, exit code BAD_INPUT, never a traceback."""

    exit_code = ExitCode.BAD_INPUT
