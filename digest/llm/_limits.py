"""How the LLM stage may spend: parallelism, money, tokens, time; what a call costs.

``RunLimits`` is what the settings ask for; ``Spending`` applies them to one run: it prices
the model once, reserves tokens and USD for calls in flight, says why a call may not start
(``refusal``), and charges what a finished call used.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

from ..errors import ConfigError, LLMError, LLMUnavailable
from ..tokens import TokenCounter
from ._calls import Call
from ._plan import Planner
from ._stats import LLMStats
from .base import Completion, DeadlineReached, retries_of, with_retries
from .catalog import Price, model_card

DRY_RUN = "dry run"
DEADLINE = "the run deadline (setting deadline)"


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
    planner: Planner | None = field(default=None, compare=False)  # planning mode (``_plan``)

    @property
    def planning(self) -> bool:
        return self.planner is not None

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError("concurrency must be at least 1", setting="concurrency")

    def priced(self, model: str, price: Price | None = None) -> RunLimits:
        """These limits with a price: the one given, the backend's, else the model card's.

        The one place a run is priced (``llm_setup`` calls it with the config's price)."""
        price = self.price or price or model_card(model).price
        if self.max_cost_usd is not None and price is None:
            raise ConfigError(f"max_cost needs a price for {model!r}: add [prices.\"{model}\"] "
                              "with input, cached_input and output (USD per million tokens) to "
                              "the config", setting="max_cost")
        return replace(self, price=price)


@dataclass(frozen=True)
class Reserved:
    tokens: int = 0
    cost: float = 0.0


class Spending:
    """The limits of one run, applied as calls start and finish."""

    def __init__(self, limits: RunLimits, stats: LLMStats, counter: TokenCounter) -> None:
        self.limits = limits
        self.stats = stats
        self._counter = counter
        self.deadline: float | None = None  # time.monotonic() after which no call starts
        self._planned = Reserved()  # a dry run's calls that the limits let through
        self._plan_stopped: str | None = None

    def start_clock(self) -> None:
        if self.deadline is None:
            self.deadline = deadline_start(self.limits.deadline_s)

    def reserve(self, call: Call) -> Reserved:
        """Tokens and USD this call may spend: counted only when a limit or a plan needs it."""
        limits = self.limits
        if not (limits.dry_run or limits.max_tokens is not None
                or limits.max_cost_usd is not None):
            return Reserved()
        prompt = self.estimate_prompt(call)
        return Reserved(prompt + call.expected_output, self.cost(prompt, 0, call.expected_output))

    def refusal(self, reserved: Reserved, in_flight: list[Reserved]) -> str | None:
        """Why a call that would spend ``reserved`` may not start now, or None."""
        limits, stats = self.limits, self.stats
        if limits.dry_run:
            return DRY_RUN
        if stats.stopped is not None:
            return stats.stopped
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return DEADLINE
        return self._over_limits(
            stats.spent_tokens + sum(r.tokens for r in in_flight) + reserved.tokens,
            stats.cost_usd + sum(r.cost for r in in_flight) + reserved.cost)

    def planned_stop(self, reserved: Reserved) -> str | None:
        """A dry run's call: the token or cost limit that would stop it, as the real run would
        (and every call after it, as ``LLMStats.stop`` does), or None, and it is counted as
        spent."""
        if self._plan_stopped is None:
            tokens = self._planned.tokens + reserved.tokens
            cost = self._planned.cost + reserved.cost
            self._plan_stopped = self._over_limits(tokens, cost)
            if self._plan_stopped is None:
                self._planned = Reserved(tokens, cost)
        return self._plan_stopped

    def _over_limits(self, tokens: int, cost: float) -> str | None:
        limits = self.limits
        if limits.max_tokens is not None and tokens > limits.max_tokens:
            return f"the token limit (setting max_tokens = {limits.max_tokens})"
        if limits.max_cost_usd is not None and cost > limits.max_cost_usd:
            return f"the cost limit (setting max_cost = {limits.max_cost_usd:g})"
        return None

    def charge(self, call: Call, completion: Completion | None) -> tuple[tuple[int, int, int],
                                                                         float]:
        """Count what a finished call used: ((prompt, output, cached) tokens, USD)."""
        if completion is None:
            return (0, 0, 0), 0.0
        prompt = completion.prompt_tokens or self.estimate_prompt(call)  # no usage: count it
        output = completion.completion_tokens or self._counter.count(completion.text)
        cached = completion.cached_tokens
        cost = self.cost(prompt, cached, output)
        stats = self.stats
        stats.prompt_tokens += prompt
        stats.completion_tokens += output
        stats.cached_tokens += cached
        stats.cost_usd += cost
        return (prompt, output, cached), cost

    def cost(self, prompt: int, cached: int, output: int) -> float:
        price = self.limits.price
        return price.cost(prompt, cached, output) if price is not None else 0.0

    def estimate_prompt(self, call: Call) -> int:
        """Prompt tokens as OpenAI counts them: the text plus a few per message."""
        return sum(self._counter.count(m["content"]) + 3 for m in call.messages) + 3


def deadline_start(deadline_s: float | None) -> float | None:
    """The moment (``time.monotonic()``) a run that starts now must stop calling."""
    return time.monotonic() + deadline_s if deadline_s is not None else None


def named_cut(error: LLMError, deadline: float | None) -> LLMError:
    """The error that says which limit cut a call. A backend shortens a request's timeout to
    the time the run has left, so a call that timed out once the deadline had passed was cut
    by the deadline, not by the timeout its message names."""
    if (deadline is None or time.monotonic() < deadline
            or not isinstance(error, LLMUnavailable) or isinstance(error, DeadlineReached)):
        return error
    cut = DeadlineReached("the run's deadline (setting deadline) ended this call before it was "
                          "answered; the rest is done without the model")
    return with_retries(cut, retries_of(error))
