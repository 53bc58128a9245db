"""Fetching URLs against a real HTTP server on 127.0.0.1: retries, cache, etiquette."""

from __future__ import annotations

import gzip
import logging
import socket
import time
import tracemalloc
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.errors import SourceError, SourceUnavailable
from digest.ingest import load_sources
from digest.ingest.fetch import USER_AGENT, Fetcher, RateLimiter, _Inflater
from digest.redaction import url_for_logs
from tests.conftest import remount_read_only, served

FIXTURES = Path(__file__).parent / "fixtures" / "ingest"
FEED = (FIXTURES / "arxiv_listing.rss").read_bytes()


@dataclass
class Reply:
    status: int = 200
    body: bytes = FEED
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    length: bool = True  # send Content-Length (else the body ends when the connection does)


@dataclass
class Server:
    """Serves queued replies per path (the last one repeats) and records the requests."""

    url: str
    replies: dict[str, list[Reply]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)

    def queue(self, path: str, *replies: Reply) -> str:
        self.replies[path] = list(replies)
        return self.url + path

    def next_reply(self, path: str) -> Reply:
        queued = self.replies.get(path) or [Reply(404, b"not here")]
        return queued.pop(0) if len(queued) > 1 else queued[0]


@pytest.fixture
def server() -> Iterator[Server]:
    state = Server("")

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            state.requests.append((self.path, dict(self.headers)))
            reply = state.next_reply(self.path)
            if reply.delay_s:
                time.sleep(reply.delay_s)
            etag = reply.headers.get("ETag")
            modified = reply.headers.get("Last-Modified")
            if etag and self.headers.get("If-None-Match") == etag:
                reply = Reply(304, b"", {"ETag": etag})
            elif modified and self.headers.get("If-Modified-Since") == modified:
                reply = Reply(304, b"", {})
            try:
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                if reply.length:
                    self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout test)

        def log_message(self, *args: object) -> None:
            pass

    with served(Handler) as state.url:
        yield state


class FakeTime:
    """A clock that only moves when someone sleeps."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


@pytest.fixture
def fake_time() -> FakeTime:
    return FakeTime()


def fetcher(fake: FakeTime, tmp_path: Path, **kwargs) -> Fetcher:
    return Fetcher(cache_dir=tmp_path / "cache", clock=fake.clock, sleep=fake.sleep,
                   now=fake.clock, **kwargs)


def test_a_url_is_fetched_with_our_user_agent_and_parsed(server, tmp_path, fake_time):
    url = server.queue("/rss/cs.CL", Reply(headers={"Content-Type": "application/rss+xml"}))
    with fetcher(fake_time, tmp_path) as client:
        result = load_sources([url], fetcher=client)
    assert result.errors == [] and len(result.records) == 2
    assert result.records[0].sighting.source == url
    assert server.requests[0][1]["User-Agent"] == USER_AGENT


def test_retries_with_backoff_then_succeeds(server, tmp_path, fake_time):
    url = server.queue("/flaky", Reply(503, b"busy"), Reply(500, b"oops"), Reply())
    with fetcher(fake_time, tmp_path, backoff_s=1.0) as client:
        fetched = client.fetch(url)
    assert fetched.data == FEED
    assert fake_time.sleeps == [1.0, 2.0]
    assert len(server.requests) == 3


def test_retry_after_is_honoured_in_full_within_the_fetch_deadline(server, tmp_path, fake_time):
    url = server.queue("/limited", Reply(429, b"", {"Retry-After": "7"}),
                       Reply(429, b"", {"Retry-After": "90"}), Reply())
    with fetcher(fake_time, tmp_path, max_wait_s=60, deadline_s=120) as client:
        assert client.fetch(url).data == FEED
    assert fake_time.sleeps == [7.0, 90.0]  # max_wait_s caps our own backoff, not the server's


def test_a_retry_after_past_the_fetch_deadline_fails_at_once_saying_so(server, tmp_path,
                                                                       fake_time):
    """429 with "Retry-After: 99999" was asked again after 60 s (capped at max_wait_s, not
    what the server asked) and failed at 61 s (a probe, this stop)."""
    url = server.queue("/limited", Reply(429, b"", {"Retry-After": "99999"}))
    with fetcher(fake_time, tmp_path, deadline_s=120) as client, \
            pytest.raises(SourceError) as caught:
        client.fetch(url)
    assert "HTTP 429" in caught.value.problem and "asked to wait 99,999 s" in caught.value.problem
    assert "120 s fetch deadline" in caught.value.problem and caught.value.fix == "try again later"
    assert len(server.requests) == 1 and fake_time.sleeps == []


def test_gives_up_after_the_retries_with_a_clear_error(server, tmp_path, fake_time):
    url = server.queue("/down", Reply(502, b"bad gateway"))
    with fetcher(fake_time, tmp_path, retries=2) as client:
        result = load_sources([url, str(FIXTURES / "papers.tsv")], fetcher=client)
    (error,) = result.errors
    assert error.source == url and "HTTP 502" in error.problem and "after 3 tries" in error.problem
    assert "try again later" in error.fix
    assert len(result.records) == 1  # the other source was still read


def test_a_404_is_not_retried(server, tmp_path, fake_time):
    url = server.url + "/missing"
    with fetcher(fake_time, tmp_path) as client, pytest.raises(SourceError, match="HTTP 404"):
        client.fetch(url)
    assert len(server.requests) == 1 and fake_time.sleeps == []


def test_a_read_timeout_is_retried(server, tmp_path, fake_time):
    url = server.queue("/slow", Reply(delay_s=0.6), Reply())
    with fetcher(fake_time, tmp_path, timeout=0.2) as client:
        assert client.fetch(url).data == FEED
    assert len(fake_time.sleeps) == 1


def test_conditional_get_uses_the_cache(server, tmp_path, fake_time):
    url = server.queue("/etag", Reply(headers={"ETag": '"v1"', "Content-Type": "application/xml"}))
    with fetcher(fake_time, tmp_path) as client:
        first = client.fetch(url)
    with fetcher(fake_time, tmp_path) as client:  # next week's run: a new process
        second = client.fetch(url)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert second.data == FEED and second.content_type == "application/xml"
    assert "If-None-Match" not in server.requests[0][1]
    assert server.requests[1][1]["If-None-Match"] == '"v1"'


def test_a_fresh_copy_is_not_requested_again(server, tmp_path, fake_time):
    url = server.queue("/fresh", Reply(headers={"Cache-Control": "max-age=600"}))
    with fetcher(fake_time, tmp_path) as client:
        client.fetch(url)
        assert client.fetch(url).from_cache
        assert len(server.requests) == 1
        fake_time.now += 601
        client.fetch(url)
        assert len(server.requests) == 2


def test_no_store_is_not_cached(server, tmp_path, fake_time):
    url = server.queue("/private", Reply(headers={"Cache-Control": "no-store", "ETag": '"x"'}))
    with fetcher(fake_time, tmp_path) as client:
        client.fetch(url)
        client.fetch(url)
    assert "If-None-Match" not in server.requests[1][1]
    assert not list((tmp_path / "cache").glob("*.body"))


def test_a_stale_copy_is_used_when_the_server_is_down(server, tmp_path, fake_time):
    url = server.queue("/sometimes", Reply(headers={"ETag": '"v1"'}), Reply(503, b"down"))
    with fetcher(fake_time, tmp_path, retries=1) as client:
        client.fetch(url)
        result = load_sources([url], fetcher=client)
    assert result.errors == [] and len(result.records) == 2
    (warning,) = result.warnings
    assert url in warning and "used the copy cached" in warning


def test_the_cache_lives_in_the_digest_home_and_keeps_no_secrets(server, isolated_environment):
    url = server.queue("/feed", Reply(headers={"ETag": '"e"'}))
    secret_url = url + "?api_key=sekrit&cat=cs.CL"
    server.replies["/feed?api_key=sekrit&cat=cs.CL"] = [Reply(headers={"ETag": '"e"'})]
    result = load_sources([secret_url])
    assert result.errors == []
    cache = isolated_environment / "http-cache"
    texts = [p.read_text(encoding="utf-8") for p in cache.glob("*.json")]
    assert len(texts) == 1 and "sekrit" not in texts[0] and "cat=cs.CL" in texts[0]
    assert all("sekrit" not in r.sighting.source for r in result.records)


def test_the_arxiv_etiquette_spaces_requests_to_the_same_host(server, tmp_path, fake_time):
    urls = [server.queue(f"/q{i}", Reply()) for i in range(3)]
    with fetcher(fake_time, tmp_path, polite={"127.0.0.1": 3.0}) as client:
        for url in urls:
            client.fetch(url)
    assert fake_time.sleeps == [3.0, 3.0]


def test_the_rate_limiter_with_a_fake_clock(fake_time):
    limiter = RateLimiter({"arxiv.org": 3.0}, clock=fake_time.clock, sleep=fake_time.sleep)
    assert limiter.wait("export.arxiv.org") == 0.0
    fake_time.now += 1.0
    assert limiter.wait("export.arxiv.org") == pytest.approx(2.0)
    assert limiter.wait("export.arxiv.org") == pytest.approx(3.0)
    fake_time.now += 10.0
    assert limiter.wait("export.arxiv.org") == 0.0
    assert limiter.wait("rss.arxiv.org") == 0.0  # each host has its own turn
    assert limiter.wait("huggingface.co") == 0.0 and limiter.wait("huggingface.co") == 0.0
    assert limiter.wait("notarxiv.org") == 0.0 and limiter.wait("notarxiv.org") == 0.0


def test_redact_hides_credentials_and_keys():
    assert url_for_logs("https://user:pw@example.org/a?token=abc&q=1") == \
        "https://example.org/a?token=***&q=1"
    assert url_for_logs("https://export.arxiv.org/api/query?search_query=cat:cs.CL") == \
        "https://export.arxiv.org/api/query?search_query=cat:cs.CL"


@pytest.mark.parametrize(("url", "shown"), [
    ("http://127.0.0.1:8080/@lab/feed.xml", "http://127.0.0.1:8080/***@lab/feed.xml"),
    ("https://mastodon.social/@lab.rss", "https://mastodon.social/@lab.rss"),
    ("https://mastodon.social/@lab.rss?token=abc", "https://mastodon.social/@lab.rss?token=***"),
    ("https://export.arxiv.org/api/query?q=au:someone@example.org",
     "https://export.arxiv.org/api/query?q=au:someone%40example.org"),
    ("http://127.0.0.1:8080/nothere?q=au:someone@example.org",
     "http://127.0.0.1:8080/***@example.org"),
    ("http://bob:s3cret@127.0.0.1:8080/@lab/feed.xml", "http://127.0.0.1:8080/***@lab/feed.xml"),
    ("http://bob:s3cret@example.org/@lab.rss", "http://example.org/***@lab.rss"),
    ("http://bob:pa/ss@127.0.0.1:8080/feed.xml", "http://127.0.0.1:8080/feed.xml"),
    ("http://bob:12/ss@127.0.0.1:8080/feed.xml", "http://bob:12/***@127.0.0.1:8080/feed.xml"),
    ("http://[::1]:8080/@lab/feed.xml", "http://[::1]:8080/***@lab/feed.xml"),
    ("http://[::1]/@lab/feed.xml", "http://[::1]/@lab/feed.xml"),
])
def test_a_url_is_shown_with_the_host_httpx_connects_to(url, shown):
    """An "@" in the path or query made the part before it read as user:password, so
    http://127.0.0.1:PORT/@lab/feed.xml was logged as http://lab/feed.xml (a probe, stop 32).
    httpx ends the host at the first "/", "?" or "#"; where the text after the port could
    still be the rest of a password written with a "/" in it, it is masked."""
    assert url_for_logs(url) == shown


def test_a_url_httpx_cannot_read_is_an_error_naming_the_fix_and_no_part_of_the_password(
        tmp_path, fake_time):
    """A "/" in a password made httpx refuse the URL, which was reported as "unexpected
    InvalidURL (Invalid port: 'pa') (please report this ... as a digest bug)": a piece of
    the password, and no fix (a probe, stop 32)."""
    with fetcher(fake_time, tmp_path) as client:
        result = load_sources(["http://bob:pa/ss55word@127.0.0.1:9/feed"], fetcher=client)
    (error,) = result.errors
    assert error.source == "http://127.0.0.1:9/feed" and "not a valid URL" in error.problem
    assert "%2F" in error.fix and "bug" not in str(error)
    assert "'pa'" not in str(error) and "ss55word" not in str(error) and fake_time.sleeps == []


_URL_TEXT = "abcdef0123456789-._~!$&'()*+,;=%/?#@:"


@settings(max_examples=400, deadline=None)
@given(scheme=st.sampled_from(["http", "https"]),
       user=st.one_of(st.none(), st.text("bobalice", min_size=1, max_size=5)),
       password=st.tuples(st.text(_URL_TEXT, max_size=6), st.text(_URL_TEXT, max_size=6)),
       host=st.sampled_from(["127.0.0.1", "example.org", "lab", "[::1]", "[2001:db8::5]"]),
       port=st.one_of(st.none(), st.integers(1, 65535)),
       path=st.text(_URL_TEXT.replace("?", "").replace("#", ""), max_size=12),
       query=st.one_of(st.none(), st.text(_URL_TEXT.replace("#", ""), max_size=12)),
       fragment=st.one_of(st.none(), st.text(_URL_TEXT, max_size=8)))
def test_a_shown_url_never_holds_the_password_and_names_the_host_httpx_connects_to(
        scheme, user, password, host, port, path, query, fragment):
    """The property behind the cases above, over passwords holding / ? # @ % and "@" in the
    path, query or fragment (a probe, stop 32)."""
    import httpx

    secret = f"{password[0]}ZQ{password[1]}"  # "ZQ" is nowhere else: the password alone
    userinfo = f"{user}:{secret}@" if user is not None else ""
    url = (f"{scheme}://{userinfo}{host}{f':{port}' if port else ''}/{path}"
           f"{'?' + query if query is not None else ''}"
           f"{'#' + fragment if fragment is not None else ''}")
    for shown in (url_for_logs(url), url_for_logs(url, keep_user=True)):
        assert secret not in shown, shown
        try:
            connects = httpx.URL(url)
        except httpx.InvalidURL:
            continue  # httpx refuses it: no host to name
        assert (httpx.URL(shown).host, httpx.URL(shown).port) == (connects.host, connects.port)


def test_content_type_charset_is_used_for_decoding(server, tmp_path, fake_time):
    body = ('[{"title": "Caf\u00e9 Paper", "abstract": "A na\u00efve abstract, sent as '
            'Latin-1."}]').encode("latin-1")
    url = server.queue("/api", Reply(body=body,
                                     headers={"Content-Type": "application/json; charset=latin-1"}))
    with fetcher(fake_time, tmp_path) as client:
        result = load_sources([url], fetcher=client)
    assert result.records[0].title == "Café Paper"
    assert "as the source declares" in result.warnings[0]


def test_conditional_get_with_last_modified(server, tmp_path, fake_time):
    stamp = "Thu, 12 Nov 2026 17:00:00 GMT"
    url = server.queue("/modified", Reply(headers={"Last-Modified": stamp}))
    with fetcher(fake_time, tmp_path) as client:
        assert not client.fetch(url).from_cache
        again = client.fetch(url)
    assert again.from_cache and again.data == FEED
    assert server.requests[1][1]["If-Modified-Since"] == stamp
    assert "If-None-Match" not in server.requests[1][1]


def test_a_refused_connection_is_retried_then_reported(tmp_path, fake_time):
    with socket.socket() as probe:  # a port that was free a moment ago: nothing listens
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/feed"
    with fetcher(fake_time, tmp_path, retries=2, backoff_s=0.5) as client:
        result = load_sources([url], fetcher=client)
    (error,) = result.errors
    assert "ConnectError" in error.problem and "after 3 tries" in error.problem
    assert fake_time.sleeps == [0.5, 1.0]


def test_a_cache_that_cannot_be_written_is_a_warning_and_the_download_is_used(
        server, small_disk, fake_time):
    """A read-only (or full) $DIGEST_HOME turned a downloaded listing into "could not be
    read: unexpected OSError ([Errno 30] Read-only file system: '.../http-cache/...') (please
    report this ... as a digest bug)": its papers were left out (a probe, this stop). The
    cache is only a cache: the body fetched is used, and a warning names the cache folder."""
    remount_read_only(small_disk)
    secret = server.queue("/feed", Reply(headers={"ETag": '"v1"'})) + "?api_key=sekrit"
    server.replies["/feed?api_key=sekrit"] = [Reply(headers={"ETag": '"v1"'})]
    with Fetcher(cache_dir=small_disk / "http-cache", clock=fake_time.clock,
                 sleep=fake_time.sleep, now=fake_time.clock) as client:
        result = load_sources([secret], fetcher=client)
    assert result.errors == [] and len(result.records) == 2
    (warning,) = result.warnings
    assert str(small_disk / "http-cache") in warning and "Read-only" in warning
    assert "sekrit" not in warning and "bug" not in warning


def test_a_revalidated_copy_whose_cache_entry_cannot_be_renewed_is_still_used(
        server, small_disk, fake_time):
    """The same for a 304: the cached copy is good, renewing its entry failed."""
    url = server.queue("/etag", Reply(headers={"ETag": '"v1"'}))
    with Fetcher(cache_dir=small_disk, clock=fake_time.clock, sleep=fake_time.sleep,
                 now=fake_time.clock) as client:
        client.fetch(url)
        remount_read_only(small_disk)
        result = load_sources([url], fetcher=client)
    assert result.errors == [] and len(result.records) == 2
    (warning,) = result.warnings
    assert str(small_disk) in warning and "Read-only" in warning


def test_a_digest_of_one_url_with_a_read_only_digest_home_is_made_with_a_warning(
        server, small_disk, monkeypatch):
    """With only a URL source and a read-only $DIGEST_HOME the run exited 1 (nothing read),
    not even 75 (a probe, this stop): now the downloaded papers make the issue."""
    from tests.opsrun import cli

    monkeypatch.setenv("DIGEST_HOME", str(small_disk))
    remount_read_only(small_disk)
    url = server.queue("/rss/cs.CL", Reply(headers={"Content-Type": "application/rss+xml"}))
    result = cli("summarize", url, "--backend", "offline", "--week", "2026-W47")
    assert result.returncode == 0, result.stderr
    assert "http-cache" in result.stderr and "could not be written" in result.stderr
    assert "Error" not in result.stderr and result.stdout.count("\n- **") == 2


MAINTENANCE = b"<!DOCTYPE html>\n<html><body><h1>Down for maintenance</h1></body></html>\n"


def test_a_maintenance_page_answered_with_200_never_replaces_the_cached_listing(server):
    """A maintenance page answered with 200 replaced the good cached copy: when the server
    later answered 500, the run exited 1 blaming the HTML page instead of using the listing
    cached before it (a probe). Now the page is never cached: the run that gets it uses the
    copy cached before, with a warning (stop 32; with none it is an error, exit 1), and a 500
    then uses the good copy (exit 0) or, with none, is the temporary failure it is (exit 75)."""
    from tests.opsrun import cli

    atom = (FIXTURES / "arxiv_listing.atom").read_bytes()
    page = Reply(200, MAINTENANCE, {"Content-Type": "text/html; charset=utf-8"})
    down = Reply(500, b"oops", {"Retry-After": "0"})
    flip = server.queue("/flip", Reply(200, atom, {"Content-Type": "application/atom+xml"}),
                        page, down)
    never = server.queue("/never", page, down)

    def run(url: str) -> tuple[int, str]:
        result = cli("summarize", url, "--backend", "offline", "--week", "2026-W47")
        return result.returncode, result.stderr

    assert run(flip)[0] == 0
    code, stderr = run(flip)
    assert code == 0 and "HTML web page" in stderr and "used the copy cached" in stderr
    code, stderr = run(flip)
    assert code == 0, stderr
    assert "could not fetch it (HTTP 500" in stderr and "used the copy cached" in stderr
    assert run(never)[0] == 1
    code, stderr = run(never)
    assert code == 75 and "HTML" not in stderr and "HTTP 500" in stderr


@pytest.mark.parametrize(("body", "named"), [
    (b"", "the source is empty"),
    (b'{"error":"Rate limit exceeded"}', "Rate limit exceeded"),
    (b"Service notice: the API is down for maintenance until 12:00 UTC.\n", "Service notice"),
])
def test_a_200_that_is_no_listing_never_replaces_the_cached_listing(server, body, named):
    """An empty body, a JSON error or a plain-text notice answered with 200 replaced the good
    cached copy: at the next outage (503) the run failed with exit 1 "the source is empty" and
    never said the server was down (a probe, stop 32). A 200 now replaces the cached copy only
    once read as a listing: the run that got it uses the copy cached before, with a warning
    naming what the server sent, and so does the outage after it."""
    from tests.opsrun import cli

    atom = (FIXTURES / "arxiv_listing.atom").read_bytes()
    url = server.queue("/api", Reply(200, atom, {"Content-Type": "application/atom+xml"}),
                       Reply(200, body, {"Content-Type": "text/plain"}),
                       Reply(503, b"down", {"Retry-After": "0"}))

    def run() -> tuple[int, str, str]:
        result = cli("summarize", url, "--backend", "offline", "--week", "2026-W47")
        return result.returncode, result.stderr, result.stdout

    assert run()[0] == 0
    code, stderr, stdout = run()
    assert code == 0 and "the server answered HTTP 200 with no listing" in stderr, stderr
    assert named in stderr and "used the copy cached" in stderr and "Error" not in stderr
    assert "1 record read" in stdout
    code, stderr, _ = run()
    assert code == 0, stderr
    assert "could not fetch it (HTTP 503" in stderr and "used the copy cached" in stderr


def test_a_200_that_is_no_listing_without_a_cached_copy_is_the_error_it_was(
        server, tmp_path, fake_time):
    url = server.queue("/api", Reply(200, b'{"error":"Rate limit exceeded"}'))
    with fetcher(fake_time, tmp_path) as client:
        result = load_sources([url], fetcher=client)
    assert len(result.errors) == 1 and result.records == []
    assert not list((tmp_path / "cache").glob("*.body"))


def _packer(coding: str) -> zlib._Compress:
    return zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS + (0 if coding == "deflate" else 16))


def _encoded(chunks: Iterator[bytes], encoding: str) -> bytes:
    """The chunks with each coding of ``encoding`` applied in turn, the first piece by piece
    (64 MiB of zeros never sit in memory whole)."""
    codings = [c for c in encoding.split(", ") if c != "identity"]
    first = _packer(codings[0])
    data = b"".join(first.compress(chunk) for chunk in chunks) + first.flush()
    for coding in codings[1:]:
        again = _packer(coding)
        data = again.compress(data) + again.flush()
    return data


@pytest.mark.parametrize("encoding", ["gzip, gzip", "gzip", "deflate, gzip"])
def test_a_compression_bomb_is_cut_without_holding_more_than_the_cap(
        server, tmp_path, fake_time, encoding):
    """6,780 bytes sent as "Content-Encoding: gzip, gzip" (4 GiB of zeros) took a run to 8.5
    GB of RSS before "the download passed 64 MiB": httpx decoded each chunk in full before its
    size was checked (a probe, this stop). Here 64 MiB of zeros against a 1 MiB cap."""
    body = _encoded((bytes(1 << 20) for _ in range(64)), encoding)
    url = server.queue("/bomb", Reply(body=body, headers={"Content-Encoding": encoding}))
    tracemalloc.start()
    try:
        with fetcher(fake_time, tmp_path, max_bytes=1 << 20) as client, \
                pytest.raises(SourceError, match="the download passed 1 MiB"):
            client.fetch(url)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"{peak / 2**20:.0f} MiB held for a 1 MiB cap"


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip, gzip", "deflate", "identity, gzip"])
def test_a_compressed_listing_is_decoded_layer_by_layer(server, tmp_path, fake_time, encoding):
    url = server.queue("/packed", Reply(body=_encoded(iter([FEED]), encoding),
                                        headers={"Content-Encoding": encoding}))
    with fetcher(fake_time, tmp_path) as client:
        assert client.fetch(url).data == FEED
    assert server.requests[0][1]["Accept-Encoding"] == "gzip, deflate"


def test_a_bare_deflate_stream_is_read_too(server, tmp_path, fake_time):
    bare = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    url = server.queue("/bare", Reply(body=bare.compress(FEED) + bare.flush(),
                                      headers={"Content-Encoding": "deflate"}))
    with fetcher(fake_time, tmp_path) as client:
        assert client.fetch(url).data == FEED


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_compressed_download_cut_short_is_a_temporary_error_and_not_cached(
        server, tmp_path, fake_time, coding):
    """A 200 with "Content-Encoding: gzip", an ETag, no Content-Length and half of a gzipped
    listing was taken as whole: 44 of 88 papers read with only a misleading warning, and the
    cut copy cached and reused on the next run as a 304 (a probe, this stop). Now it is
    "cut short", a temporary error (tried again, as a dropped connection is), never cached."""
    body = _encoded(iter([FEED]), coding)
    cut = Reply(body=body[:len(body) // 2], length=False,
                headers={"Content-Encoding": coding, "ETag": '"v1"'})
    url = server.queue("/cut", cut)
    with fetcher(fake_time, tmp_path, retries=1) as client, \
            pytest.raises(SourceUnavailable) as caught:
        client.fetch(url)
    assert f"the download was cut short: its {coding} data ended early" in caught.value.problem
    assert caught.value.exit_code == 75 and caught.value.fix == "try again later"
    assert len(server.requests) == 2
    server.queue("/cut", Reply(headers={"ETag": '"v1"'}))
    with fetcher(fake_time, tmp_path) as client:
        fetched = client.fetch(url)
    assert fetched.data == FEED and not fetched.from_cache
    assert "If-None-Match" not in server.requests[-1][1]


def test_gzip_members_one_after_another_are_all_read(server, tmp_path, fake_time):
    """Two gzip members back to back (valid by RFC 1952) gave the first member's records
    only, silently (a probe, this stop)."""
    middle = FEED.index(b"<item>", FEED.index(b"<item>") + 1)
    body = gzip.compress(FEED[:middle]) + gzip.compress(FEED[middle:])
    url = server.queue("/members", Reply(body=body, headers={"Content-Encoding": "gzip"}))
    with fetcher(fake_time, tmp_path) as client:
        assert client.fetch(url).data == FEED
        result = load_sources([url], fetcher=client)
    assert result.errors == [] and len(result.records) == 2


def test_gzip_members_are_read_a_byte_at_a_time_and_padding_after_them_ignored():
    members = gzip.compress(b"one ") + gzip.compress(b"") + gzip.compress(b"two")
    for body in (members, members + bytes(7)):
        pieces = _Inflater("gzip", "u").inflate(body[i:i + 1] for i in range(len(body)))
        assert b"".join(pieces) == b"one two"


def test_a_gzip_member_cut_short_after_a_whole_one_is_an_error():
    body = gzip.compress(b"one ") + gzip.compress(b"two" * 100)[:-5]
    with pytest.raises(Exception, match="cut short: its gzip data ended early"):
        b"".join(_Inflater("gzip", "u").inflate(iter([body])))


def test_an_encoding_not_asked_for_is_refused_naming_it(server, tmp_path, fake_time):
    url = server.queue("/brotli", Reply(body=b"\x0b\x02\x80{}\x03",
                                        headers={"Content-Encoding": "br"}))
    with fetcher(fake_time, tmp_path) as client, \
            pytest.raises(SourceError, match="encoded as 'br'"):
        client.fetch(url)


@pytest.mark.parametrize("target", ["file:///etc/passwd", "ftp://127.0.0.1/feed.xml"])
def test_a_redirect_to_another_scheme_is_a_final_error_naming_where_it_went(
        server, tmp_path, fake_time, target):
    """A redirect to file:///etc/passwd was tried 4 times (8.5 s) and reported "could not
    fetch it: UnsupportedProtocol, after 4 tries (try again later)" (a probe, this stop)."""
    url = server.queue("/moved", Reply(302, b"", {"Location": target}))
    with fetcher(fake_time, tmp_path, retries=3) as client, \
            pytest.raises(SourceError) as caught:
        client.fetch(url)
    assert caught.value.source == url and target in caught.value.problem
    assert "only http(s) is followed" in caught.value.problem and "later" not in str(caught.value)
    assert len(server.requests) == 1 and fake_time.sleeps == []


@pytest.mark.parametrize("target", ["http://[::1", "http://bob:pa/ss55word@[::1"])
def test_a_redirect_to_a_malformed_url_is_a_final_error_naming_it(server, tmp_path, fake_time,
                                                                  target):
    """A 302 to "http://[::1" was reported as "could not fetch it: RemoteProtocolError, after 4
    tries (try again later)", exit 75 after ~8 s (a probe, stop 32): it is the server's
    answer that is wrong, for good."""
    url = server.queue("/moved", Reply(302, b"", {"Location": target}))
    with fetcher(fake_time, tmp_path, retries=3) as client, \
            pytest.raises(SourceError) as caught:
        client.fetch(url)
    assert type(caught.value) is SourceError and caught.value.source == url
    assert "not a valid URL" in caught.value.problem and "[::1" in caught.value.problem
    assert "ss55word" not in str(caught.value) and caught.value.fix == "check the URL"
    assert len(server.requests) == 1 and fake_time.sleeps == []


@pytest.fixture
def other_host() -> Iterator[str]:
    """A server on 127.0.0.2 (loopback too: another host to the fetcher) serving FEED."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Length", str(len(FEED)))
            self.end_headers()
            self.wfile.write(FEED)

        def log_message(self, *args: object) -> None:
            pass

    with served(Handler, "127.0.0.2") as url:
        yield url


def test_a_redirect_to_another_host_is_followed_and_logged_naming_both(
        server, tmp_path, fake_time, other_host, caplog):
    """Policy: http(s) redirects are followed, at most 5, to any host (feeds move; curl -L does
    the same), and a move to another host is logged at INFO naming both."""
    url = server.queue("/redir-other", Reply(301, b"", {"Location": other_host + "/feed"}))
    with fetcher(fake_time, tmp_path) as client, caplog.at_level(logging.INFO, "digest"):
        assert client.fetch(url).data == FEED
    [moved] = [r for r in caplog.records if "redirected" in r.getMessage()]
    assert moved.levelno == logging.INFO
    assert "from 127.0.0.1 to another host, 127.0.0.2" in moved.getMessage()


def test_five_redirects_are_followed_and_a_sixth_is_not(server, tmp_path, fake_time):
    for hop in range(6):
        server.queue(f"/hop{hop}", Reply(302, b"", {"Location": f"/hop{hop + 1}"}))
    server.queue("/hop6", Reply())
    with fetcher(fake_time, tmp_path) as client:
        assert client.fetch(server.url + "/hop1").data == FEED
        with pytest.raises(SourceError, match="too many redirects"):
            client.fetch(server.url + "/hop0")


@pytest.mark.parametrize("command", ["summarize", "dedup", "newsletter", "ingest"])
def test_a_password_or_key_in_a_url_that_read_nothing_is_masked_in_the_error_and_report(
        server, tmp_path, command):
    """The per-source line was masked, but the final "Error: http://bob:PASSW0RDXYZ@...:
    nothing read: ..." was not, and it landed in the run report's errors: nothing_read joined
    the raw source names (a probe, stop 32); digest ingest's "no paper found" did the same."""
    from tests.opsrun import cli

    server.queue("/503", Reply(503, b"down", {"Retry-After": "0"}))
    port = server.url.rsplit(":", 1)[1]
    urls = [f"http://bob:PASSW0RDXYZ@127.0.0.1:{port}/nothere",
            server.url + "/503?api_key=SECRETKEY123"]
    extra = {"summarize": ["--backend", "offline"], "dedup": [],
             "newsletter": ["--backend", "offline", "--state", str(tmp_path / "s.sqlite"),
                            "--out", str(tmp_path / "out")],
             "ingest": ["--state", str(tmp_path / "s.sqlite")]}[command]
    for url in urls:
        report = tmp_path / f"{command}-{len(url)}.json"
        result = cli(command, url, "--report", str(report), *extra)
        assert result.returncode in (1, 75), result.stderr
        assert f"Error: http://127.0.0.1:{port}/" in result.stderr, result.stderr
        shown = result.stderr + report.read_text(encoding="utf-8")
        assert "PASSW0RDXYZ" not in shown and "SECRETKEY123" not in shown, shown
        assert "127.0.0.1" in shown


def test_a_url_past_the_runs_input_cap_is_refused_without_its_password(server, tmp_path,
                                                                       fake_time):
    """The same leak, where a URL comes after the sources that used up the run's input."""
    from digest.ingest import IngestLimits

    port = server.url.rsplit(":", 1)[1]
    url = f"http://bob:PASSW0RDXYZ@127.0.0.1:{port}/feed"
    limits = IngestLimits(max_input_bytes=(FIXTURES / "papers.tsv").stat().st_size)
    with fetcher(fake_time, tmp_path) as client:
        result = load_sources([str(FIXTURES / "papers.tsv"), url], fetcher=client, limits=limits)
    (error,) = result.errors
    assert "used up the run's" in str(error) and "PASSW0RDXYZ" not in str(error)
    assert error.source == f"http://127.0.0.1:{port}/feed" and server.requests == []
