"""Ingest: sources, decompression, line framing and header parsing."""

from denpex.ingest.lines import frame
from denpex.ingest.sources import Source, check_readable, resolve, text_source

__all__ = ["Source", "check_readable", "frame", "resolve", "text_source"]
