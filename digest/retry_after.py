"""The ``Retry-After`` header, read once for every client digest has (feeds and the LLM API).

RFC 9110 gives it as whole seconds or as an HTTP date; servers also send fractions ("1.5").
"""

from __future__ import annotations

import email.utils
import math
import time


def parse_retry_after(value: str | None, *, now: float | None = None) -> float | None:
    """Seconds to wait (never negative), or None when the value is missing or unreadable."""
    if not value or not value.strip():
        return None
    try:
        seconds = float(value)
    except ValueError:
        return _seconds_until(value, time.time() if now is None else now)
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _seconds_until(value: str, now: float) -> float | None:
    try:
        moment = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, moment.timestamp() - now)
