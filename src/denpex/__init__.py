"""Denpex: find the initiating cause of a failed PyTorch 2 job in its logs, offline.

Public API: `diagnose(paths_or_text) -> Diagnosis`. Imports are lazy so the CLI starts fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["Diagnosis", "diagnose", "__version__"]

if TYPE_CHECKING:
    from denpex.api import diagnose
    from denpex.model import Diagnosis


def __getattr__(name: str) -> Any:
    if name == "diagnose":
        from denpex.api import diagnose

        return diagnose
    if name == "Diagnosis":
        from denpex.model import Diagnosis

        return Diagnosis
    raise AttributeError(name)
