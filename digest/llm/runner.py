"""Running a stage's LLM calls: the cache first, then the endpoint, in parallel, within limits.

``CallRunner`` owns everything between "here is a question" and "here is a
checked answer, or None (summarise this offline)":

* the cache and the ledger in the store, keyed by (model, prompt hash,
  parameters) and touched from the calling thread only (sqlite3 is not shared);
* up to ``concurrency`` calls at once, the longest chain of dependent calls
  first, answers applied in a fixed order so output never depends on timing;
* one repair request for an invalid answer;
* limits: ``--max-cost``, ``--max-tokens``, the run deadline, and a circuit
  breaker. After one failed call (all its retries spent) the endpoint is suspect:
  no new call starts while another is in flight, so failures cannot pile up in
  parallel. After N failed calls in a row the breaker opens: no call starts, and
  calls in flight make no further attempt (the request they have out finishes);
  a success in between closes it again;
* ``--dry-run``: every call that would be made is priced and listed instead.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..errors import ConfigError, LLMError, LLMUnavailable
from ..state import CallRecord, Store
from ..tokens import TokenCounter
from .answers import clean_answer, parse_json_answer
from .base import (
    AnswerUnreadable,
    ChatBackend,
    ChatRequest,
    Completion,
    DeadlineReached,
    Message,
    QuotaExhausted,
    RequestRejected,
    retries_of,
)
from .catalog import Price, model_card

logger = logging.getLogger("digest.llm")

Checker = Callable[[Any], tuple[Any, list[str]]]
CUT_OFF = "the answer was cut off at the output limit; write shorter sentences"
UNREADABLE = "unreadable"  # the finish reason we give an answer whose body could not be read
MAX_RESENT_CHARS = 20_000  # a longer rejected answer is not sent back with the repair request


@dataclass(frozen=True)
class RunLimits:
    """How the LLM stage may spend: parallelism, money, tokens, time, patience."""

    concurrency: int = 4
    max_cost_usd: float | None = None
    max_tokens: int | None = None
    deadline_s: float | None = 900.0
    breaker_after: int = 3
    dry_run: bool = False
    progress: bool | None = None  # None: a progress bar when stderr is a terminal
    price: Price | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError("--concurrency must be at least 1")

    def priced(self, model: str) -> RunLimits:
        """These limits with the model's price filled in (the built-in one if none was given)."""
        price = self.price or model_card(model).price
        if self.max_cost_usd is not None and price is None:
            raise ConfigError(f"--max-cost needs a price for {model!r}: add [prices.\"{model}\"] "
                              "with input, cached_input and output (USD per million tokens) to "
                              "the config")
        return replace(self, price=price)


@dataclass
class LLMStats:
    """The run report's ``llm`` block (the first eleven keys are the documented contract)."""

    backend: str
    model: str | None
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_calls: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    abstract_tokens: int = 0
    cost_usd: float = 0.0
    cached_tokens: int = 0
    repairs: int = 0
    token_overhead: float | None = None
    fallback_themes: list[str] = field(default_factory=list)
    degraded: bool = False
    stopped: str | None = None  # why calling stopped early: circuit breaker, deadline, budget
    errors: list[str] = field(default_factory=list)
    wall_s: float = 0.0
    dry_run: bool = False
    plan: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["cost_usd"] = round(self.cost_usd, 6)
        data["wall_s"] = round(self.wall_s, 3)
        if self.abstract_tokens and self.prompt_tokens:
            data["token_overhead"] = round(self.prompt_tokens / self.abstract_tokens, 3)
        if not self.dry_run:
            del data["plan"]
        return data


@dataclass
class Call:
    """One question and what to do with its answer (``None`` means: fall back offline)."""

    task: str  # summary, merge, intro: the ledger's and the logs' name for it
    label: str  # what it is about, for logs and --dry-run (a theme title)
    messages: tuple[Message, ...]
    check: Checker
    on_done: Callable[[Any], None]
    max_tokens: int
    expected_output: int
    schema: Mapping[str, Any] | None = None
    priority: int = 0  # higher first: how many calls still wait behind this one
    question: Call | None = None  # set on a repair: the call it repairs

    @property
    def original(self) -> Call:
        return self.question or self


@dataclass(frozen=True)
class _Reply:
    latency_s: float
    completion: Completion | None = None
    error: LLMError | None = None
    data: Any = None
    answer: Any = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class _Flight:
    call: Call
    seq: int
    key: str
    tokens: int
    cost: float


class CallRunner:
    def __init__(self, backend: ChatBackend, *, stats: LLMStats, counter: TokenCounter,
                 limits: RunLimits, repair_message: Callable[[list[str]], str],
                 store: Store | None = None):
        self.backend = backend
        self.stats = stats
        self.limits = limits
        self._counter = counter
        self._repair_message = repair_message
        self._store = store
        self._queue: list[tuple[int, int, int, Call]] = []
        self._seq = itertools.count()
        self._flights: dict[Future[_Reply], _Flight] = {}
        self._failures_in_a_row = 0
        self._halted = threading.Event()  # set when the breaker opens: in-flight calls stop
        self._fatal: LLMError | None = None
        self._deadline: float | None = None
        self._progress: Callable[[], None] = lambda: None
        self._submitted = 0
        self._settled = 0
        self._writes: list[Callable[[Store], None]] = []

    def submit(self, call: Call) -> None:
        attempt = 1 if call.question is None else 2
        heapq.heappush(self._queue, (-call.priority, -attempt, next(self._seq), call))
        self._submitted += 1

    def run(self) -> None:
        """Work until every submitted call (and those their answers submit) is settled."""
        if self._deadline is None and self.limits.deadline_s is not None:
            self._deadline = time.monotonic() + self.limits.deadline_s
        try:
            self._work()
        finally:
            self._flush_writes()  # answers already paid for stay cached, whatever happened
        if self._fatal is not None:
            raise self._fatal

    def _work(self) -> None:
        with ThreadPoolExecutor(self.limits.concurrency, thread_name_prefix="digest-llm") as pool, \
                _progress_bar(self.limits.progress, lambda: (self._settled, self._submitted)
                              ) as self._progress:
            while self._queue or self._flights:
                self._start_ready(pool)
                self._flush_writes()  # only after starting calls: a commit waits on the disk
                if self._flights:
                    done, _ = wait(self._flights, return_when=FIRST_COMPLETED)
                    for future in sorted(done, key=lambda f: self._flights[f].seq):
                        self._settle(self._flights.pop(future), future.result())

    # Starting calls -------------------------------------------------------------------

    def _start_ready(self, pool: ThreadPoolExecutor) -> None:
        while self._queue and len(self._flights) < self.limits.concurrency:
            if self._suspect() and self._flights:
                return  # one call at a time until the endpoint answers again
            _, _, seq, call = heapq.heappop(self._queue)
            key = self._cache_key(call.original)
            if call.question is None and self._answer_from_cache(call, key):
                continue
            tokens, cost = self._reservation(call)
            reason = self._refusal(tokens, cost)
            if reason is not None:
                self._refuse(call, reason, tokens, cost)
                continue
            self._flights[pool.submit(self._ask, call)] = _Flight(call, seq, key, tokens, cost)

    def _suspect(self) -> bool:
        """The last call failed and calling has not stopped: probe with one call at a time."""
        return self._failures_in_a_row > 0 and self.stats.stopped is None and not self._fatal

    def _reservation(self, call: Call) -> tuple[int, float]:
        """Tokens and USD this call may spend: counted only when a limit or a plan needs it."""
        limits = self.limits
        if not (limits.dry_run or limits.max_tokens is not None
                or limits.max_cost_usd is not None):
            return 0, 0.0
        return self._estimate_prompt(call) + call.expected_output, self._estimate_cost(call)

    def _answer_from_cache(self, call: Call, key: str) -> bool:
        data = self._store.cached_response(key) if self._store is not None else None
        if data is None:
            return False
        try:  # written by another digest version, or by hand: cleaned and checked again
            answer, problems = call.check(clean_answer(data))
        except ValueError:
            return False
        if problems:
            return False
        self.stats.cache_hits += 1
        self._deliver(call, answer)
        return True

    def _refusal(self, tokens: int, cost: float) -> str | None:
        limits, reserved = self.limits, self._flights.values()
        if self._fatal is not None:
            return "a fatal error"
        if limits.dry_run:
            return "dry run"
        if self.stats.stopped is not None:
            return self.stats.stopped
        if self._deadline is not None and time.monotonic() >= self._deadline:
            return "the run deadline (--deadline)"
        spent_tokens = self.stats.prompt_tokens + self.stats.completion_tokens
        if limits.max_tokens is not None and (
                spent_tokens + sum(f.tokens for f in reserved) + tokens > limits.max_tokens):
            return f"--max-tokens {limits.max_tokens}"
        if limits.max_cost_usd is not None and (
                self.stats.cost_usd + sum(f.cost for f in reserved) + cost > limits.max_cost_usd):
            return f"--max-cost {limits.max_cost_usd:g}"
        return None

    def _refuse(self, call: Call, reason: str, tokens: int, cost: float) -> None:
        if reason == "dry run":
            self.stats.plan.append({
                "task": call.task, "label": call.label,
                "prompt_tokens": tokens - call.expected_output,
                "output_tokens": call.expected_output, "cost_usd": round(cost, 6)})
            self._deliver(call, None, fallback=False)
            return
        if self.stats.stopped is None and self._fatal is None:
            self.stats.stopped = reason
            logger.warning("no more LLM calls this run (%s): the rest is summarised offline",
                           reason)
        self._deliver(call, None)

    # In a worker thread -----------------------------------------------------------------

    def _ask(self, call: Call) -> _Reply:
        started = time.monotonic()
        request = ChatRequest(call.messages, max_tokens=call.max_tokens, schema=call.schema,
                              schema_name=call.task, deadline=self._deadline,
                              may_retry=lambda: not self._halted.is_set())
        try:
            completion = self.backend.complete(request)
        except AnswerUnreadable as error:
            unread = Completion("", 0, 0, finish_reason=UNREADABLE, retries=retries_of(error))
            return _Reply(time.monotonic() - started, unread, problems=(str(error),))
        except LLMError as error:
            return _Reply(time.monotonic() - started, error=error)
        data, answer, problems = _read(completion, call.check)
        return _Reply(time.monotonic() - started, completion, data=data, answer=answer,
                      problems=tuple(problems))

    # Back in the calling thread ------------------------------------------------------------

    def _settle(self, flight: _Flight, reply: _Reply) -> None:
        call = flight.call
        self.stats.calls += 1
        if reply.error is not None:
            self._record(flight, reply, f"error: {type(reply.error).__name__}")
            self._failed(call, reply.error)
            return
        self._failures_in_a_row = 0
        if not reply.problems:
            self._record(flight, reply, "ok")
            self._remember(flight, reply.data)
            self._deliver(call, reply.answer)
            return
        self._record(flight, reply, f"invalid: {reply.problems[0]}"[:200])
        self.stats.failed_calls += 1
        logger.info("%s %r: answer rejected (%s)", call.task, call.label,
                    "; ".join(reply.problems))
        if call.question is None:
            self._repair(call, reply)
        else:
            logger.warning("%s %r: no usable answer after a repair; summarised offline",
                           call.task, call.label)
            self._deliver(call, None)

    def _repair(self, call: Call, reply: _Reply) -> None:
        assert reply.completion is not None
        messages = list(call.messages)
        if _worth_resending(reply.completion):
            messages.append({"role": "assistant", "content": reply.completion.text})
        messages.append({"role": "user", "content": self._repair_message(list(reply.problems))})
        self.stats.repairs += 1
        self.submit(Call(call.task, call.label, tuple(messages), call.check, call.on_done,
                         call.max_tokens, call.expected_output, call.schema, call.priority,
                         question=call))
        self._submitted -= 1  # the same unit of work, asked again

    def _failed(self, call: Call, error: LLMError) -> None:
        self.stats.failed_calls += 1
        self._note_error(str(error))
        if isinstance(error, QuotaExhausted):
            self._open_breaker("the account is out of quota")
        elif isinstance(error, DeadlineReached):
            self.stats.stopped = self.stats.stopped or "the run deadline (--deadline)"
        elif isinstance(error, (LLMUnavailable, RequestRejected)):
            self._failures_in_a_row += 1
            logger.warning("%s %r: %s", call.task, call.label, error)
            if self._failures_in_a_row >= self.limits.breaker_after:
                self._open_breaker(f"{self._failures_in_a_row} calls failed in a row")
        else:  # 401, 403, 404: nothing will work until the user fixes the setup
            self._fatal = self._fatal or error
            self._halted.set()
            self._queue.clear()
        self._deliver(call, None)

    def _open_breaker(self, why: str) -> None:
        self._halted.set()
        if self.stats.stopped is None:
            self.stats.stopped = f"circuit breaker: {why}"
            logger.warning("circuit breaker open (%s): no more LLM calls this run; the rest "
                           "is summarised offline", why)

    def _deliver(self, call: Call, answer: Any, *, fallback: bool = True) -> None:
        if answer is None and fallback:
            self.stats.fallbacks += 1
        self._settled += 1
        self._progress()
        call.on_done(answer)

    # The store ---------------------------------------------------------------------------

    def _record(self, flight: _Flight, reply: _Reply, outcome: str) -> None:
        completion = reply.completion
        prompt = completion.prompt_tokens if completion else 0
        if completion is not None and not prompt:  # the server reported no usage: count it
            prompt = self._estimate_prompt(flight.call)
        output = (completion.completion_tokens or self._counter.count(completion.text)
                  if completion else 0)
        cached = completion.cached_tokens if completion else 0
        cost = self.limits.price.cost(prompt, cached, output) if self.limits.price else 0.0
        retries = completion.retries if completion else retries_of(reply.error or Exception())
        self.stats.prompt_tokens += prompt
        self.stats.completion_tokens += output
        self.stats.cached_tokens += cached
        self.stats.cost_usd += cost
        self.stats.retries += retries
        record = CallRecord(
            self.backend.model, flight.call.task, _prompt_hash(flight.call.messages),
            flight.key, prompt, output, cached, round(reply.latency_s * 1000), retries,
            outcome, cost)
        self._writes.append(lambda store: store.record_call(record))

    def _remember(self, flight: _Flight, data: Any) -> None:
        original = flight.call.original
        prompt_hash, params = _prompt_hash(original.messages), self._params(original)
        self._writes.append(lambda store: store.cache_response(
            flight.key, self.backend.model, data, prompt_hash=prompt_hash, params=params))

    def _flush_writes(self) -> None:
        writes, self._writes = self._writes, []
        if self._store is not None:
            for write in writes:
                write(self._store)

    def _cache_key(self, call: Call) -> str:
        """(model, prompt hash, parameters): the same question to the same model is asked once."""
        payload = json.dumps({"model": self.backend.model, "prompt": _prompt_hash(call.messages),
                              "params": self._params(call)}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def _params(self, call: Call) -> dict[str, Any]:
        """What besides the prompt shapes an answer (a backend may expose its temperature)."""
        return {"max_tokens": call.max_tokens, "task": call.task,
                "temperature": getattr(self.backend, "temperature", None)}

    def _estimate_prompt(self, call: Call) -> int:
        """Prompt tokens as OpenAI counts them: the text plus a few per message."""
        return sum(self._counter.count(m["content"]) + 3 for m in call.messages) + 3

    def _estimate_cost(self, call: Call) -> float:
        if self.limits.price is None:
            return 0.0
        return self.limits.price.cost(self._estimate_prompt(call), 0, call.expected_output)

    def _note_error(self, message: str) -> None:
        if message not in self.stats.errors and len(self.stats.errors) < 10:
            self.stats.errors.append(message)


def _read(completion: Completion, check: Checker) -> tuple[Any, Any, list[str]]:
    """(data, answer, problems): whatever the model wrote, an answer or what is wrong with it."""
    if completion.finish_reason == "length":
        return None, None, [CUT_OFF]
    try:
        data = parse_json_answer(completion.text)
        answer, problems = check(data)
    except ValueError as error:
        return None, None, [str(error)]
    except Exception as error:  # noqa: BLE001 - a model's answer may cost its batch, no more
        logger.warning("an answer broke its check (%s); treated as invalid",
                       type(error).__name__)
        return None, None, ["the answer could not be read; answer with the JSON object asked for"]
    return data, answer, problems


def _worth_resending(completion: Completion) -> bool:
    """A cut, unreadable or huge answer is not sent back with the repair request."""
    return (completion.finish_reason not in ("length", UNREADABLE)
            and len(completion.text) <= MAX_RESENT_CHARS)


def _prompt_hash(messages: tuple[Message, ...]) -> str:
    text = json.dumps([dict(m) for m in messages], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@contextmanager
def _progress_bar(enabled: bool | None, counts: Callable[[], tuple[int, int]]
                  ) -> Iterator[Callable[[], None]]:
    """A rich progress bar on a terminal; nothing at all under cron or in a pipe."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    with Progress("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("LLM calls", total=None)

        def update() -> None:
            done, total = counts()
            bar.update(task, completed=done, total=total)

        yield update
