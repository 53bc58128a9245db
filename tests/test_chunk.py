"""Chunking: every paper in exactly one batch, in theme order, within the token budget."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.chunk import Budget, budget_for, plan_batches
from digest.errors import ConfigError
from digest.models import Paper, Theme


def _plan(costs_per_theme: list[list[int]], budget: Budget):
    papers: dict[str, Paper] = {}
    tokens: dict[str, int] = {}
    themes = []
    offset = 0
    for index, costs in enumerate(costs_per_theme):
        ids = tuple(f"p{offset + i}" for i in range(len(costs)))
        for pid, cost in zip(ids, costs, strict=True):
            papers[pid] = Paper(id=pid, title=pid, abstract="x")
            tokens[pid] = cost
        themes.append(Theme(f"Theme {index}", (), ids))
        offset += len(costs)
    return themes, tokens, plan_batches(themes, papers, lambda p: tokens[p.id], budget)


SMALL = Budget(context_window=4_000, max_output_tokens=1_000, batch_input_tokens=1_000)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(min_value=1, max_value=1_500), max_size=40), max_size=5))
def test_every_paper_once_in_theme_order_within_budget(costs_per_theme):
    themes, tokens, batches = _plan(costs_per_theme, SMALL)
    for theme_index, theme in enumerate(themes):
        mine = [b for b in batches if b.theme_index == theme_index]
        assert [pid for b in mine for pid in b.paper_ids] == list(theme.paper_ids)
        assert [b.index for b in mine] == list(range(len(mine)))
    for batch in batches:
        assert batch.tokens == sum(tokens[pid] for pid in batch.paper_ids)
        assert len(batch.paper_ids) <= SMALL.papers_per_answer
        if len(batch.paper_ids) > 1:  # only a paper too big for any batch may exceed it, alone
            assert batch.tokens <= SMALL.input_tokens


def test_a_theme_that_fits_is_one_batch():
    _, _, batches = _plan([[100] * 10], SMALL)
    assert [len(b.paper_ids) for b in batches] == [10]


def test_batches_are_balanced_not_a_lonely_straggler():
    _, _, batches = _plan([[100] * 11], SMALL)  # 1,100 tokens: two batches of 6 + 5, not 10 + 1
    assert sorted(len(b.paper_ids) for b in batches) == [5, 6]


def test_the_output_limit_caps_papers_per_batch():
    budget = Budget(context_window=100_000, max_output_tokens=900, batch_input_tokens=50_000)
    _, _, batches = _plan([[10] * 40], budget)
    per_answer = budget.papers_per_answer
    assert per_answer == (900 - 300) // 60
    assert len(batches) == math.ceil(40 / per_answer)
    assert max(len(b.paper_ids) for b in batches) <= per_answer


def test_input_budget_leaves_room_for_instructions_and_answer():
    budget = Budget(context_window=8_000, max_output_tokens=2_000, batch_input_tokens=50_000)
    assert budget.input_tokens == 8_000 - 2_000 - budget.prompt_overhead


def test_budget_from_config_and_model_card():
    budget = budget_for({"context_window": 32_000, "max_output_tokens": 1_024,
                         "batch_tokens": 6_000})
    assert (budget.context_window, budget.max_output_tokens, budget.batch_input_tokens) == (
        32_000, 1_024, 6_000)


def test_output_limit_beyond_the_window_is_a_config_error():
    with pytest.raises(ConfigError, match="context window"):
        budget_for({"context_window": 1_000, "max_output_tokens": 2_000}, model="some-model")


def test_a_small_window_takes_a_smaller_default_output_limit():
    """`[models."qwen-small"] context_window = 2048` said "max_output_tokens (3072) must be
    smaller than the context window (2048)" of a limit the user never set (a probe, stop 31):
    digest's own default output cap is a quarter of a small window."""
    budget = budget_for({"context_window": 2_048}, model="qwen-small")
    assert budget.max_output_tokens == 512 and budget.input_tokens >= 1_000


@pytest.mark.parametrize(("config", "says"), [
    ({"context_window": 1_024, "max_output_tokens": 512}, "leaves 212 tokens for papers"),
    ({"context_window": 1_000, "max_output_tokens": 2_000}, "must be smaller than the context"),
    ({"context_window": 16_000, "max_output_tokens": 50}, "too few for one answer"),
])
def test_a_window_or_output_limit_too_small_for_one_paper_is_a_config_error(config, says):
    """A 1,024-token window with 512 for the answer was accepted, and every prompt (600-670
    tokens of one paper and the instructions) was bigger than it: the server refused them all
    and the issue was summarised offline; 50 output tokens cut every answer (a probe)."""
    with pytest.raises(ConfigError, match=says) as caught:
        budget_for(config, model="small")
    assert "small" in str(caught.value) and ("raise" in str(caught.value)
                                             or "lower" in str(caught.value))


def test_the_default_budget_gives_each_seed_theme_one_call():
    """Fewer, fuller batches (issue 15 point 5): the seed pages' themes (up to 30 papers,
    ~9,300 prompt tokens) each fit one call with gpt-4o-mini's card, so no theme needs a
    merge call: 8 batches and the intro for 179 papers, 5 calls per 100 papers."""
    from digest.dedup import deduplicate
    from digest.ingest import load_sources
    from digest.llm.catalog import model_card
    from digest.themes import group_papers
    from digest.tokens import TokenCounter

    from .conftest import SEEDS

    papers = deduplicate(load_sources([str(SEEDS)]).records).papers
    themes = group_papers(papers, max_themes=10)
    counter = TokenCounter("gpt-4o-mini")
    budget = budget_for({}, model_card("gpt-4o-mini"), "gpt-4o-mini")
    batches = plan_batches(themes, {p.id: p for p in papers},
                           lambda p: counter.count(f"[P00] {p.title}\n{p.abstract}\n"), budget)
    assert max(len(t.paper_ids) for t in themes) >= 29  # big enough to have needed two calls
    assert len(batches) == len(themes)
    assert 100 * (len(batches) + 1) / len(papers) <= 6
