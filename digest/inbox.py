"""`digest ingest`: keep records in the store's inbox, the way a mail hook needs it.

A mail hook must never lose a mail: exit 0 only when the records are stored, exit 75
(the MTA keeps the mail and retries) for anything a later attempt can get past. That
is busy, full, read-only or failing disks, and also a damaged or truncated store: it
will not mend itself, but an operator restoring it within the MTA's retry period
(days) should find every mail still queued, not bounced. The inbox write is one short
SQLite transaction with a busy timeout of a few seconds; it never takes the run lock
(``digest.runlock``), so a newsletter run spending minutes on LLM calls does not
hold a mail up.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .errors import StateError, StateUnavailable
from .models import Record
from .state import Store

BUSY_TIMEOUT_S = 5.0


def keep_in_inbox(state_path: Path, records: Sequence[Record]) -> int:
    """Store ``records`` for the next issue; return how many were new."""
    try:
        with Store(state_path, busy_timeout_s=BUSY_TIMEOUT_S) as store:
            return store.add_to_inbox(records)
    except StateUnavailable:
        raise
    except StateError as error:
        raise StateUnavailable(f"{error} (the mail stays with the mail system, which retries "
                               "it later)") from None
