"""Secrets kept out of what digest shows: messages, logs, reports, caches.

``mask_secret`` masks one known secret (an API key) wherever it appears in a text;
``url_for_logs`` shows a URL without its ``user:password@`` and with secret-looking query
values masked. Both are light (no third-party import), so any layer may use them.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

MASK = "***"
_SECRET_PARAM = re.compile(r"key|token|secret|passw|auth|sig|session", re.IGNORECASE)


def mask_secret(text: str, secret: str | None) -> str:
    """``text`` with every occurrence of the secret masked (secrets under 4 characters are
    not searched for: they would mask ordinary words)."""
    if secret and len(secret) >= 4:
        return text.replace(secret, MASK)
    return text


def url_for_logs(url: str) -> str:
    """The URL without user:password@ and with secret-looking query values masked."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    query = urlencode([(k, MASK if _SECRET_PARAM.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*:/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
