"""Decompression on a thread of its own, ahead of the scan: the two overlap instead of adding up.

zlib, bz2, lzma and zstandard release the GIL while they decompress, so a thread that decompresses the next
blocks while the caller scans the current one uses a second core even with one worker: a `.zst` or `.xz`
log costs max(decompress, scan) rather than their sum. The queue holds a few blocks (memory stays bounded);
an error in the stream (truncated, corrupt) reaches the caller at the point where it happened, after the
text before it, as it does without the thread.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Iterator
from typing import Any

_AHEAD = 4  # decompressed blocks kept ready (each up to a few MB)
_POLL_S = 0.1  # how often a blocked producer looks whether the reader has gone
_JOIN_S = 0.005  # how long close() waits for the producer between drains


class Pipelined:
    """Iterate `blocks` produced on a thread; `close()` stops the thread and waits for it (call it before the
    handle the blocks come from is closed)."""

    def __init__(self, blocks: Iterator[bytes]) -> None:
        self._blocks = blocks
        self._queue: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=_AHEAD)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._produce, name="denpex-decompress", daemon=True)
        self._thread.start()

    def _put(self, item: tuple[str, Any]) -> bool:
        while not self._stop.is_set():
            try:
                self._queue.put(item, timeout=_POLL_S)
                return True
            except queue.Full:
                continue
        return False

    def _produce(self) -> None:
        try:
            for block in self._blocks:
                if not self._put(("block", block)):
                    return
            self._put(("end", None))
        except BaseException as exc:  # handed to the reader, raised where the stream broke
            self._put(("error", exc))

    def __iter__(self) -> Iterator[bytes]:
        while True:
            kind, value = self._queue.get()
            if kind == "block":
                yield value
            elif kind == "end":
                return
            else:
                raise value

    def close(self) -> None:
        self._stop.set()
        while self._thread.is_alive():
            # drain without waiting: a producer blocked on the full queue puts its block, then sees the stop.
            # (A get with a timeout here waited the whole timeout once the queue was empty: 0.1 s per close,
            # and every compressed input is opened and closed three times to sniff its head.)
            with contextlib.suppress(queue.Empty):
                while True:
                    self._queue.get_nowait()
            self._thread.join(timeout=_JOIN_S)
        self._thread.join()
