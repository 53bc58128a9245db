"""Stepping down from json_schema, at the default concurrency, against servers that refuse it.

Issue 18: at concurrency 4 a llama-cpp-python server (json_schema → HTTP 500 naming
``response_format.type``) sent the whole issue offline before the model was judged: one
thread probed plainer formats while the three others collected 500s and opened the breaker.
A probe that timed out was spent, and the level stayed at json_schema for good.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from .fake_openai import FakeOpenAI, Reply, probe_hangs_once, server_like
from .test_llm_stage import every_paper_has_a_gist, run_stage


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def all_answered(summaries, summarizer, themes) -> bool:
    return (summarizer.stats.stopped is None and not any(s.offline for s in summaries)
            and every_paper_has_a_gist(summaries, themes))


def test_a_500_naming_response_format_steps_down_at_once_at_concurrency_4(server):
    server.responder = server_like("llama-cpp-python", answer_delay_s=0.3)
    summaries, summarizer, themes = run_stage(server, 3, 3, 3, 3, 3, 3)  # concurrency 4
    assert all_answered(summaries, summarizer, themes)
    sent = server.sent_formats()
    refused = sent.count("json_schema")
    assert 1 <= refused <= 4  # at most the calls sent before the first refusal came back
    calls = summarizer.stats.calls
    assert sent.count("json_object+schema") == calls  # one per call, with the schema
    assert len(sent) == refused + calls  # nothing else: no retries, no probe
    assert summarizer.stats.retries == 0 and summarizer.stats.failed_calls == 0


def test_a_probe_that_times_out_is_not_spent_and_the_others_wait_for_its_verdict(server):
    server.responder = probe_hangs_once(answer_delay_s=0.2)
    summaries, summarizer, themes = run_stage(server, 3, 3, 3, 3, 3, 3, timeout_s=1.0)
    assert all_answered(summaries, summarizer, themes)
    sent = server.sent_formats()
    # the probe that hung, then one per call
    assert sent.count("json_object+schema") == summarizer.stats.calls + 1
    assert summarizer.stats.failed_calls == 0  # the probe's timeout was retried, no call failed


def test_a_real_outage_still_opens_the_breaker_at_concurrency_4(server):
    server.default = Reply.fail(503, "down")
    summaries, summarizer, themes = run_stage(server, 3, 3, 3, 3, 3, 3)
    assert summarizer.stats.stopped.startswith("circuit breaker")
    assert all(s.offline for s in summaries) and every_paper_has_a_gist(summaries, themes)
