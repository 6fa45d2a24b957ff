"""Inputs beside the logs: Flight Recorder dumps and torchelastic error files, merged into the one diagnosis.

Why: both are written by the job when it fails, and both know things the console does not print: which rank
never joined a collective (the dumps), and when each rank raised, with its full traceback (the error files).
The error files' tracebacks are read as that rank's log lines; the dumps are compared across ranks
(analyze.flight_recorder); what they say lands in the root cause's rank evidence or in a note.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from denpex.analyze import flight_recorder
from denpex.errors import DenpexInputError
from denpex.ingest.error_files import ErrorFile, parse_error_file, read_error_file
from denpex.ingest.flight_recorder import FrDump, parse_dump, read_dump
from denpex.ingest.sources import Source
from denpex.model import Diagnosis, Evidence


@dataclass
class ExtraInputs:
    dumps: list[FrDump] = field(default_factory=list)
    error_files: list[tuple[ErrorFile, int | None]] = field(default_factory=list)  # with the rank of its path
    error_sources: list[Source] = field(default_factory=list)  # their tracebacks, as text logs
    notes: list[str] = field(default_factory=list)

    @classmethod
    def read(cls, sources: list[Source]) -> ExtraInputs:
        """Read every dump and error file; one that cannot be read is a note, never an exception."""
        extra = cls()
        for source in sources:
            try:
                if source.kind == "flight_recorder":
                    extra.dumps.append(_dump(source))
                elif source.kind == "error_file":
                    extra._add_error_file(source)
            except DenpexInputError as exc:
                extra.notes.append(f"left out: {exc}")
        extra._rank_copies()
        for found, rank in extra.error_files:
            if found.traceback.strip():
                extra.error_sources.append(Source(name=found.name, data=found.traceback.encode("utf-8", "replace"),
                                                  rank_hint=rank, time_hint=found.timestamp))
        return extra

    def _add_error_file(self, source: Source) -> None:
        found = read_error_file(source.path, source.name) if source.path is not None else parse_error_file(
            source.data or b"", source.name)
        self.error_files.append((found, source.rank_hint))

    def _rank_copies(self) -> None:
        """torchrun's own error file ($TORCHELASTIC_ERROR_FILE) is a copy of the root cause rank's: that rank's."""
        ranked = {(ef.message, ef.traceback, ef.timestamp): rank for ef, rank in self.error_files if rank is not None}
        self.error_files = [(ef, rank if rank is not None else ranked.get((ef.message, ef.traceback, ef.timestamp)))
                            for ef, rank in self.error_files]

    def merge(self, diagnosis: Diagnosis, launcher_first: tuple[int, str, Evidence] | None) -> None:
        """What the dumps say about the initiating rank; where torchrun's first observed failure disagrees."""
        if self.dumps:
            summary = flight_recorder.summarise(self.dumps, diagnosis.notes)
            if summary is not None:
                flight_recorder.merge(diagnosis, summary)
        if self.error_files and diagnosis.root_cause is not None:
            root = diagnosis.root_cause
            own = [ef for ef, rank in self.error_files if rank == root.rank and ef.timestamp is not None]
            if own and root.evidence.timestamp is None:
                root.evidence.timestamp = own[0].timestamp  # the error file says when this rank raised it
        if launcher_first is not None:
            self._launcher_note(diagnosis, launcher_first)

    def _launcher_note(self, diagnosis: Diagnosis, launcher_first: tuple[int, str, Evidence]) -> None:
        """torchrun's `Root Cause (first observed failure)` is the error file with the smallest timestamp (or the
        first exit it saw): say so when the diagnosis, or an earlier error file, names another rank."""
        rank, when, line = launcher_first
        where = f"{line.file}:{line.line}"
        root = diagnosis.root_cause
        timed = [(ef.timestamp, r, ef) for ef, r in self.error_files if ef.timestamp is not None and r is not None]
        earlier = [t for t in timed if t[1] != rank and all(t[0] < u[0] for u in timed if u[1] == rank)]
        if earlier:
            stamp, other, ef = min(earlier, key=lambda t: t[0])
            diagnosis.notes.append(
                f"torchrun's first observed failure ({where}) is rank {rank} at {when}, but {Path(ef.name).name} "
                f"of rank {other} records an earlier failure ({_clock(stamp)}: {ef.message[:120]})")
        elif root is not None and root.rank is not None and root.rank != rank:
            diagnosis.notes.append(
                f"torchrun's first observed failure ({where}) is rank {rank} at {when}; the evidence names rank "
                f"{root.rank} ({(root.rank_evidence or 'its own output').replace('_', ' ')}): a launcher reports the "
                "first exit or the earliest error file it saw, not the rank that started it")


def _dump(source: Source) -> FrDump:
    dump = read_dump(source.path, source.name) if source.path is not None else parse_dump(source.data or b"",
                                                                                           source.name)
    if dump.rank is None:
        dump.rank = source.rank_hint  # a folder that says the rank (rank3/, attempt_0/3/)
    return dump


def _clock(seconds: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(seconds))
