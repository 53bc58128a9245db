"""How much one run may read: records per source and per run, bytes, and time per download.

The defaults are safe for an unattended weekly job (the README, "Limits", gives the
reasons); a ``[limits]`` table in the config file raises or lowers them. Every cut is
counted: the source's error says how many records were left out and which setting to raise.
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ..errors import ConfigError, RecordsCut, SourceError
from ..tables import check_kind, check_table

MIB = 2**20


@dataclass(frozen=True)
class IngestLimits:
    """Caps on the work of one ``load_sources`` call."""

    max_records_per_source: int = 10_000
    max_records_per_run: int = 20_000
    max_source_bytes: int = 64 * MIB
    max_input_bytes: int = 256 * MIB
    fetch_deadline_s: float = 120.0


# [limits] keys in the config file: key -> (field, unit multiplier, type)
CONFIG_LIMITS: dict[str, tuple[str, int, type]] = {
    "max_records_per_source": ("max_records_per_source", 1, int),
    "max_records_per_run": ("max_records_per_run", 1, int),
    "max_source_mb": ("max_source_bytes", MIB, int),
    "max_input_mb": ("max_input_bytes", MIB, int),
    "fetch_deadline": ("fetch_deadline_s", 1, float),
}
SETTING = {field: f"[limits] {key}" for key, (field, _, _) in CONFIG_LIMITS.items()}
# The values each key takes, from LOW to HIGH (None: no limit); NaN and infinity never. A cap of
# bytes stays an index-sized integer (1 TiB: a bigger one overflowed reading stdin), a deadline
# within a day, as `deadline` and `timeout` (a longer wait overflows socket and thread waits).
LIMIT_RANGES: dict[str, tuple[float, float | None]] = {
    "max_records_per_source": (1, None), "max_records_per_run": (1, None),
    "max_source_mb": (1, 2**20), "max_input_mb": (1, 2**20), "fetch_deadline": (0.1, 86_400),
}


def ingest_limits(config: Mapping[str, Any], origin: str = "config") -> IngestLimits:
    """The limits from a loaded config (its ``limits`` table); defaults for what it omits."""
    table = check_table(config.get("limits") or {}, CONFIG_LIMITS, f"{origin}: [limits]",
                        example="[limits] then max_records_per_run = 50000")
    values: dict[str, Any] = {}
    for key, value in table.items():
        name, unit, kind = CONFIG_LIMITS[key]
        check_kind(value, kind, f"{origin}: [limits] {key}")
        _check_range(key, value, f"{origin}: [limits] {key}")
        values[name] = value * unit
    return IngestLimits(**values)


_T = TypeVar("_T")


def within_caps(records: list[_T], source: str, limits: IngestLimits, kept_before: int, *,
                left_out: int = 0, unit: str = "a source", whole: str = "the run",
                fix: str = "split the source") -> tuple[list[_T], list[SourceError]]:
    """``records`` of one source cut to the record caps (``kept_before``: what the whole
    already holds; ``left_out``: records the parser already dropped at the source's cap),
    and one error per cut, saying how many were left out and which setting raises it."""
    cuts: list[SourceError] = []
    per_source = limits.max_records_per_source
    left = left_out + max(len(records) - per_source, 0)
    if left:
        records = records[:per_source]
        cuts.append(_cut_error(source, len(records) + left, len(records),
                               "max_records_per_source", f"{unit} may give at most "
                               f"{per_source:,}", fix))
    room = max(limits.max_records_per_run - kept_before, 0)
    if len(records) > room:
        total = len(records)
        records = records[:room]
        cuts.append(_cut_error(source, total, room, "max_records_per_run",
                               f"{whole} reached its cap of {limits.max_records_per_run:,}", fix))
    return records, cuts


def _cut_error(source: str, total: int, kept: int, setting: str, why: str,
               fix: str) -> RecordsCut:
    return RecordsCut(source, f"{why} records, so {total - kept:,} of its {total:,} records "
                       f"were left out (kept {kept:,})",
                       fix=f"raise {SETTING[setting]} in the config, or {fix}")


def _check_range(key: str, value: float, where: str) -> None:
    low, high = LIMIT_RANGES[key]
    if math.isfinite(value) and low <= value and (high is None or value <= high):
        return
    finite = "" if math.isfinite(value) else "a finite number "
    bounds = f"at least {low}" if high is None else f"from {low} to {high}"
    raise ConfigError(f"{where} = {value!r}: must be {finite}{bounds}")


_RECORD_CAP: contextvars.ContextVar[int | None] = contextvars.ContextVar("record_cap",
                                                                         default=None)


@contextmanager
def record_cap(cap: int) -> Iterator[None]:
    """Parsers that stream (JSON, JSON lines, CSV) make at most ``cap`` records meanwhile."""
    token = _RECORD_CAP.set(cap)
    try:
        yield
    finally:
        _RECORD_CAP.reset(token)


def current_record_cap() -> int | None:
    return _RECORD_CAP.get()
