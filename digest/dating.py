"""Which ISO week a record belongs to: the week of its listing date.

Dated records (the Daily Papers date line, arXiv and feed dates, a date field) belong
to the ISO week of that date. An undated record belongs to the week it was first
ingested: for the inbox, the week ``digest ingest`` stored it; for a source read by
the run, the week of the first run that saw it, remembered in the store
(``first_seen``) so that a later re-run of an earlier week, or a folder that grows,
never moves it. ``--week W`` then takes only W's records, which is what makes
re-running an earlier week leave later weeks alone and lets ``--catch-up`` write
missed weeks one by one.

An inbox record dated in a week no issue can take any more (its issue is out, or an
earlier one's: ``--catch-up`` writes only weeks after the last issue) is late: an arXiv
mail sent after Monday's run. The next issue takes it (:func:`late_records`), once.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence

from .models import Record
from .state import Store, record_key
from .weeks import parse_week, week_of


def record_weeks(records: Sequence[Record], store: Store, *, default: str,
                 added: Mapping[str, str] | None = None) -> list[str]:
    """The week of each record, in order. ``added``: inbox keys → the week they came in;
    other undated records first seen now get ``default``."""
    added = added or {}
    keys = ["" if r.published else record_key(r) for r in records]  # a hash of each: once
    undated = {key: added.get(key, default) for key in keys if key}
    seen = store.first_seen(undated) if undated else {}
    return [week_of(r.published) if r.published else seen[key]
            for r, key in zip(records, keys, strict=True)]


def catch_up_weeks(weeks: Sequence[str], store: Store, *, until: str) -> list[str]:
    """Weeks with records after the last published issue and up to ``until``, oldest
    first: what ``--catch-up`` writes, each once."""
    published = [row["week"] for row in store.issues()]
    last = max(published) if published else ""
    return sorted({week for week in weeks if last < week <= until})


def late_records(records: Sequence[Record], weeks: Sequence[str], inbox: Sequence[Record],
                 store: Store, *, into: str | None = None) -> dict[int, str]:
    """``id()`` → week of each inbox record among ``records`` dated in a week no longer
    written: at or before the last published issue's. ``into``: the week being written; if
    its issue is out already, only those it took then (a re-run keeps its papers; the next
    new week takes the others)."""
    issued = [row["week"] for row in store.issues()]
    if not issued or not inbox:
        return {}
    last, in_inbox = max(issued), {id(record) for record in inbox}
    late = {id(record): week for record, week in zip(records, weeks, strict=True)
            if id(record) in in_inbox and week <= last}
    if into is not None and into in issued and late:
        taken = store.inbox_used_in(into)
        late = {id(record): late[id(record)] for record in records
                if id(record) in late and record_key(record) in taken}
    return late


def first_open_week(store: Store) -> str | None:
    """The week after the last published issue's: the first a late record can go into."""
    issued = [row["week"] for row in store.issues()]
    return week_of(parse_week(max(issued))[0] + dt.timedelta(days=7)) if issued else None
