"""Fetching http(s) sources politely, with httpx.

Timeouts; retries with exponential backoff on network errors, 429 and 5xx (honouring
Retry-After in full; one that ends past the URL's deadline fails at once); a User-Agent
that says who we are; arXiv's etiquette of one request every 3 seconds; and an on-disk
cache with conditional GET, so a weekly job asks the server "changed since?" instead of
downloading again. When the server cannot be reached, a cached copy is used with a
warning. Within ``holding_answers`` (ingest's mode) a 200 replaces the cached copy only once
``confirm`` says it was read as a listing: an empty body, an error in JSON, a notice or a
maintenance page answered with 200 cannot replace the good copy a later outage falls back to,
and ``fallback`` gives that copy to the run that got it. A web page is never cached. The clock
and sleep are parameters, so tests run without waiting.

Each URL has an overall deadline (``deadline_s``) on top of the per-read timeout: a
server that trickles a byte every few seconds never times a read out, so every read (the
headers' too: ``llm.deadline.request_limit``, as for the LLM client) waits at most until the
deadline, and no retry starts that could not finish before it.

The body is decoded here, not by httpx: httpx inflates a whole chunk at once, so a few KB
gzipped twice ("Content-Encoding: gzip, gzip") became gigabytes before its size was
checked. Each gzip or deflate layer gives at most ``_PIECE`` bytes at a time, counted as they
come; an encoding we did not ask for is refused. Every gzip member is read (RFC 1952 allows
several); a body that ends inside the compressed data was cut short: it fails as a dropped
connection does (retried, never cached).
"""

from __future__ import annotations

import importlib.metadata
import logging
import re
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import SourceError, SourceUnavailable
from ..home import digest_home
from ..redaction import url_for_logs
from ..retry_after import parse_retry_after
from ..textsafety import ellipsize, untrusted_preview
from .base import MAX_SOURCE_BYTES, describe
from .detect import looks_like_html_page
from .http_cache import Entry, HttpCache

if TYPE_CHECKING:
    import httpx

logger = logging.getLogger("digest.ingest")

USER_AGENT = (f"digest/{importlib.metadata.version('digest')} "
              "(weekly research-paper newsletter; python-httpx)")
ARXIV_INTERVAL_S = 3.0
RETRY_STATUSES = {429, 500, 502, 503, 504}
ACCEPT_ENCODING = "gzip, deflate"
MAX_REDIRECTS = 5
_PIECE = 64 * 1024
_GZIP_MAGIC = b"\x1f\x8b"
_SECRET_PARAM = re.compile(r"key|token|secret|passw|auth|sig|session", re.IGNORECASE)


def is_url(source: str) -> bool:
    return source.lower().startswith(("http://", "https://"))


@dataclass(frozen=True)
class Fetched:
    data: bytes
    content_type: str | None
    warning: str | None = None
    from_cache: bool = False


@dataclass
class RateLimiter:
    """At most one request per ``interval`` seconds to each host it is asked about."""

    intervals: Mapping[str, float]
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    _last: dict[str, float] = field(default_factory=dict)

    def wait(self, host: str) -> float:
        """Sleep until ``host`` may be asked again; return how long that was."""
        interval = self._interval(host)
        now = self.clock()
        last = self._last.get(host)
        delay = max(0.0, last + interval - now) if last is not None and interval else 0.0
        if delay:
            self.sleep(delay)
        self._last[host] = now + delay
        return delay

    def _interval(self, host: str) -> float:
        return next((s for domain, s in self.intervals.items()
                     if host == domain or host.endswith("." + domain)), 0.0)


class _Transient(Exception):
    """A failure worth retrying."""

    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class _DeadlinePassed(_Transient):
    """The URL's overall deadline passed: not retried (a cached copy may still serve)."""


class _OtherScheme(Exception):
    """A redirect to a URL that is not http(s) (file:, ftp:, ...): never followed or retried."""


class _BadLocation(Exception):
    """A redirect to a Location that is no URL: the server's answer is wrong, for good (httpx
    would report it as a RemoteProtocolError, which is retried)."""


def _check_redirect(response: httpx.Response) -> None:
    """Policy: http(s) redirects are followed, at most ``MAX_REDIRECTS``, to any host (feeds
    move; ``curl -L`` does the same), never to another scheme nor to a malformed URL; a move
    to another host is logged, naming both."""
    import httpx

    location = response.headers.get("location")
    if not (response.has_redirect_location and location):
        return
    here = response.request.url
    try:
        there = here.join(location)
    except httpx.InvalidURL:
        raise _BadLocation(ellipsize(url_for_logs(location.strip()), 200)) from None
    if there.scheme not in ("http", "https"):
        raise _OtherScheme(ellipsize(url_for_logs(location.strip()), 200))
    if there.host != here.host:
        logger.info("%s: redirected from %s to another host, %s", url_for_logs(str(here)),
                    here.host, there.host)


def _check_url(url: str, shown: str) -> None:
    """A URL httpx cannot read is the user's to fix (httpx's reason may quote a piece of a
    password, so it is not shown)."""
    import httpx

    try:
        httpx.URL(url)
    except httpx.InvalidURL:
        raise SourceError(shown, "not a valid URL (httpx cannot read it)",
                          fix="check the URL; in a user name or password write / as %2F, "
                              "? as %3F, # as %23 and @ as %40") from None


class Fetcher:
    """Gets URLs for ingest. Use as a context manager, or call ``close``."""

    def __init__(self, *, cache_dir: Path | None = None, client: httpx.Client | None = None,
                 timeout: float = 30.0, retries: int = 3, backoff_s: float = 1.0,
                 max_wait_s: float = 60.0, polite: Mapping[str, float] | None = None,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep,
                 now: Callable[[], float] = time.time,
                 deadline_s: float = 120.0, max_bytes: int = MAX_SOURCE_BYTES) -> None:
        import httpx  # loaded when a URL is fetched, not when digest starts

        from ..llm.deadline import limit_client

        self.client = client or limit_client(httpx.Client(
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)), follow_redirects=True,
            max_redirects=MAX_REDIRECTS, event_hooks={"response": [_check_redirect]},
            headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING}))
        self.cache = HttpCache(cache_dir or digest_home() / "http-cache", now=now)
        self.retries, self.backoff_s, self.max_wait_s = retries, backoff_s, max_wait_s
        polite = polite if polite is not None else {"arxiv.org": ARXIV_INTERVAL_S}
        self.limiter = RateLimiter(polite, clock=clock, sleep=sleep)
        self.sleep = sleep
        self.timeout, self.deadline_s, self.max_bytes = timeout, deadline_s, max_bytes
        self.wall = clock  # the deadline counts the retries' sleeps too
        self._held: dict[str, _Answer] | None = None  # new 200s not yet read as listings

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.client.close()

    @contextmanager
    def holding_answers(self) -> Iterator[None]:
        """Within: a 200 is held, not cached, until ``confirm`` (or ``fallback``) says how
        it read; one neither confirmed nor fallen back from is never cached."""
        before, self._held = self._held, {}
        try:
            yield
        finally:
            self._held = before

    def confirm(self, url: str) -> str | None:
        """The held answer of ``url`` was read as a listing: it replaces the cached copy (the
        warning when the cache cannot be written)."""
        answer = self._held.pop(url, None) if self._held is not None else None
        return self._cache_answer(url, answer).warning if answer else None

    def fallback(self, url: str, problem: str) -> Fetched | None:
        """The held answer of ``url`` is no listing (``problem``): the copy cached before it,
        with a warning naming what the server sent; None when there is none."""
        answer = self._held.pop(url, None) if self._held is not None else None
        if answer is None or answer.cached is None:
            return None
        entry, body = answer.cached
        sent = untrusted_preview(answer.body.decode("utf-8", "replace"), 80)
        warning = describe(answer.shown, f"the server answered HTTP 200 with no listing "
                           f"({problem}; it sent {repr(sent) if sent else 'nothing'}); used "
                           f"the copy cached {_when(entry)}",
                           fix="check the URL if this lasts")
        return Fetched(body, entry.content_type, warning, from_cache=True)

    def fetch(self, url: str, *, max_bytes: int | None = None) -> Fetched:
        """The body of ``url``, at most ``max_bytes`` (default: the fetcher's own cap)."""
        shown = url_for_logs(url)
        _check_url(url, shown)
        cached = self.cache.lookup(url)
        if cached and self.cache.is_fresh(cached[0]):
            logger.info("%s: fresh in the cache, not requested", shown)
            return Fetched(cached[1], cached[0].content_type, from_cache=True)
        limit = _Limit(self.wall() + self.deadline_s, self.deadline_s,
                       min(max_bytes or self.max_bytes, self.max_bytes))
        try:
            return self._get_with_retries(url, shown, cached, limit)
        except _Transient as exc:
            if cached is None:
                raise SourceUnavailable(shown, f"could not fetch it: {exc}",
                                        fix="try again later") from None
            warning = describe(shown, f"could not fetch it ({exc}); used the copy cached "
                               f"{_when(cached[0])}",
                               fix="try again later for a fresh copy")
            return Fetched(cached[1], cached[0].content_type, warning, from_cache=True)

    def _get_with_retries(self, url: str, shown: str, cached: tuple[Entry, bytes] | None,
                          limit: _Limit) -> Fetched:
        headers = HttpCache.validators(cached[0]) if cached else {}
        attempt = 0
        while True:
            try:
                return self._get_once(url, shown, headers, cached, limit)
            except _DeadlinePassed:
                raise
            except _Transient as exc:
                pause = self._pause(attempt, exc.retry_after)
                if exc.retry_after is not None and self.wall() + pause >= limit.deadline:
                    raise _DeadlinePassed(f"{exc}; the server asked to wait {pause:,g} s, past "
                                          f"the {limit.seconds:g} s fetch deadline") from None
                if attempt == self.retries:
                    raise _Transient(f"{exc}, after {attempt + 1} tries") from None
                if self.wall() + pause >= limit.deadline:
                    raise _DeadlinePassed(f"{exc}; no time for another try before the "
                                          f"{limit.seconds:g} s fetch deadline") from None
                logger.info("%s: %s; retrying in %.1f s", shown, exc, pause)  # not a problem yet
                self.sleep(pause)
                attempt += 1

    def _get_once(self, url: str, shown: str, headers: dict[str, str],
                  cached: tuple[Entry, bytes] | None, limit: _Limit) -> Fetched:
        import httpx

        from ..llm.deadline import request_limit

        self.limiter.wait(urlsplit(url).hostname or "")
        started = time.monotonic()
        left = max(limit.deadline - self.wall(), 0.001)
        timeout = httpx.Timeout(min(self.timeout, left), connect=min(self.timeout, 10.0, left))
        try:  # every read, the headers' too, waits at most until the URL's deadline
            with request_limit(time.monotonic() + left), \
                    self.client.stream("GET", url, headers=headers, timeout=timeout) as response:
                body = (_read_capped(response, shown, limit, self.wall) if response.is_success
                        else b"")
        except httpx.TooManyRedirects:
            raise SourceError(shown, f"too many redirects (more than {MAX_REDIRECTS})",
                              fix="check the URL") from None
        except _OtherScheme as exc:
            raise SourceError(shown, f"the server redirected it to {exc}, and only http(s) is "
                              "followed", fix="check the URL") from None
        except _BadLocation as exc:
            raise SourceError(shown, f"the server redirected it to {exc}, which is not a valid "
                              "URL", fix="check the URL") from None
        except httpx.TransportError as exc:
            if self.wall() >= limit.deadline:
                raise _DeadlinePassed(f"{type(exc).__name__} at the {limit.seconds:g} s fetch "
                                      "deadline (raise [limits] fetch_deadline in the config "
                                      "if the server is just slow)") from None
            raise _Transient(type(exc).__name__) from None
        logger.info("GET %s -> %d (%d bytes, %.0f ms)", shown, response.status_code, len(body),
                    (time.monotonic() - started) * 1000)
        return self._outcome(url, shown, response, body, cached)

    def _outcome(self, url: str, shown: str, response: httpx.Response, body: bytes,
                 cached: tuple[Entry, bytes] | None) -> Fetched:
        status = response.status_code
        if status == 304 and cached:
            problem = self._keep(shown, lambda: self.cache.revalidated(url, cached[0],
                                                                       response.headers))
            return Fetched(cached[1], cached[0].content_type, problem, from_cache=True)
        if status in RETRY_STATUSES:
            raise _Transient(f"HTTP {status} {response.reason_phrase}".strip(),
                             parse_retry_after(response.headers.get("retry-after")))
        if not response.is_success:
            failed = SourceError if status < 500 else SourceUnavailable
            raise failed(shown, f"the server answered HTTP {status} "
                         f"{response.reason_phrase}".rstrip(),
                         fix="check the URL" if status < 500 else "try again later")
        answer = _Answer(shown, response.headers, body, cached)
        if self._held is not None:
            self._held[url] = answer
            return Fetched(body, answer.headers.get("content-type"))
        return self._cache_answer(url, answer)

    def _cache_answer(self, url: str, answer: _Answer) -> Fetched:
        content_type = answer.headers.get("content-type")
        if looks_like_html_page(answer.body[:4000].decode("utf-8", "replace")):
            logger.info("%s: a web page, not cached (a cached listing stays)", answer.shown)
            return Fetched(answer.body, content_type)
        problem = self._keep(answer.shown, lambda: self.cache.store(url, answer.shown,
                                                                    answer.headers, answer.body))
        return Fetched(answer.body, content_type, problem)

    def _keep(self, shown: str, write: Callable[[], None]) -> str | None:
        """Write to the cache; a cache that cannot be written (a full or read-only
        $DIGEST_HOME) is a warning, as for the LLM answers: the body fetched is used."""
        try:
            write()
        except OSError as error:
            return describe(shown, f"fetched, but the HTTP cache {self.cache.folder} could not "
                            f"be written ({error.strerror or type(error).__name__})",
                            fix="free space or make it writable: until then each run "
                                "downloads it again")
        return None

    def _pause(self, attempt: int, retry_after: float | None) -> float:
        """The server's Retry-After in full (the deadline bounds it), else our backoff,
        at most ``max_wait_s``."""
        if retry_after is not None:
            return max(retry_after, 0.0)
        return min(self.backoff_s * 2 ** attempt, self.max_wait_s)


@dataclass(frozen=True)
class _Answer:
    """A 200 as it came, and the copy cached before it."""

    shown: str
    headers: Mapping[str, str]
    body: bytes
    cached: tuple[Entry, bytes] | None


def _when(entry: Entry) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.stored_at))


@dataclass(frozen=True)
class _Limit:
    """What one URL may take: until ``deadline`` (monotonic), and ``max_bytes``."""

    deadline: float
    seconds: float
    max_bytes: int


def amount(size: int) -> str:
    """'64 MiB', '1.5 MiB' or '2,048 bytes'."""
    return f"{size / 2**20:.3g} MiB" if size >= 2**20 else f"{size:,} bytes"


def _read_capped(response: httpx.Response, shown: str, limit: _Limit,
                 wall: Callable[[], float]) -> bytes:
    chunks, size = [], 0
    for chunk in _decoded(response.iter_raw(), response.headers.get("content-encoding", ""),
                          shown):
        size += len(chunk)
        if size > limit.max_bytes:
            raise SourceError(shown, f"the download passed {amount(limit.max_bytes)}, more "
                              "than a listing may be (or the run has left)",
                              fix="ask for fewer results, or raise [limits] max_source_mb "
                                  "(or max_input_mb) in the config")
        if wall() > limit.deadline:
            raise _DeadlinePassed(f"the download took longer than the {limit.seconds:g} s "
                                  f"fetch deadline (cut after {size:,} bytes; raise [limits] "
                                  "fetch_deadline in the config if the server is just slow)")
        chunks.append(chunk)
    return b"".join(chunks)


def _decoded(raw: Iterable[bytes], encoding: str, shown: str) -> Iterator[bytes]:
    """The body in pieces of at most ``_PIECE`` bytes, each coding undone, the last first."""
    pieces = iter(raw)
    for coding in reversed([c.strip().lower() for c in encoding.split(",")]):
        if coding in ("", "identity"):
            continue
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise SourceError(shown, f"the server sent it encoded as {coding!r}, which digest "
                              f"did not ask for (it asks for {ACCEPT_ENCODING})",
                              fix="check the URL, or download the listing and give the file")
        pieces = _Inflater(coding, shown).inflate(pieces)
    return pieces


class _Inflater:
    """One gzip or deflate layer, inflated ``_PIECE`` bytes at a time.

    Gzip members that follow one another are each inflated in turn (RFC 1952: a file may be
    several); bytes after a member that do not start another (NUL padding) are ignored, as
    gzip(1) does. A body that ends inside a member or a deflate stream was cut short."""

    def __init__(self, coding: str, shown: str) -> None:
        self.coding, self.shown = coding, shown
        self.raw_deflate = False  # "deflate" is zlib-wrapped by the RFC; some servers send it bare
        self.inflater = zlib.decompressobj(self._wbits())
        self.between = b""  # after a whole member: too few bytes yet to tell if one follows
        self.over = False  # what follows the last member is none: ignored

    def _wbits(self) -> int:
        if self.coding != "deflate":
            return 16 + zlib.MAX_WBITS
        return -zlib.MAX_WBITS if self.raw_deflate else zlib.MAX_WBITS

    def inflate(self, chunks: Iterable[bytes]) -> Iterator[bytes]:
        started = False
        for chunk in chunks:
            if not started and chunk and self.coding == "deflate":
                self._choose_deflate(chunk)
            started = started or bool(chunk)
            yield from self._pieces(chunk)
        yield from self._pieces(b"", last=True)  # what the last input still holds
        if started and not self.inflater.eof:  # a dropped connection, as httpx would say
            raise _Transient(f"the download was cut short: its {self.coding} data ended early")

    def _choose_deflate(self, first: bytes) -> None:
        try:
            zlib.decompressobj(zlib.MAX_WBITS).decompress(first, 1)
        except zlib.error:
            self.raw_deflate = True
            self.inflater = zlib.decompressobj(self._wbits())

    def _pieces(self, data: bytes, last: bool = False) -> Iterator[bytes]:
        data, self.between = self.between + data, b""
        while not self.over:
            if self.inflater.eof and not self._next_member(data, last):
                return
            try:
                piece = self.inflater.decompress(data, _PIECE)
            except zlib.error as error:
                raise SourceError(self.shown, f"its {self.coding} data is broken ({error})",
                                  fix="try again later, or check the URL") from None
            data = self.inflater.unused_data if self.inflater.eof else self.inflater.unconsumed_tail
            if piece:
                yield piece
            elif not data and not self.inflater.eof:
                return

    def _next_member(self, data: bytes, last: bool) -> bool:
        """After a whole member: True when ``data`` starts another (now being inflated)."""
        if self.coding != "deflate" and len(data) < len(_GZIP_MAGIC) and not last:
            self.between = data  # the next chunk tells
            return False
        if self.coding == "deflate" or not data.startswith(_GZIP_MAGIC):
            self.over = bool(data)
            return False
        self.inflater = zlib.decompressobj(self._wbits())
        return True
