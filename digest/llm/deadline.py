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

The feed fetcher (``digest.ingest.fetch``, on httpx) uses the same limit: ``limit_client``
wraps the connections of an httpx or httpx2 client, and a read past the limit raises the
timeout of that client's own httpcore, which its transport turns into its ``ReadTimeout``.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, NamedTuple

import httpcore2 as httpcore
import httpx2 as httpx

_limit = threading.local()


@contextmanager
def request_limit(ends_at: float) -> Iterator[None]:
    """Requests made in this thread inside the block end by ``ends_at`` (``time.monotonic``)."""
    before = getattr(_limit, "ends_at", None)
    _limit.ends_at = ends_at
    try:
        yield
    finally:
        _limit.ends_at = before


class _Late(NamedTuple):
    """The timeouts of one httpcore (httpcore2 for openai's httpx2, httpcore for httpx)."""

    connect: type[Exception]
    read: type[Exception]
    write: type[Exception]


def _left(timeout: float | None, late: type[Exception]) -> float | None:
    ends_at = getattr(_limit, "ends_at", None) or getattr(_limit, "own_ends_at", None)
    if ends_at is None:
        return timeout
    left = ends_at - time.monotonic()
    if left <= 0:
        raise late("the request's time limit passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, stream: httpcore.NetworkStream, late: _Late):
        self._stream, self._late = stream, late

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._stream.read(max_bytes, _left(timeout, self._late.read))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, _left(timeout, self._late.write))

    def close(self) -> None:
        self._stream.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._stream.start_tls(ssl_context, server_hostname,
                                              _left(timeout, self._late.connect)), self._late)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    def __init__(self, backend: httpcore.NetworkBackend, late: _Late):
        self._backend, self._late = backend, late

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_tcp(
            host, port, _left(timeout, self._late.connect), local_address, socket_options),
            self._late)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None
                            ) -> httpcore.NetworkStream:
        return _Stream(self._backend.connect_unix_socket(
            path, _left(timeout, self._late.connect), socket_options), self._late)

    def sleep(self, seconds: float) -> None:
        self._backend.sleep(seconds)


def limit_connections(transport: Any) -> None:
    """The connections of ``transport`` (an httpx or httpx2 ``HTTPTransport``) obey
    ``request_limit``. It takes no network backend, so its pool's is wrapped
    (tests/test_llm_backend.py and tests/test_ingest_limits.py fail if that goes away)."""
    pool = transport._pool  # noqa: SLF001
    core = sys.modules[type(pool).__module__.partition(".")[0]]  # httpcore or httpcore2
    late = _Late(core.ConnectTimeout, core.ReadTimeout, core.WriteTimeout)
    pool._network_backend = _Backend(pool._network_backend, late)  # noqa: SLF001


def limit_client(client: Any) -> Any:
    """``client`` (httpx or httpx2), its connections, direct or through a proxy taken from
    ``HTTP(S)_PROXY``, obeying ``request_limit``."""
    for transport in (client._transport, *client._mounts.values()):  # noqa: SLF001
        if hasattr(transport, "_pool"):
            limit_connections(transport)
    return client


class LimitedTransport(httpx.HTTPTransport):
    """The openai client's transport, whose connections obey ``request_limit``."""

    def __init__(self, **options: Any):
        super().__init__(**options)
        limit_connections(self)

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
