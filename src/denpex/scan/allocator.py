"""Keep freed read buffers in the process heap instead of returning them to the kernel.

The fast path reads 1 MiB chunks and keeps the last few alive for back context, so each new chunk is a
fresh allocation. glibc serves allocations that size with mmap (or trims the heap when they are freed),
and every chunk then page-faults its memory in again: ~0.3 s of a 1.1 s scan of 1 GiB, measured. Raising
the mmap and trim thresholds lets the freed chunks be reused. Only glibc has mallopt; elsewhere (musl,
macOS) this does nothing and the scan is just slower.
"""

from __future__ import annotations

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_done = False


def keep_freed_buffers(mmap_threshold: int = 32 << 20, trim_threshold: int = 256 << 20) -> bool:
    """Once per process; True when glibc accepted both settings."""
    global _done
    if _done:
        return True
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    _done = bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold)) and bool(mallopt(_M_TRIM_THRESHOLD, trim_threshold))
    return _done
