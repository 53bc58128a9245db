"""One time limit for the whole of an HTTP request, not for each socket operation.

The HTTP library's timeouts (httpx2, the openai client's) bound each read and write: a
server that sends its response headers one line every two seconds never trips a 5 s read
timeout, and the request runs for ever, past ``timeout`` and the run's ``deadline`` alike.
``request_limit`` sets when the request must be over; every read, write and connect of the
connection that serves it (in this thread: the sync client runs a request in the caller's
thread) then waits at most until then, and one past it raises the timeout the openai client
already turns into a retry (through a proxy too). A request made outside ``request_limit``
(embeddings, the Batch API's files and batches) must be over within its read timeout, taken as
the whole request's.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore2 as httpcore
import httpx2 as httpx

_limit = threading.local()


@contextmanager
def request_limit(ends_at: float) -> Iterator[None]:
    """Requests made in this thread inside the block end by ``ends_at`` (``time.monotonic``)."""
    _limit.ends_at = ends_at
    try:
        yield
    finally:
        _limit.ends_at = None


def _left(timeout: float | None, late: type[httpcore.TimeoutException]) -> float | None:
    ends_at = getattr(_limit, "ends_at", None) or getattr(_limit, "own_ends_at", None)
    if ends_at is None:
        return timeout
    left = ends_at - time.monotonic()
    if left <= 0:
        raise late("the request's time limit passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream):
        self._stream = stream

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname,
                                              _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend):
        self._backend = backend

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_tcp(
            host, port, _left(timeout, httpcore.ConnectTimeout), local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_unix_socket(
            path, _left(timeout, httpcore.ConnectTimeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


class LimitedTransport(httpx.HTTPTransport):
    """The openai client's transport, whose connections obey ``request_limit``. It takes no
    network backend, so its pool's is wrapped (tests/test_llm_backend.py fails if that goes
    away)."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        pool = self._pool
        pool._network_backend = _Backend(pool._network_backend)  # noqa: SLF001

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        """Outside ``request_limit``, the request (its body read included: the next request
        of this thread sets a new limit) ends within its read timeout."""
        read = (request.extensions.get("timeout") or {}).get("read")
        _limit.own_ends_at = time.monotonic() + read if read is not None else None
        return super().handle_request(request)


class LimitedClient(httpx.Client):
    """The HTTP client of the openai client, as it makes its own (following redirects, closed
    when dropped, through a proxy from ``HTTP(S)_PROXY``), over ``LimitedTransport``. The
    transports are made by the hooks below, not passed in: httpx ignores the environment's
    proxies when it is given a transport."""

    def __init__(self) -> None:
        super().__init__(follow_redirects=True)

    def _init_transport(self, *args: Any, **options: Any) -> httpx.BaseTransport:
        return options.pop("transport", None) or LimitedTransport(*args, **options)

    def _init_proxy_transport(self, proxy: httpx.Proxy, *args: Any,
                              **options: Any) -> httpx.BaseTransport:
        return LimitedTransport(*args, proxy=proxy, **options)

    def __del__(self) -> None:
        if not self.is_closed:
            with contextlib.suppress(Exception):  # at interpreter exit anything may be gone
                self.close()
