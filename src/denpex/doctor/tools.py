"""Run a program the way torch and Triton do (no shell), bounded in time, and say what happened."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass

TIMEOUT = 20.0


@dataclass(slots=True)
class Ran:
    argv: list[str]
    rc: int | None  # None: it did not start (see error)
    output: str = ""
    error: str = ""  # "not found", "not executable: ...", "timed out after 20s"
    not_found: bool = False
    not_executable: bool = False

    @property
    def ok(self) -> bool:
        return self.rc == 0

    @property
    def first_line(self) -> str:
        for line in self.output.splitlines():
            if line.strip():
                return line.strip()
        return ""


def run(argv: list[str], timeout: float = TIMEOUT, cwd: str | None = None, stdin: str | None = None) -> Ran:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, errors="replace", timeout=timeout, cwd=cwd,
                              input=stdin, stdin=None if stdin is not None else subprocess.DEVNULL)
    except FileNotFoundError:
        return Ran(argv, None, error="not found", not_found=True)
    except PermissionError as exc:
        return Ran(argv, None, error=f"not executable ({exc.strerror})", not_executable=True)
    except subprocess.TimeoutExpired:
        return Ran(argv, None, error=f"timed out after {timeout:.0f}s")
    except OSError as exc:
        return Ran(argv, None, error=f"cannot run: {exc}")
    return Ran(argv, done.returncode, (done.stdout or "") + (done.stderr or ""))


def where(program: str) -> str | None:
    """The file a program name runs: itself when it has a slash, else the first match on PATH."""
    if os.sep in program:
        return program if os.path.exists(program) else None
    return shutil.which(program)


def describe_missing(program: str, label: str | None = None) -> str:
    """Why a program name does not run, in the words a user checks: path, PATH, spaces.

    `label` names it in the sentence ("CXX=/opt/g++ does not exist"); default: the program itself."""
    name = label or program
    if any(ch.isspace() for ch in program.strip()) and not os.path.exists(program):
        return (f"{name} contains spaces: torch runs it as one program name without a shell, so a wrapper "
                f"like 'ccache g++' is not found")
    if os.sep in program:
        if not os.path.exists(program):
            return f"{name} does not exist"
        if os.path.isdir(program):
            return f"{name} is a directory"
        if not os.access(program, os.X_OK):
            return f"{name} is not executable"
        return f"{name} exists but did not run"
    return f"{name} is not on PATH"
