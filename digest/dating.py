"""Which ISO week a record belongs to: the week of its listing date.

Dated records (the Daily Papers date line, arXiv and feed dates, a date field) belong
to the ISO week of that date. An undated record belongs to the week it was first
ingested: for the inbox, the week ``digest ingest`` stored it; for a source read by
the run, the week of the first run that saw it, remembered in the store
(``first_seen``) so that a later re-run of an earlier week, or a folder that grows,
never moves it. ``--week W`` then takes only W's records, which is what makes
re-running an earlier week leave later weeks alone and lets ``--catch-up`` write
missed weeks one by one.

A record dated in a week no issue can take any more (its issue is out, or an earlier
one's: ``--catch-up`` writes only weeks after the last issue) is late: an arXiv mail sent
after Monday's run, a listing file put in the folder on Tuesday. The next new issue takes
it (:func:`late_records`), once. Every inbox record is told so (the inbox knows which issue
took each); a listing record only when its week's issue recorded what its run read
(kept with the issue when it is out) and neither that run nor any issue since read it, and no
issue published its paper: a record the run left out (the profile, ``--max-papers``) is
not late, and the weeks of issues published before digest kept that record have no late
records, so a folder of old listings is never pulled into the next issue. A re-run of a
published week takes the late records its issue took then, and none of its own week's that
a later issue took (:func:`taken_later`).
"""

from __future__ import annotations

import datetime as dt
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .dedup import known_names, merge
from .models import Record
from .state import Store, content_key, record_key
from .weeks import parse_week, week_of


@dataclass(frozen=True)
class Considered:
    """What a week's run read: the content keys of its records (an array: 8 bytes a key, where
    an int object is 36), and of the late ones among them (the store keeps
    them with its issue)."""

    keys: array[int]
    late: frozenset[int]


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
    """``id()`` → week of each record among ``records`` dated in a week no longer written
    (at or before the last published issue's) that is late: every such inbox record, and
    each listing record no issue's run read (:func:`_unread`). ``into``: the week being
    written; if its issue is out already, only those it took then (a re-run keeps its
    papers; the next new week takes the others)."""
    issued = {row["week"] for row in store.issues()}
    if not issued:
        return {}
    last, in_inbox = max(issued), {id(record) for record in inbox}
    earlier = [(record, week) for record, week in zip(records, weeks, strict=True)
               if week <= last]
    if into is not None and into in issued:
        return _taken_again(earlier, in_inbox, store, into)
    late = {id(record): week for record, week in earlier if id(record) in in_inbox}
    listed = [(record, week) for record, week in earlier if id(record) not in in_inbox]
    late.update({id(record): week for record, week in _unread(listed, store, issued)})
    return late


def taken_later(records: Sequence[Record], weeks: Sequence[str], inbox: Sequence[Record],
                store: Store, week: str) -> set[int]:
    """``id()`` of the listing records of ``week`` that a later issue took as late (a file
    that came after ``week``'s issue): a re-run of ``week`` leaves them where they went out."""
    taken = store.taken_late(after=week)
    if not taken:
        return set()
    in_inbox = {id(record) for record in inbox}
    return {id(record) for record, record_week in zip(records, weeks, strict=True)
            if record_week == week and id(record) not in in_inbox
            and content_key(record) in taken}


def _taken_again(earlier: Sequence[tuple[Record, str]], in_inbox: set[int], store: Store,
                 into: str) -> dict[int, str]:
    """The late records ``into``'s published issue took: the inbox says which, and so do the
    content keys its run read from earlier weeks."""
    taken, again = store.inbox_used_in(into), store.considered_in(into, late=True)
    late = {}
    for record, week in earlier:
        if id(record) in in_inbox:
            if record_key(record) in taken:
                late[id(record)] = week
        elif week < into and again and content_key(record) in again:
            late[id(record)] = week
    return late


def _unread(dated: Sequence[tuple[Record, str]], store: Store,
            issued: set[str]) -> list[tuple[Record, str]]:
    """The listing records among ``dated`` (each with its week, a published one or earlier)
    that their week's run did not read and no later issue took, whose paper no issue
    published. A week whose issue kept no record of what it read has none."""
    by_week: dict[str, list[Record]] = {}
    for record, week in dated:
        by_week.setdefault(week, []).append(record)
    unread: list[tuple[Record, str]] = []
    taken = store.taken_late() if by_week else set()
    for week, group in sorted(by_week.items()):
        read = store.considered_in(week) if week in issued else set()
        if read:  # one week's keys at a time: a 50k-record week is 50k ints
            unread += [(record, week) for record in group
                       if (key := content_key(record)) not in read and key not in taken]
    published = store.published_among({name for record, _ in unread for name in _names(record)})
    return [(record, week) for record, week in unread
            if not published.intersection(_names(record))]


def _names(record: Record) -> tuple[str, ...]:
    """The names an issue would have published ``record``'s paper under."""
    return known_names(merge([record]))


def first_open_week(store: Store) -> str | None:
    """The week after the last published issue's: the first a late record can go into."""
    issued = [row["week"] for row in store.issues()]
    return week_of(parse_week(max(issued))[0] + dt.timedelta(days=7)) if issued else None
