"""A chat backend for tests and experiments: canned answers in, every request recorded.

``MockBackend`` implements ``ChatBackend`` in-process, like llm's ``MockModel``: ``enqueue``
answers (text, a function of the request, or an exception to raise), read ``history`` to
see what was asked. With nothing queued it asks ``default``; with no default it refuses
the request (``RequestRejected``), so that batch is summarised offline, visibly.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from .base import ChatRequest, Completion, RequestRejected

Answer = str | Callable[[ChatRequest], str] | BaseException


@dataclass
class MockBackend:
    """Answers from a queue, in the order the requests arrive; thread-safe."""

    model: str = "mock-model"
    default: Callable[[ChatRequest], str] | None = None
    name: str = "mock"
    history: list[ChatRequest] = field(default_factory=list)
    closed: bool = False
    _queue: deque[Answer] = field(default_factory=deque, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def enqueue(self, *answers: Answer) -> MockBackend:
        with self._lock:
            self._queue.extend(answers)
        return self

    def complete(self, request: ChatRequest) -> Completion:
        with self._lock:
            self.history.append(request)
            answer = self._queue.popleft() if self._queue else self.default
        if answer is None:
            raise RequestRejected("mock backend: no answer queued for this request")
        if isinstance(answer, BaseException):
            raise answer
        text = answer if isinstance(answer, str) else answer(request)
        return Completion(text, prompt_tokens=_words(request), completion_tokens=len(text.split()))

    def close(self) -> None:
        self.closed = True


def _words(request: ChatRequest) -> int:
    return sum(len(message.get("content", "").split()) for message in request.messages)
