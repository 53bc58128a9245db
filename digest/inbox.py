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

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from .errors import ConfigError, SourceError, StateError, StateUnavailable
from .ingest import IngestLimits, load_sources
from .ingest.mailmsg import looks_like_email
from .models import Record
from .redaction import source_for_logs
from .state import Store
from .testhook import pause_at

BUSY_TIMEOUT_S = 5.0


@dataclass
class Kept:
    """What ``ingest`` did: records read, how many were new to the inbox, sources skipped."""

    read: int = 0
    added: int = 0
    errors: list[str] = field(default_factory=list)


def ingest(state_path: Path, sources: Sequence[str], *, fmt: str | None = None,
           strict: bool = False, limits: IngestLimits | None = None,
           stdin: bytes | str = b"") -> Kept:
    """Read ``sources`` (``-``: the bytes ``stdin``, e.g. one listing e-mail) and keep their
    records in the store's inbox; nothing read at all is an error, and nothing is stored."""
    ingested = load_sources(sources, fmt=fmt, strict=strict, stdin=lambda: stdin,
                            limits=limits)
    if not ingested.records:
        raise SourceError(", ".join(map(source_for_logs, sources)),
                          "no paper found in what was given",
                          fix="give a listing (a Daily Papers page, an arXiv listing e-mail, "
                          "JSON, CSV or a feed); nothing was stored")
    name = _stdin_name(stdin)
    records = [_stdin_named(record, name) for record in ingested.records]
    problems = [str(error) for error in ingested.errors]
    pause_at("ingest")
    added = keep_in_inbox(state_path, records, [*problems, *map(str, ingested.warnings)])
    return Kept(len(records), added, problems)


def _stdin_named(record: Record, name: str) -> Record:
    if record.sighting.source not in {"-", "<stdin>"}:
        return record
    return replace(record, sighting=replace(record.sighting, source=name))


def _stdin_name(data: bytes | str) -> str:
    """What a record read from stdin is named after, so that two e-mails count as two
    listings (sightings) and a redelivered e-mail as the same one: what a relay does not
    change (it adds Received: lines), or else the bytes read."""
    raw = data.encode() if isinstance(data, str) else data
    identity = _mail_identity(raw) if looks_like_email(raw) else None
    return "stdin:" + hashlib.sha256(identity or raw).hexdigest()[:12]


def _mail_identity(raw: bytes) -> bytes:
    """A mail's Message-ID; without one, its sender, date, subject and body."""
    from email.parser import BytesHeaderParser
    from email.policy import compat32

    headers = BytesHeaderParser(policy=compat32).parsebytes(raw[:65536])
    value = " ".join(str(headers["Message-ID"] or "").split())
    if value.startswith("<"):
        return f"message-id:{value}".encode()
    said = "\0".join(" ".join(str(headers[name] or "").split())
                     for name in ("From", "Date", "Subject"))
    return b"mail:" + said.encode("utf-8", "surrogateescape") + b"\0" + _body(raw)


def _body(raw: bytes) -> bytes:
    """What follows a message's header block (the first empty line)."""
    ends = [at + len(gap) for gap in (b"\r\n\r\n", b"\n\n") if (at := raw.find(gap)) >= 0]
    return raw[min(ends):] if ends else b""


def keep_in_inbox(state_path: Path, records: Sequence[Record],
                  problems: Sequence[str] = ()) -> int:
    """Store ``records`` for the next issue, with what reading them left out or doubted (for
    the next newsletter's report: a mail hook's stderr is read by nobody); return how many
    were new."""
    try:
        with Store(state_path, busy_timeout_s=BUSY_TIMEOUT_S) as store:
            store.check_whole()
            return store.add_to_inbox(records, problems)
    except StateUnavailable:
        raise
    except (StateError, ConfigError) as error:  # a store path that is a folder, too
        if isinstance(error, ConfigError) and error.setting != "state":
            raise
        raise StateUnavailable(f"{error} (the mail stays with the mail system, which retries "
                               "it later)") from None
