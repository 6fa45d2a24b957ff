"""What reading a source ran into that the answer must mention: where a compressed stream broke off, and
runs of NUL bytes (a crashed or preallocated file) read as text. Without these notes a partial or
binary-padded log would come back `clean` as if it had been read whole."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# Fewer NULs than this are terminal noise; a block of them is binary data the answer should mention.
NUL_NOTE_BYTES = 1024


@dataclass(slots=True)
class Reading:
    """Notes about one source, filled as its bytes are read (by any path: lines, fast, parallel shares)."""

    name: str
    stopped: str | None = None  # why a compressed stream broke off, and after how many bytes
    nul_bytes: int = 0
    first_nul: int | None = None  # byte offset of the first NUL, in the text read
    _offset: int = field(default=0, repr=False)

    def stop(self, reason: str, delivered: int) -> None:
        self.stopped = f"{reason} after {delivered:,} bytes of text"

    def watch(self, chunks: Iterable[bytes], start: int = 0) -> Iterator[bytes]:
        """Pass chunks through, counting NUL bytes (found by memchr at ~9 GB/s; bytes.count runs at ~1.5 GB/s)."""
        self._offset = start
        for chunk in chunks:
            nul = chunk.count(0) if chunk.find(0) >= 0 else 0
            if nul:
                if self.first_nul is None:
                    self.first_nul = self._offset + chunk.index(0)
                self.nul_bytes += nul
            self._offset += len(chunk)
            yield chunk

    def merge(self, other: Reading) -> None:
        """Fold in the notes of another share of the same file (parallel scan)."""
        self.stopped = self.stopped or other.stopped
        self.nul_bytes += other.nul_bytes
        if other.first_nul is not None and (self.first_nul is None or other.first_nul < self.first_nul):
            self.first_nul = other.first_nul

    def notes(self) -> list[str]:
        out = []
        if self.stopped:
            out.append(f"{self.name}: {self.stopped}; diagnosed what was read")
        if self.nul_bytes >= NUL_NOTE_BYTES:
            out.append(f"{self.name}: {self.nul_bytes:,} NUL bytes from byte {self.first_nul:,} on (binary data, "
                       "as a crashed or preallocated file leaves); read as text, no log lines in them")
        return out
