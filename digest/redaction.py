"""Secrets kept out of what digest shows: messages, logs, reports, caches.

``mask_secret`` masks one known secret (an API key) wherever it appears in a text;
``url_for_logs`` shows a URL without its ``user:password@`` and with secret-looking query
values masked; ``source_for_logs`` does that for a source name that is a URL (a path is shown
as it is). Both are light (no third-party import), so any layer may use them;
``api_key_from_environment`` gives the key to mask where the caller does not hand it over.
"""

from __future__ import annotations

import os
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


def api_key_from_environment() -> str:
    """The run's API key as the settings read it (``OPENAI_API_KEY``, environment only) and as
    it is sent: without a CRLF file's "\r"."""
    return os.environ.get("OPENAI_API_KEY", "").strip()


def source_for_logs(source: str) -> str:
    """A source as messages show it: a URL through ``url_for_logs``, a path or "-" as given."""
    return url_for_logs(source) if "://" in source else source


def url_for_logs(url: str, *, keep_user: bool = False, mask: str = MASK) -> str:
    """The URL without user:password@ (``keep_user``: with ``user:***@``) and with
    secret-looking query values masked. The user part ends at the last "@": a password may
    hold "/", "#" or "?", which a URL parser takes for the path, fragment or query."""
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    userinfo, at, location = rest.rpartition("@")
    shown = ""
    if at and keep_user:
        user, colon, _ = userinfo.partition(":")
        shown = f"{user}:{mask}@" if colon else f"{user}@"
    if not at:
        location = rest
    if not sep:  # no scheme: nothing more to parse
        return shown + location
    try:
        parts = urlsplit(f"{scheme}://{location}")
    except ValueError:
        return f"{scheme}://{shown}{location}"
    query = urlencode([(k, mask if _SECRET_PARAM.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*:/")
    return urlunsplit((parts.scheme, shown + parts.netloc, parts.path, query, parts.fragment))
