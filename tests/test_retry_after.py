"""One Retry-After reader for the feed fetcher and the LLM client (issue 16: there were two,
and the fetcher's took "1.5" for a date and ignored it)."""

from __future__ import annotations

import pytest

from digest.retry_after import parse_retry_after

NOW = 1_700_000_000.0  # 2023-11-14 22:13:20 UTC


@pytest.mark.parametrize(("value", "seconds"), [
    ("120", 120.0), (" 7 ", 7.0), ("1.5", 1.5), ("-3", 0.0),
    ("Tue, 14 Nov 2023 22:13:50 GMT", 30.0),  # an HTTP date 30 s ahead
    ("Tue, 14 Nov 2023 22:00:00 GMT", 0.0),  # a date already past
    ("", None), (None, None), ("soon", None), ("nan", None), ("inf", None),
])
def test_retry_after_in_every_form(value, seconds):
    assert parse_retry_after(value, now=NOW) == seconds
