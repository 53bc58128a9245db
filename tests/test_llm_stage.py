"""The summarize stage against a real local OpenAI-compatible server: answers, faults, limits.

Every test runs the real Summarizer, runner and openai client over HTTP; only the backoff
sleep is injected (a constructor argument), so retries cost no wall time.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from digest.chunk import Budget, plan_batches
from digest.cli import app
from digest.errors import LLMError
from digest.llm import BackendSettings, OpenAIChat, Price
from digest.llm.runner import RunLimits
from digest.models import Paper, Theme
from digest.prompts import Prompts
from digest.state import Store
from digest.summarize import Summarizer
from digest.tokens import TokenCounter

from .conftest import EXAMPLES
from .fake_openai import FakeOpenAI, Reply, echoing, made_up_papers, smart_answer

KEY = "sk-stage-secret-0123456789"
NONCE = "a1b2c3d4e5f6"


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


def themes_of(*sizes: int) -> tuple[list[Theme], dict[str, Paper]]:
    themes, papers, start = [], {}, 0
    for index, size in enumerate(sizes):
        batch = made_up_papers(size, topic_index=index, start=start)
        start += size
        papers.update({p.id: p for p in batch})
        themes.append(Theme(f"label {index}", (f"kw{index}a", f"kw{index}b"),
                            tuple(p.id for p in batch)))
    return themes, papers


def run_stage(server: FakeOpenAI, *sizes: int, store: Store | None = None,
              budget: Budget | None = None, prompts: Prompts | None = None,
              timeout_s: float = 5.0, temperature: float = 0.2, **limits: Any):
    themes, papers = themes_of(*sizes)
    backend = OpenAIChat(BackendSettings(model="gpt-4o-mini", api_key=KEY, base_url=server.url,
                                         timeout_s=timeout_s, max_attempts=2,
                                         temperature=temperature),
                         sleep=lambda seconds: None)
    try:
        summarizer = Summarizer(backend, prompts=prompts or Prompts(),
                                counter=TokenCounter("gpt-4o-mini"), budget=budget or Budget(),
                                store=store, nonce=NONCE, limits=RunLimits(**limits))
        batches = plan_batches(themes, papers, summarizer.paper_tokens, summarizer.budget)
        summaries = summarizer.summarize(themes, papers, batches)
    finally:
        backend.close()
    return summaries, summarizer, themes


def tasks(server: FakeOpenAI) -> list[str]:
    """What each request asked for, from its data block: P (batch), S (merge), T (intro)."""
    kinds = []
    for request in server.chat_requests:
        first = re.search(r"^\[([PST])\d+\]", request.user_text, re.MULTILINE)
        kinds.append(first[1] if first else "?")
    return kinds


def every_paper_has_a_gist(summaries, themes) -> bool:
    return all(set(s.gists) == set(t.paper_ids) and all(s.gists.values())
               for s, t in zip(summaries, themes, strict=True))


def when(marker: str, reply: Reply, times: int = 1):
    """A responder: ``reply`` for the first ``times`` requests whose user text has ``marker``."""
    left = [times]

    def respond(body: dict[str, Any]) -> Reply | None:
        text = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        if marker in text and left[0] > 0:
            left[0] -= 1
            return reply
        return None

    return respond


# The happy path, caching, prompts (the rest, with no HTTP in question, in
# test_summarize_mock.py) ------------------------------------------------------------------







def test_another_temperature_is_a_new_question(server, tmp_path):
    with Store(tmp_path / "state.sqlite") as store:
        run_stage(server, 3, store=store)
        _, summarizer, _ = run_stage(server, 3, store=store, temperature=0.7)
    assert len(server.chat_requests) == 4 and summarizer.stats.cache_hits == 0
    assert server.chat_requests[-1].body["temperature"] == 0.7






def test_cached_input_tokens_are_priced_at_their_discount(server):
    server.default = Reply(cached_tokens=1000)
    price = Price(input=1.0, cached_input=0.1, output=2.0)
    _, summarizer, _ = run_stage(server, 3, price=price)
    stats = summarizer.stats
    assert stats.cached_tokens == 2000
    expected = price.cost(stats.prompt_tokens, 2000, stats.completion_tokens)
    assert stats.cost_usd == pytest.approx(expected)
    assert stats.cost_usd < price.cost(stats.prompt_tokens, 0, stats.completion_tokens)


# Map-reduce ----------------------------------------------------------------------------





# Invalid answers: one repair, then offline ----------------------------------------------

FIRST_BATCH = "We introduce Lattice0,"  # in theme 0's first abstract, never in the intro


@pytest.mark.parametrize("bad", [
    Reply.text("this is not json"),
    Reply.json({"title": "T", "summary": "Fine prose.", "gists": [{"id": "P9", "gist": "x"}]}),
    Reply.json({"title": "T", "summary": "See https://evil.example for more.",
                "gists": [{"id": f"P{i}", "gist": "A new verifier."} for i in (1, 2, 3)]}),
    Reply.text('{"title": "T", "summary": "cut', finish_reason="length"),
])
def test_an_invalid_answer_gets_one_repair(server, bad):
    server.responder = when(FIRST_BATCH, bad)
    summaries, summarizer, themes = run_stage(server, 3, concurrency=1)
    assert summarizer.stats.repairs == 1 and summarizer.stats.fallbacks == 0
    assert not summaries[0].offline and every_paper_has_a_gist(summaries, themes)
    repair = server.chat_requests[1].body["messages"]
    assert "could not be used" in repair[-1]["content"]
    cut = bad.finish_reason == "length"
    assert len(repair) == (3 if cut else 4)  # a cut answer is not sent back






# Faults ----------------------------------------------------------------------------------

def test_a_full_outage_trips_the_breaker_and_everything_is_summarised_offline(server):
    server.default = Reply.fail(503, "down")
    started = time.monotonic()
    summaries, summarizer, themes = run_stage(server, 3, 3, 3, 3, 3, 3, concurrency=1)
    assert time.monotonic() - started < 5
    assert len(server.chat_requests) == 3 * 2  # three calls of two attempts, then no more
    assert summarizer.stats.stopped.startswith("circuit breaker")
    assert all(s.offline for s in summaries) and every_paper_has_a_gist(summaries, themes)
    assert len(summarizer.stats.fallback_themes) == 6
    assert summarizer.intro(fallback="offline intro") == "offline intro"


@pytest.mark.parametrize("concurrency", [1, 4])
def test_a_failed_call_makes_the_endpoint_suspect_and_no_call_starts_after_the_breaker_opens(
        server, concurrency):
    server.default = Reply.fail(503, "down")
    summaries, summarizer, themes = run_stage(server, 3, 3, 3, 3, 3, 3, concurrency=concurrency)
    asked = {request.user_text for request in server.chat_requests}
    # Concurrency 1: the three failed calls. 4: the four started at once, none after them
    # (before: 6 calls, 12 requests, as batches 5 and 6 started when 1 and 2 failed).
    assert len(asked) == max(3, concurrency)
    assert len(server.chat_requests) <= 2 * len(asked)
    assert summarizer.stats.stopped.startswith("circuit breaker")
    assert all(s.offline for s in summaries) and every_paper_has_a_gist(summaries, themes)


def test_calls_in_flight_make_no_further_attempt_once_the_breaker_opens(server):
    def respond(body: dict[str, Any]) -> Reply:
        if "We introduce Quill3," in body["messages"][1]["content"]:  # the second batch
            time.sleep(0.5)  # still out when the other batch has failed twice
        return Reply.fail(503, "down")

    server.responder = respond
    summaries, summarizer, _ = run_stage(server, 3, 3, concurrency=2, breaker_after=1)
    slow = [r for r in server.chat_requests if "We introduce Quill3," in r.user_text]
    assert len(slow) == 1  # its retry was never sent (before: 2)
    assert summarizer.stats.stopped.startswith("circuit breaker")
    assert all(s.offline for s in summaries)


def test_429_with_retry_after_is_retried_and_the_run_completes(server):
    server.responder = when(FIRST_BATCH, Reply.fail(429, "slow", retry_after="1"))
    summaries, summarizer, _ = run_stage(server, 3)
    assert summarizer.stats.retries == 1 and not summaries[0].offline


def test_a_quota_error_stops_all_calling_at_once(server):
    server.default = Reply.fail(429, "You exceeded your current quota", code="insufficient_quota")
    summaries, summarizer, _ = run_stage(server, 3, 3, 3, concurrency=1)
    assert len(server.chat_requests) == 1
    assert "quota" in (summarizer.stats.stopped or "") and all(s.offline for s in summaries)


def test_a_bad_key_stops_the_run_with_a_fix_it_message(server):
    server.default = Reply.fail(401, "invalid api key")
    with pytest.raises(LLMError, match="check OPENAI_API_KEY"):
        run_stage(server, 3, 3, 3, concurrency=1)
    assert len(server.chat_requests) == 1


def test_a_hanging_server_is_bounded_by_the_timeout_and_the_deadline(server):
    server.default = Reply(hang=True)
    started = time.monotonic()
    summaries, summarizer, themes = run_stage(server, *[3] * 8, timeout_s=0.3,
                                              deadline_s=1.0, breaker_after=99, concurrency=2)
    assert time.monotonic() - started < 2.5
    assert len(server.chat_requests) < 9
    assert all(s.offline for s in summaries) and every_paper_has_a_gist(summaries, themes)
    assert "deadline" in (summarizer.stats.stopped or "")


def test_a_call_cut_by_the_run_deadline_says_the_deadline_cut_it(server, caplog):
    """... once on stderr too: a run whose every theme the deadline sent offline logged
    nothing, while the breaker, quota and cost stops each say so (a probe, stop 28)."""
    server.default = Reply(hang=True)
    with caplog.at_level(logging.WARNING, logger="digest"):
        _, summarizer, _ = run_stage(server, 3, timeout_s=30.0, deadline_s=0.5, concurrency=1)
    said = [r.getMessage() for r in caplog.records if "deadline" in r.getMessage()]
    assert len(said) == 1 and "the rest is summarised offline" in said[0], said
    assert len(server.chat_requests) == 1  # no retry past the deadline
    errors = summarizer.stats.errors
    assert len(errors) == 1 and "deadline cut this call" in errors[0]
    assert "timeout" not in errors[0] and "30 s" not in errors[0]
    assert summarizer.stats.stopped == "the run deadline (setting deadline)"


def test_a_call_cut_by_the_request_timeout_names_the_timeout(server):
    server.default = Reply(hang=True)
    _, summarizer, _ = run_stage(server, 3, timeout_s=0.3, deadline_s=60.0, breaker_after=1)
    errors = summarizer.stats.errors
    assert len(errors) == 1 and "did not answer within 0.3 s" in errors[0]
    assert "timeout" in errors[0] and "deadline" not in errors[0]


def test_a_server_answering_500_to_json_schema_steps_down_once_for_the_run(server):
    server.reject_formats = {"json_schema": 500}
    summaries, _, _ = run_stage(server, 3, 3, 3, concurrency=1)
    formats = [(r.body.get("response_format") or {}).get("type") for r in server.chat_requests]
    assert formats == ["json_schema", "json_object", "json_object", "json_object",
                       "json_object"]
    assert not any(s.offline for s in summaries)


def test_a_plain_text_server_answer_is_still_parsed(server):
    server.reject_formats = {"json_schema": 400, "json_object": 400}
    server.responder = lambda body: Reply.text("Sure! ```json\n" + smart_answer(body) + "\n```")
    summaries, _, _ = run_stage(server, 3, concurrency=1)
    assert not summaries[0].offline
    assert "response_format" not in server.chat_requests[-1].body


# Limits ----------------------------------------------------------------------------------



def test_max_tokens_stops_calling_and_the_rest_is_offline(server):
    summaries, summarizer, _ = run_stage(server, 3, 3, 3, 3, max_tokens=1200, concurrency=1)
    assert 0 < len(server.chat_requests) < 5
    assert summarizer.stats.prompt_tokens + summarizer.stats.completion_tokens <= 1200
    assert "max_tokens = 1200" in (summarizer.stats.stopped or "")
    assert any(s.offline for s in summaries)


def test_max_cost_stops_calling_before_the_budget_is_passed(server):
    price = Price(input=100.0, cached_input=50.0, output=100.0)  # about 8 cents a call
    summaries, summarizer, _ = run_stage(server, 3, 3, 3, 3, max_cost_usd=0.12, price=price,
                                         concurrency=1)
    assert summarizer.stats.cost_usd <= 0.12 and 0 < len(server.chat_requests) < 5
    assert "setting max_cost" in (summarizer.stats.stopped or "")


def test_no_progress_bar_when_stderr_is_not_a_terminal(server, capsys):
    run_stage(server, 3)
    assert capsys.readouterr().err == ""


def test_the_run_report_lists_fallback_themes_and_the_cli_exits_75_on_demand(server, tmp_path):
    server.default = Reply.fail(429, "You exceeded your current quota", code="insufficient_quota")
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
            "--base-url", server.url, "--timeout", "2", "--report", str(tmp_path / "r.json"),
            "--state", str(tmp_path / "s.sqlite")]
    degraded = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    report = json.loads((tmp_path / "r.json").read_text())
    assert degraded.exit_code == 0, degraded.output
    assert report["llm"]["degraded"] and report["llm"]["fallback_themes"]
    issue = (tmp_path / "a" / "2026-W47.md").read_text()
    assert "summarised offline" in issue
    papers = report["counts"]["papers_in_issue"]
    assert papers == 30 and len(re.findall(r"^- \*\*", issue, re.MULTILINE)) == papers
    failing = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b"),
                                       "--fail-on-degraded"])
    assert failing.exit_code == 75 and not (tmp_path / "b" / "2026-W47.md").exists()


def test_an_answer_echoing_the_api_key_reaches_no_output_and_no_cache(
        server, tmp_path, monkeypatch):
    """A lying server put the key in the model's content: it was published unmasked in the
    .md, .html, .txt, feed and .history.json, and kept in the store's cache (a probe, stop
    31). Now an answer is read with the key masked, before it is checked or cached."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server.responder = echoing(KEY)
    out, state = tmp_path / "out", tmp_path / "s.sqlite"
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
        "--base-url", server.url, "--out", str(out), "--state", str(state),
        "--formats", "md,html,txt", "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert server.chat_requests and KEY not in result.output
    # masked, the answers fail the prose rules (``***`` is markup): each gets its repair
    assert json.loads((tmp_path / "r.json").read_text())["llm"]["repairs"] == 6
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert {path.name for path in written} >= {"2026-W47.md", "2026-W47.html", "2026-W47.txt",
                                               "feed.xml", ".history.json", "s.sqlite"}
    assert [path.name for path in written if KEY.encode() in path.read_bytes()] == []


def test_a_title_with_markup_is_dropped_and_the_theme_keeps_its_label(server):
    def answer(body: dict[str, Any]) -> Reply | None:
        data = json.loads(smart_answer(body))
        if "gists" in data:
            data["title"] = "**Verified** learning, see www.example.com"
        return Reply.json(data)

    server.responder = answer
    summaries, summarizer, _ = run_stage(server, 3)
    assert summaries[0].title is None and not summaries[0].offline
    assert summarizer.stats.repairs == 0


def test_a_progress_bar_can_be_forced_and_the_run_still_completes(server):
    summaries, summarizer, _ = run_stage(server, 3, 3, progress=True)
    assert summarizer.stats.calls == 3 and not any(s.offline for s in summaries)


def test_cli_dry_run_prints_the_plan_and_sends_nothing(server, tmp_path):
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
        "--base-url", server.url, "--dry-run", "--out", str(tmp_path / "out"),
        "--state", str(tmp_path / "s.sqlite"), "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 0, result.output
    assert "Dry run (openai, gpt-4o-mini): nothing was sent." in result.output
    assert re.search(r"^total\s+\d+ calls", result.output, re.MULTILINE)
    assert server.chat_requests == [] and not (tmp_path / "out" / "2026-W47.md").exists()


@pytest.mark.parametrize("concurrency", [1, 3])
def test_calls_run_in_parallel_up_to_the_concurrency(server, concurrency):
    server.latency = 0.1
    summaries, _, _ = run_stage(server, 3, 3, 3, 3, 3, concurrency=concurrency)
    assert server.max_in_flight == concurrency
    assert len(server.chat_requests) == 6 and not any(s.offline for s in summaries)


def test_a_second_newsletter_run_of_the_week_makes_no_call_and_writes_identical_bytes(
        server, tmp_path):
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
            "--base-url", server.url, "--state", str(tmp_path / "s.sqlite")]
    first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "a")])
    sent = len(server.chat_requests)
    second = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "b")])
    assert first.exit_code == second.exit_code == 0, first.output + second.output
    assert sent > 0 and len(server.chat_requests) == sent
    issue = (tmp_path / "a" / "2026-W47.md").read_bytes()
    assert "summarised offline" not in issue.decode()
    assert (tmp_path / "b" / "2026-W47.md").read_bytes() == issue
    # the footer shows what the answers cost when bought, though the second run paid nothing
    ledger = Store(tmp_path / "s.sqlite")
    paid = sum(row.cost_usd for row in ledger.calls())
    ledger.close()
    footer = re.search(r"cost \$(\d+\.\d+)", issue.decode())
    assert paid > 0 and footer is not None and float(footer[1]) == pytest.approx(paid, abs=1e-4)


def test_a_run_a_bad_key_stops_reports_what_it_read_and_the_calls_it_made(server, tmp_path):
    """After a 401 the run report said records_read 0 and llm {}: 40 records had been read and
    a call made (a probe, stop 28). A report "at the end of every run, also when it fails"."""
    server.default = Reply.fail(401, "invalid api key")
    result = CliRunner().invoke(app, [
        "newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
        "--base-url", server.url, "--out", str(tmp_path / "out"), "--concurrency", "1",
        "--state", str(tmp_path / "s.sqlite"), "--report", str(tmp_path / "r.json")])
    assert result.exit_code == 1, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["counts"]["records_read"] == 40 and report["counts"]["papers_unique"] == 30
    assert report["llm"]["calls"] == 1 and report["llm"]["failed_calls"] == 1
    assert "check OPENAI_API_KEY" in report["errors"][-1]


def test_repairs_count_the_repairs_sent_not_those_a_limit_stopped(server, tmp_path):
    """With a model that never answers in JSON and a token limit that leaves no room for the
    repairs, the report said `repairs: 2` though the server got only the 2 first prompts (a
    probe, stop 31): the README's `repairs` is the invalid answers sent back."""
    server.responder = lambda body: Reply.text("I cannot answer in JSON, sorry.")
    report = tmp_path / "r.json"
    result = CliRunner().invoke(app, [
        "summarize", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai", "--base-url",
        server.url, "--no-cache", "--max-tokens", "6000", "--report", str(report)])
    assert result.exit_code == 0, result.output
    llm = json.loads(report.read_text())["llm"]
    repairs_sent = sum(1 for sent in server.chat_requests if len(sent.body["messages"]) > 2)
    assert llm["repairs"] == repairs_sent
    assert llm["calls"] == len(server.chat_requests)
