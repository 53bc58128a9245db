"""A recording proxy on 127.0.0.1 in front of a real local model server.

It forwards every request as is and records what digest sent and what the server said:
the response_format (type, whether a schema rode along), the HTTP status and the seconds it
took. ``strip_schema`` removes the schema from json_object requests on the way: the same
run "without the schema", for measuring what it is worth.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit


@dataclass(frozen=True)
class Exchange:
    format: str | None  # response_format type
    schema: bool  # a schema was sent (json_schema, or json_object's "schema")
    status: int  # 0: the client went away before the answer
    seconds: float


class RecordingProxy:
    def __init__(self, upstream: str, *, strip_schema: bool = False) -> None:
        parts = urlsplit(upstream)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.strip_schema = strip_schema
        self.exchanges: list[Exchange] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def record(self, exchange: Exchange) -> None:
        with self._lock:
            self.exchanges.append(exchange)

    def rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        response_format = body.get("response_format") or {}
        if self.strip_schema and response_format.get("type") == "json_object":
            body["response_format"] = {"type": "json_object"}
        return body


def _handler(proxy: RecordingProxy) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            pass

        def do_GET(self) -> None:  # noqa: N802
            self._forward(b"", record=False)

        def do_POST(self) -> None:  # noqa: N802
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self._forward(raw, record=True)

        def _forward(self, raw: bytes, *, record: bool) -> None:
            body = proxy.rewrite(json.loads(raw)) if raw else {}
            data = json.dumps(body).encode() if raw else b""
            response_format = body.get("response_format") or {}
            started, status = time.monotonic(), 0
            upstream = http.client.HTTPConnection(proxy.host, proxy.port, timeout=3600)
            try:
                upstream.request(self.command, self.path, body=data or None,
                                 headers={"Content-Type": "application/json"})
                answer = upstream.getresponse()
                payload = answer.read()
                status = answer.status
                self.send_response(status)
                self.send_header("Content-Type", answer.getheader("Content-Type") or "")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                pass  # digest gave up on this request (its time limit): recorded as status 0
            finally:
                upstream.close()
                if record:
                    proxy.record(Exchange(
                        response_format.get("type"),
                        "schema" in response_format or "json_schema" in response_format,
                        status, time.monotonic() - started))

    return Handler
