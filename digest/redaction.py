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
    secret-looking query values masked, naming the host the request goes to."""
    scheme, sep, rest = url.partition("://") if "://" in url else ("", "", url)
    userinfo, location = _split_user(rest, mask) if sep else _last_at(rest)
    shown = ""
    if userinfo is not None and keep_user:
        user, colon, _ = userinfo.partition(":")
        shown = f"{user}:{mask}@" if colon else f"{user}@"
    if not sep:  # no scheme: nothing more to parse
        return shown + location
    try:
        parts = urlsplit(f"{scheme}://{location}")
    except ValueError:
        return f"{scheme}://{shown}{location}"
    query = urlencode([(k, mask if _SECRET_PARAM.search(k) else v)
                       for k, v in parse_qsl(parts.query, keep_blank_values=True)], safe="*:/")
    return urlunsplit((parts.scheme, shown + parts.netloc, parts.path, query, parts.fragment))


def _split_user(rest: str, mask: str) -> tuple[str | None, str]:
    """(the user part or None, the rest) of what follows "scheme://", split as httpx splits
    it: the host ends at the first "/", "?" or "#", after the last "@" before that.

    A password written with a "/", "?" or "#" in it reads two ways. When httpx cannot read
    the URL (what follows the host's ":" is no port), the user part ends at the last "@": it
    hides the password, and nothing is connected to. When httpx can (http://bob:12/ss@host/,
    or a ":" before an "@" in the host part), what follows the host up to the last "@" may be
    the rest of a password: it is masked, and the user not shown. An "@" after a host with
    no ":" before it (https://mastodon.social/@lab.rss) ends no password: it is shown."""
    end = next((i for i, char in enumerate(rest) if char in "/?#"), len(rest))
    authority, tail = rest[:end], rest[end:]
    userinfo, at, hostport = authority.rpartition("@")
    user = userinfo if at else None
    has_port, port = _port(hostport)
    if "@" not in tail or not (has_port or ":" in userinfo):
        return user, hostport + tail
    if not _is_port(port):
        return _last_at(rest)
    return None, hostport + "/" + mask + tail[tail.rindex("@"):]


def _last_at(rest: str) -> tuple[str | None, str]:
    userinfo, at, location = rest.rpartition("@")
    return (userinfo, location) if at else (None, rest)


def _port(hostport: str) -> tuple[bool, str]:
    """(whether a port follows the host, its text), an IPv6 host's "[...]" read whole."""
    if hostport.startswith("["):
        after = hostport[hostport.rfind("]") + 1:] if "]" in hostport else ""
        return after.startswith(":"), after[1:]
    _, colon, port = hostport.partition(":")
    return bool(colon), port


def _is_port(text: str) -> bool:
    """What httpx takes for a port: "" (the default) or what int() reads."""
    try:
        int(text or "0")
    except ValueError:
        return False
    return True
