"""How every denpex command reports bad input: one line on stderr and a documented exit code."""

from __future__ import annotations

import sys
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from denpex.errors import DenpexInputError


def one_line_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Bad input becomes one line on stderr and a documented exit code, never a traceback."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except DenpexInputError as exc:
            click.echo(f"denpex: error: {exc}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("denpex: interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:
            quiet_stdout()
            sys.exit(0)

    return wrapper


def quiet_stdout() -> None:
    """After a broken pipe, send what is left of stdout nowhere so that exit does not complain."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
