"""ISO weeks: the name of an issue (``2026-W47``) and the dates it covers."""

from __future__ import annotations

import datetime as dt
import re

from .errors import ConfigError

_WEEK = re.compile(r"^(\d{4})-W(\d{2})$")


def current_week(today: dt.date | None = None) -> str:
    year, week, _ = (today or dt.date.today()).isocalendar()
    return f"{year}-W{week:02d}"


def parse_week(week: str) -> tuple[dt.date, dt.date]:
    """Monday and Sunday of an ISO week such as ``2026-W47``."""
    match = _WEEK.match(week)
    if not match:
        raise ConfigError(f"week {week!r}: expected an ISO week such as 2026-W47", setting="week")
    try:
        monday = dt.date.fromisocalendar(int(match[1]), int(match[2]), 1)
    except ValueError:
        raise ConfigError(f"week {week!r}: {match[1]} has no week {match[2]}",
                          setting="week") from None
    if monday > dt.date.max - dt.timedelta(days=6):
        raise ConfigError(f"week {week!r}: past the last date digest can handle (its Sunday "
                          f"would be after {dt.date.max}); choose an earlier week",
                          setting="week")
    return monday, monday + dt.timedelta(days=6)


def is_week(name: str) -> bool:
    """Whether ``name`` is a week some year has (``2026-W47``; not ``2026-W60``, nor
    ``9999-W52``, whose Sunday no date can hold)."""
    try:
        parse_week(name)
    except ConfigError:
        return False
    return True


def date_range(start: dt.date, end: dt.date) -> str:
    """'16–22 November 2026', '30 November – 6 December 2026',
    '28 December 2026 – 3 January 2027'."""
    if start.year != end.year:
        return f"{start.day} {start:%B %Y} – {end.day} {end:%B %Y}"
    if start.month != end.month:
        return f"{start.day} {start:%B} – {end.day} {end:%B %Y}"
    return f"{start.day}–{end.day} {end:%B %Y}"


def week_of(day: dt.date) -> str:
    return current_week(day)


def resolve_week(value: str | None, today: dt.date | None = None) -> str:
    """``--week``: an ISO week, ``last`` (the last complete week: the right default for a
    Monday cron line), or None for the current week."""
    today = today or dt.date.today()
    if value is None:
        return current_week(today)
    if value == "last":
        return current_week(today - dt.timedelta(days=7))
    parse_week(value)
    return value
