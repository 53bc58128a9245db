"""Running a stage's LLM calls: the cache first, then the backend, in parallel, within limits.

``CallRunner`` keeps the queue, the worker pool and the settling of answers; each other
job has its own module:

* ``_ledger``: the answer cache and the ledger of calls in the store (calling thread only);
* ``_limits``: ``RunLimits`` and ``Spending`` (max_cost, max_tokens, the run deadline, the
  price of a call);
* ``_breaker``: the circuit breaker (one call at a time after a failure; none after N);
* ``_plan``: the dry-run plan (each call that would be made, priced);
* ``_calls``: a ``Call``, a worker's ``Reply``, reading and repairing an answer;
* ``_progress``: the progress bar; ``_stats``: ``LLMStats``, what the report shows.

Up to ``concurrency`` calls run at once, the longest chain of dependent calls first, and
answers are applied in a fixed order so output never depends on timing. An invalid answer
gets one repair request. A backend that answers in process (``in_process``: offline) is
asked at once in the calling thread: nothing to cache, bill, budget, plan or break.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

from ..errors import LLMError, LLMUnavailable
from ..state import Store
from ..tokens import TokenCounter
from ._breaker import Breaker
from ._calls import UNREADABLE, Call, Checker, Reply, log_rejected, read_answer
from ._ledger import Ledger
from ._limits import DEADLINE, DRY_RUN, Reserved, RunLimits, Spending, named_cut
from ._plan import PlannedCall, Planner, PlanRow
from ._progress import progress_bar
from ._stats import LLMStats
from .base import (
    AnswerUnreadable,
    ChatBackend,
    ChatRequest,
    Completion,
    DeadlineReached,
    QuotaExhausted,
    RequestRejected,
    retries_of,
)
from .batch import request_body

__all__ = ["Call", "CallRunner", "Checker", "LLMStats", "RunLimits", "in_process"]

logger = logging.getLogger("digest.llm")


def in_process(backend: ChatBackend) -> bool:
    """True for a backend with no server behind it (offline): see ``ChatBackend``."""
    return bool(getattr(backend, "in_process", False))


@dataclass(frozen=True)
class _Flight:
    call: Call
    seq: int
    key: str
    reserved: Reserved


class CallRunner:
    def __init__(self, backend: ChatBackend, *, stats: LLMStats, counter: TokenCounter,
                 limits: RunLimits, repair_message: Callable[[list[str]], str],
                 store: Store | None = None):
        self.backend = backend
        self.stats = stats
        self.limits = limits
        self.spending = Spending(limits, stats, counter)
        self.ledger = Ledger(store, backend.model, getattr(backend, "temperature", None))
        self.breaker = Breaker(limits.breaker_after)
        self._in_process = in_process(backend)
        self._repair_message = repair_message
        self._queue: list[tuple[int, int, int, Call]] = []
        self._seq = itertools.count()
        self._flights: dict[Future[Reply], _Flight] = {}
        self._fatal: LLMError | None = None
        self._progress: Callable[[], None] = lambda: None
        self._submitted = 0
        self._settled = 0

    def submit(self, call: Call) -> None:
        if self._in_process:
            self._answer_at_once(call)
            return
        attempt = 1 if call.question is None else 2
        heapq.heappush(self._queue, (-call.priority, -attempt, next(self._seq), call))
        self._submitted += 1

    def run(self) -> None:
        """Work until every submitted call (and those their answers submit) is settled."""
        self.spending.start_clock()
        try:
            self._work()
        finally:
            self.ledger.flush()  # answers already paid for stay cached, whatever happened
        if self._fatal is not None:
            raise self._fatal
        self.stats.answers_cost_usd = self.ledger.cost_of_answers()

    def _work(self) -> None:
        with ThreadPoolExecutor(self.limits.concurrency, thread_name_prefix="digest-llm") as pool, \
                progress_bar(self.limits.progress, lambda: (self._settled, self._submitted)
                             ) as self._progress:
            while self._queue or self._flights:
                self._start_ready(pool)
                self.ledger.flush()  # only after starting calls: a commit waits on the disk
                if self._flights:
                    done, _ = wait(self._flights, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: self._flights[f].seq):
                        self._settle(self._flights.pop(future), future.result())

    def _answer_at_once(self, call: Call) -> None:
        completion = self.backend.complete(self._request(call))
        call.on_done(completion.answer)

    # Starting calls -------------------------------------------------------------------

    def _start_ready(self, pool: ThreadPoolExecutor) -> None:
        while self._queue and len(self._flights) < self.limits.concurrency:
            if self._suspect() and self._flights:
                return  # one call at a time until the endpoint answers again
            _, _, seq, call = heapq.heappop(self._queue)
            key = self.ledger.key(call)
            if call.question is None and self._answer_from_cache(call, key):
                continue
            if self.limits.planner is not None:
                self._plan(call, key, self.limits.planner)
                continue
            reserved = self.spending.reserve(call)
            reason = self._refusal(reserved)
            if reason is not None:
                self._refuse(call, reason, reserved)
                continue
            if call.question is None:
                self.stats.abstract_tokens += call.abstract_tokens
            self._flights[pool.submit(self._ask, call)] = _Flight(call, seq, key, reserved)

    def _plan(self, call: Call, key: str, planner: Planner) -> None:
        """Planning mode: the call is listed, not asked, and gets no answer."""
        request, temperature = self._request(call), getattr(self.backend, "temperature", None)
        body_of = getattr(self.backend, "request_body", None)
        body = (body_of(request) if body_of is not None
                else request_body(self.backend.model, request, temperature))
        planner.add(PlannedCall(key, call.task, request, self.backend.model, temperature, body))
        self._deliver(call, None, fallback=False)

    def _suspect(self) -> bool:
        return self.breaker.suspect and self.stats.stopped is None and not self._fatal

    def _answer_from_cache(self, call: Call, key: str) -> bool:
        cached = self.ledger.cached(call, key)
        if cached is None:
            return False
        if cached.problems:  # e.g. a Batch API answer: repaired, as a fresh one would be
            self.stats.cached_invalid += 1
            unread = Completion(cached.text, 0, 0)
            log_rejected(call, unread, tuple(cached.problems))
            self._repair(call, Reply(0.0, unread, problems=tuple(cached.problems)))
            return True
        self.stats.cache_hits += 1
        self.ledger.used(key)
        self._deliver(call, cached.answer)
        return True

    def _refusal(self, reserved: Reserved) -> str | None:
        if self._fatal is not None:
            return "a fatal error"
        return self.spending.refusal(reserved, [f.reserved for f in self._flights.values()])

    def _refuse(self, call: Call, reason: str, reserved: Reserved) -> None:
        if reason == DRY_RUN:
            self.stats.plan.append(PlanRow(
                call.task, call.label, reserved.tokens - call.expected_output,
                call.expected_output, round(reserved.cost, 6),
                self.spending.planned_stop(reserved)).as_dict())
            self._deliver(call, None, fallback=False)
            return
        if self._fatal is None and self.stats.stop(reason):
            logger.warning("no more LLM calls this run (%s): the rest is summarised offline",
                           reason)
        self._deliver(call, None)

    # In a worker thread -----------------------------------------------------------------

    def _request(self, call: Call) -> ChatRequest:
        messages = () if self._in_process else call.messages  # offline reads no prompt
        return ChatRequest(messages, max_tokens=call.max_tokens, schema=call.schema,
                           schema_name=call.task, deadline=self.spending.deadline,
                           may_retry=self.breaker.may_retry, extractive=call.extractive)

    def _ask(self, call: Call) -> Reply:
        started = time.monotonic()
        try:
            completion = self.backend.complete(self._request(call))
        except AnswerUnreadable as error:
            unread = Completion("", 0, 0, finish_reason=UNREADABLE, retries=retries_of(error))
            return Reply(time.monotonic() - started, unread, problems=(str(error),))
        except LLMError as error:
            return Reply(time.monotonic() - started, error=error)
        data, answer, problems = read_answer(completion, call.check)
        return Reply(time.monotonic() - started, completion, data=data, answer=answer,
                     problems=tuple(problems))

    # Back in the calling thread ------------------------------------------------------------

    def _settle(self, flight: _Flight, reply: Reply) -> None:
        call = flight.call
        self.stats.calls += 1
        if call.question is not None:  # a repair counts once it was sent, not when asked for
            self.stats.repairs += 1
        if reply.error is not None:
            error = named_cut(reply.error, self.spending.deadline)
            self._record(flight, reply, f"error: {type(error).__name__}")
            self._failed(call, error)
            return
        self.breaker.succeeded()
        if not reply.problems:
            self._record(flight, reply, "ok")
            self.ledger.remember(call, flight.key, reply.data)
            self.ledger.used(flight.key)
            self._deliver(call, reply.answer)
            return
        self._record(flight, reply, f"invalid: {reply.problems[0]}"[:200])
        self.stats.failed_calls += 1
        log_rejected(call, reply.completion, reply.problems)
        if call.question is None:
            self._repair(call, reply)
        else:
            logger.warning("%s %r: no usable answer after a repair; summarised offline",
                           call.task, call.label)
            self._deliver(call, None)

    def _repair(self, call: Call, reply: Reply) -> None:
        assert reply.completion is not None
        self.submit(call.repair(reply.completion, list(reply.problems),
                                self._repair_message(list(reply.problems))))
        self._submitted -= 1  # the same unit of work, asked again

    def _failed(self, call: Call, error: LLMError) -> None:
        self.stats.failed_calls += 1
        self.stats.note_error(str(error))
        if isinstance(error, QuotaExhausted):
            self._open_breaker("the account is out of quota")
        elif isinstance(error, DeadlineReached):
            if self.stats.stop(DEADLINE):
                logger.warning("%s: no more LLM calls this run; the rest is summarised offline",
                               DEADLINE)
        elif isinstance(error, (LLMUnavailable, RequestRejected)):
            logger.warning("%s %r: %s", call.task, call.label, error)
            why = self.breaker.failed()
            if why is not None:
                self._open_breaker(why)
        else:  # 401, 403, 404: nothing will work until the user fixes the setup
            self._fatal = self._fatal or error
            self.breaker.open()
            self._queue.clear()
        self._deliver(call, None)

    def _open_breaker(self, why: str) -> None:
        self.breaker.open()
        if self.stats.stop(f"circuit breaker: {why}"):
            logger.warning("circuit breaker open (%s): no more LLM calls this run; the rest "
                           "is summarised offline", why)

    def _deliver(self, call: Call, answer: Any, *, fallback: bool = True) -> None:
        if answer is None and fallback:
            self.stats.fallbacks += 1
        self._settled += 1
        self._progress()
        call.on_done(answer)

    def _record(self, flight: _Flight, reply: Reply, outcome: str) -> None:
        completion = reply.completion
        usage, cost = self.spending.charge(flight.call, completion)
        retries = completion.retries if completion else retries_of(reply.error or Exception())
        self.stats.retries += retries
        self.ledger.record(flight.call, flight.key, usage, cost, reply.latency_s, retries,
                           outcome)
