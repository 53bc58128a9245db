"""Chunk: cut each theme's papers into batches that fit one LLM call.

A batch is bounded twice: its papers' prompt tokens fit the input budget, and the
answer (one gist per paper plus a summary) fits the model's output limit.
Papers keep their theme order; batches of a theme are balanced in size so that
the last one is not a lonely straggler.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .errors import ConfigError
from .models import Batch, Paper, Theme

# What one gist and one summary cost in output tokens (measured: ~35 and ~160; padded).
GIST_OUTPUT_TOKENS = 60
SUMMARY_OUTPUT_TOKENS = 300


@dataclass(frozen=True)
class Budget:
    """Token limits of one call: the model's window and output limit, and our own caps."""

    context_window: int = 16_384
    # Our caps, for models whose card allows more: a theme of ~40 papers (~12k tokens, 40
    # gists) is one call, with no merge call after it (the seed pages: 17 calls → 9).
    max_output_tokens: int = 3_072
    batch_input_tokens: int = 12_000
    prompt_overhead: int = 300  # the instructions around the papers (measured by the Summarizer)

    @property
    def input_tokens(self) -> int:
        room = self.context_window - self.max_output_tokens - self.prompt_overhead
        return max(1, min(self.batch_input_tokens, room))

    @property
    def papers_per_answer(self) -> int:
        return max(1, (self.max_output_tokens - SUMMARY_OUTPUT_TOKENS) // GIST_OUTPUT_TOKENS)


class ModelLimits(Protocol):
    """What the budget needs of a model's card (``digest.llm.catalog.ModelCard`` has it);
    None where the card does not know."""

    @property
    def context_window(self) -> int | None: ...

    @property
    def max_output_tokens(self) -> int | None: ...


def budget_for(config: Mapping[str, Any], card: ModelLimits | None = None,
               model: str | None = None) -> Budget:
    """The budget for a model: the window and output limit of its ``card`` (the caller looks
    it up: config [models."NAME"], else the built-in card), else the config's top-level
    values, within our per-call caps. ``model`` names it in errors."""
    card_window = card.context_window if card else None
    card_output = card.max_output_tokens if card else None
    context = card_window or config.get("context_window") or Budget.context_window
    our_cap = config.get("max_output_tokens") or min(Budget.max_output_tokens, context // 4)
    output = min(our_cap, card_output or our_cap)
    batch = config.get("batch_tokens") or Budget.batch_input_tokens
    budget = Budget(context_window=context, max_output_tokens=output, batch_input_tokens=batch)
    _refuse_too_small(budget, model or "the model")
    return budget


MIN_PAPER_TOKENS = 400  # room for one paper's title and abstract (a typical one is ~250-350)


def _refuse_too_small(budget: Budget, model: str) -> None:
    """A window or an output limit that cannot hold one paper or one answer: every call would
    be refused or cut, and the whole issue summarised offline."""
    output, context = budget.max_output_tokens, budget.context_window
    fix = ("raise context_window or lower max_output_tokens in the config file's "
           f'[models."{model}"] table, or give a model with a larger window')
    if output >= context:
        raise ConfigError(f"max_output_tokens ({output}) must be smaller than the context window "
                          f"({context}) of {model}: {fix}")
    one_answer = SUMMARY_OUTPUT_TOKENS + GIST_OUTPUT_TOKENS
    if output < one_answer:
        raise ConfigError(f"max_output_tokens ({output}) of {model} is too few for one answer "
                          f"(a summary and a gist take ~{one_answer}): raise max_output_tokens")
    room = context - output - budget.prompt_overhead
    if room < MIN_PAPER_TOKENS:
        raise ConfigError(f"the context window of {model} ({context} tokens) leaves {room} tokens "
                          f"for papers after the answer ({output}) and the instructions "
                          f"(~{budget.prompt_overhead}), and a paper takes up to "
                          f"~{MIN_PAPER_TOKENS}: {fix}")


def plan_batches(themes: Sequence[Theme], papers: Mapping[str, Paper],
                 paper_tokens: Callable[[Paper], int], budget: Budget) -> list[Batch]:
    """Batches for every theme, in theme order."""
    batches: list[Batch] = []
    for theme_index, theme in enumerate(themes):
        costs = [(pid, paper_tokens(papers[pid])) for pid in theme.paper_ids]
        for index, group in enumerate(_split(costs, budget)):
            batches.append(Batch(theme_index, index, tuple(pid for pid, _ in group),
                                 sum(tokens for _, tokens in group)))
    return batches


def _split(costs: list[tuple[str, int]], budget: Budget) -> list[list[tuple[str, int]]]:
    """Greedy packing towards an even target size; a paper too big for any batch goes alone."""
    if not costs:
        return []
    total = sum(tokens for _, tokens in costs)
    n_batches = max(math.ceil(total / budget.input_tokens),
                    math.ceil(len(costs) / budget.papers_per_answer))
    target = min(budget.input_tokens, math.ceil(total / n_batches))
    per_batch = math.ceil(len(costs) / n_batches)
    groups: list[list[tuple[str, int]]] = [[]]
    used = 0
    for pid, tokens in costs:
        current = groups[-1]
        full = used + tokens > budget.input_tokens or len(current) >= budget.papers_per_answer
        reached_target = used >= target or len(current) >= per_batch
        if current and (full or reached_target):
            groups.append([])
            used = 0
        groups[-1].append((pid, tokens))
        used += tokens
    return groups
