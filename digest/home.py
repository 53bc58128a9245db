"""Where digest keeps its files by default (the state store, the HTTP cache)."""

from __future__ import annotations

import os
from pathlib import Path


def digest_home() -> Path:
    """$DIGEST_HOME, else the XDG data folder's ``digest``."""
    if os.environ.get("DIGEST_HOME"):
        return Path(os.environ["DIGEST_HOME"])
    data_home = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data_home) / "digest"
