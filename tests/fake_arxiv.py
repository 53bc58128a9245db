"""A fake arXiv API on 127.0.0.1 for the --resolve-ids tests: never the real host.

``mode`` picks the answer: "match" (the entry whose key was asked, from ``papers``),
"near-miss" (a different paper with a similar title), "none" (an empty feed), "503",
"slow" (answers after ``slow_s``), "garbage" (not a feed), and 200 answers that are no arXiv
API feed: "empty" (no body), "rss" (a maintenance notice as RSS), "xml" (an ``<error>``
document), "html" (a page without a doctype), "arxiv-error" (the API's own error entry).
``requests`` counts what came in. The feed has the shape export.arxiv.org gives (its
opensearch counts; tests/fixtures/ingest/arxiv_api.atom is a whole one).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit
from xml.sax.saxutils import escape

_FEED = ('<?xml version="1.0" encoding="UTF-8"?>\n'
         '<feed xmlns="http://www.w3.org/2005/Atom" '
         'xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/">'
         '<id>https://arxiv.org/api/fake</id><title>arXiv Query: search_query=ti:...</title>'
         '<opensearch:totalResults>{total}</opensearch:totalResults>'
         '<opensearch:startIndex>0</opensearch:startIndex>{entries}</feed>')
_NOT_A_FEED = {
    "empty": b"",
    "rss": b'<?xml version="1.0"?><rss version="2.0"><channel><title>arXiv is down for '
           b"maintenance</title></channel></rss>",
    "xml": b"<error>Service temporarily unavailable</error>",
    "html": b"<html><body><h1>Maintenance</h1>Back soon.</body></html>",
    "arxiv-error": _FEED.format(total=1, entries=(
        "<entry><id>http://arxiv.org/api/errors#incorrect_query</id><title>Error</title>"
        "<summary>malformed query</summary></entry>")).encode(),
}
_ENTRY = ("<entry><id>http://arxiv.org/abs/{id}v2</id><title>{title}</title>"
          "<summary>An abstract.</summary><link href=\"https://evil.example/{id}\" "
          "rel=\"alternate\" type=\"text/html\"/></entry>")


@dataclass
class FakeArxiv:
    papers: dict[str, tuple[str, str]] = field(default_factory=dict)  # key -> (title, id)
    mode: str = "match"
    slow_s: float = 2.0
    requests: list[str] = field(default_factory=list)
    base_url: str = ""

    def answer(self, query: str) -> tuple[int, bytes]:
        asked = query.removeprefix("ti:").strip('"')
        if self.mode == "503":
            return 503, b"busy"
        if self.mode == "garbage":
            return 200, b"\x00\xffnot a feed <<<"
        if self.mode in _NOT_A_FEED:
            return 200, _NOT_A_FEED[self.mode]
        if self.mode == "slow":
            time.sleep(self.slow_s)
        entries = ""
        if self.mode in ("match", "slow") and asked in self.papers:
            title, arxiv_id = self.papers[asked]
            entries = _ENTRY.format(id=arxiv_id, title=escape(title))
        elif self.mode == "near-miss":
            entries = _ENTRY.format(id="2411.99999", title=escape(asked + " revisited again"))
        return 200, _FEED.format(total=int(bool(entries)), entries=entries).encode()


@contextmanager
def fake_arxiv(fake: FakeArxiv) -> Iterator[FakeArxiv]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            parts = urlsplit(self.path)
            query = parse_qs(parts.query).get("search_query", [""])[0]
            fake.requests.append(query)
            status, body = fake.answer(query)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/atom+xml")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up on a slow answer

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    fake.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
