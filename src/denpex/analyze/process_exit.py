"""A command that failed owes its owner a diagnosis, even when no line of its output explains it.

Why: `denpex run` sees how the command ended (an exit code, a signal, its own timeout). A SIGKILLed or
timed-out command often prints nothing decisive, and calling that `clean` would be a lie. When the
diagnosis of the output found no failure, the exit itself becomes the root cause, with what is known.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from denpex.catalog.loader import Catalog
from denpex.model import Diagnosis, Evidence, Finding, Line, Role, Verdict


@dataclass(frozen=True, slots=True)
class ProcessExit:
    returncode: int  # Popen's: negative for a signal
    timed_out: bool = False  # denpex run stopped it at its --timeout


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def describe(ended: ProcessExit, timeout_s: float | None = None) -> tuple[str, dict[str, object]]:
    if ended.timed_out:
        limit = f" of {timeout_s:g} s" if timeout_s else ""
        return f"denpex run stopped the command at its timeout{limit}", {"timed_out": True}
    if ended.returncode < 0:
        name = _signal_name(-ended.returncode)
        return f"the command was killed by {name}", {"signal": name, "exitcode": ended.returncode}
    return f"the command exited with code {ended.returncode}", {"exitcode": ended.returncode}


def account_for_exit(
    diagnosis: Diagnosis, catalog: Catalog, ended: ProcessExit, last_line: Line | None,
    timeout_s: float | None = None,
) -> Diagnosis:
    """Make a failed command's exit the root cause when its output held no failure."""
    if diagnosis.verdict is Verdict.FAILURE or (ended.returncode == 0 and not ended.timed_out):
        return diagnosis
    how, fields = describe(ended, timeout_s)
    warned = diagnosis.root_cause
    warned_entry = catalog.get(warned.entry_id) if warned is not None else None
    if warned is not None and warned_entry is not None and warned_entry.role == "cause":
        # an error the output showed and the job seemed to survive (a handled traceback) is, once the command
        # failed anyway, the best explanation its output holds
        warned.fatal = True
        warned.role = Role.CAUSE
        warned.reason = f"{how}; this earlier error is the only failure its output shows (the job went on after it)"
        diagnosis.verdict = Verdict.FAILURE
        return diagnosis
    entry = catalog.generic("process_exit")
    if entry is None:
        return diagnosis
    if last_line is not None:
        evidence = Evidence(last_line.file, last_line.number, last_line.text, last_line.rank, last_line.timestamp,
                            last_line.seq)
    else:
        evidence = Evidence(diagnosis.inputs[0] if diagnosis.inputs else "<run>", 0, "")
    finding = Finding(
        entry_id=entry.id, category=entry.category, title=entry.title, role=Role.CAUSE, fatal=True,
        evidence=evidence, fields=fields, confidence="low",
        reason=f"{how} and no line of its output explains the failure; the evidence is its last line of output",
        rank_reason="",
    )
    if diagnosis.root_cause is not None:  # warnings stay, as findings
        diagnosis.notes.append(f"the warning {diagnosis.root_cause.entry_id} did not stop the command; {how}")
    diagnosis.findings.insert(0, finding)
    diagnosis.root_cause = finding
    diagnosis.verdict = Verdict.FAILURE
    return diagnosis
