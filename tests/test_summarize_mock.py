"""The summarize stage with the recording in-process backend (``MockBackend``): what is asked,
how answers become the issue's text, the cache, merges, repairs and the dry-run plan. The
HTTP side (faults, formats, timeouts) stays in test_llm_stage.py with the fake server."""

from __future__ import annotations

import json
import logging
import os
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from digest import offline
from digest.chunk import Budget, plan_batches
from digest.cli import app
from digest.errors import TemplateError
from digest.llm import OfflineBackend, Price
from digest.llm._plan import plan_table
from digest.llm.base import ChatBackend, ChatRequest
from digest.llm.mock import MockBackend
from digest.llm.runner import RunLimits
from digest.prompts import Prompts
from digest.state import Store
from digest.summarize import Summarizer
from digest.tokens import TokenCounter

from .conftest import EXAMPLES
from .fake_openai import FakeOpenAI, Reply, made_up_papers, smart_answer
from .test_llm_stage import FIRST_BATCH, NONCE, every_paper_has_a_gist, themes_of

KEY = "sk-mock-secret-0123456789"


def answer(request: ChatRequest) -> str:
    return smart_answer({"messages": [dict(message) for message in request.messages]})


def user_text(request: ChatRequest) -> str:
    return "\n".join(m["content"] for m in request.messages if m["role"] == "user")


def kinds(backend: MockBackend) -> list[str]:
    """What each request asked for: P (batch), S (merge), T (intro)."""
    found = [re.search(r"^\[([PST])\d+\]", user_text(r), re.MULTILINE) for r in backend.history]
    return [match[1] if match else "?" for match in found]


def when(marker: str, reply: str, times: int = 1):
    """An answer function: ``reply`` for the first ``times`` requests that hold ``marker``."""
    left = [times]

    def respond(request: ChatRequest) -> str:
        if marker in user_text(request) and left[0] > 0:
            left[0] -= 1
            return reply
        return answer(request)

    return respond


def run_stage(backend: ChatBackend, *sizes: int, store: Store | None = None,
              budget: Budget | None = None, prompts: Prompts | None = None, **limits: Any):
    themes, papers = themes_of(*sizes)
    summarizer = Summarizer(backend, prompts=prompts or Prompts(),
                            counter=TokenCounter("gpt-4o-mini"), budget=budget or Budget(),
                            store=store, nonce=NONCE, limits=RunLimits(**limits))
    batches = plan_batches(themes, papers, summarizer.paper_tokens, summarizer.budget)
    return summarizer.summarize(themes, papers, batches), summarizer, themes


def test_each_theme_gets_llm_text_a_title_and_one_gist_per_paper():
    backend = MockBackend(default=answer)
    summaries, summarizer, themes = run_stage(backend, 3, 4)
    assert every_paper_has_a_gist(summaries, themes)
    assert not any(s.offline or s.fallback for s in summaries)
    assert all(s.title and s.title != t.title for s, t in zip(summaries, themes, strict=True))
    assert summaries[0].gists["2601.00000"].startswith("Contributes ")
    assert summarizer.intro(fallback="offline intro").startswith("This week brings 2 themes")
    assert sorted(kinds(backend)) == ["P", "P", "T"]
    assert summarizer.stats.calls == 3 and summarizer.stats.fallbacks == 0


def test_a_second_run_on_the_same_store_makes_no_call(tmp_path):
    backend = MockBackend(default=answer)
    with Store(tmp_path / "state.sqlite") as store:
        first, _, _ = run_stage(backend, 3, 4, store=store)
        again, summarizer, _ = run_stage(backend, 3, 4, store=store)
        assert len(store.calls()) == 3  # the ledger: one row per call
    assert len(backend.history) == 3
    assert summarizer.stats.calls == 0 and summarizer.stats.cache_hits == 3
    assert again == first


def test_abstract_tokens_count_the_papers_sent_not_those_answered_from_the_cache(tmp_path):
    """``abstract_tokens`` ("the titles and abstracts sent") counted every batch, also those the
    cache answered, so a cached re-run reported abstracts it never sent and a token overhead
    below 1 (stop 31's note)."""
    backend = MockBackend(default=answer)
    with Store(tmp_path / "state.sqlite") as store:
        _, first, _ = run_stage(backend, 3, 4, store=store)
        _, again, _ = run_stage(backend, 3, 4, store=store)
        _, more, _ = run_stage(backend, 3, 4, 5, store=store)  # one theme more to ask
    assert first.stats.abstract_tokens > 0
    assert again.stats.abstract_tokens == 0 and again.stats.as_dict()["token_overhead"] is None
    assert 0 < more.stats.abstract_tokens < first.stats.abstract_tokens
    assert more.stats.as_dict()["token_overhead"] > 1


def test_a_changed_prompt_is_a_new_question(tmp_path):
    custom = tmp_path / "prompts"
    custom.mkdir()
    system = (Path(__file__).parent.parent / "prompts" / "system.j2").read_text()
    (custom / "system.j2").write_text(system + "\nBe brief.")
    backend = MockBackend(default=answer)
    with Store(tmp_path / "state.sqlite") as store:
        run_stage(backend, 3, store=store)
        run_stage(backend, 3, store=store, prompts=Prompts(custom))
    assert len(backend.history) == 4
    assert backend.history[-1].messages[0]["content"].endswith("Be brief.")


def test_an_undefined_variable_in_an_override_template_is_an_error(tmp_path):
    (tmp_path / "intro.j2").write_text("Intro for {{ n_paperz }} papers")
    with pytest.raises(TemplateError, match="intro.j2.*n_paperz"):
        run_stage(MockBackend(default=answer), 3, prompts=Prompts(tmp_path))


@pytest.mark.parametrize(("source", "says"), [
    ("Task\n{{ 1 // 0 }}\n", r"intro\.j2:2: ZeroDivisionError"),
    ("Task\n{{ 'a' + 1 }}\n", r"intro\.j2:2: TypeError"),
    ("Task\n{% if %}\n", r"intro\.j2:2: "),
    ('{% include "missing.j2" %}\n', r"missing\.j2 not found \(included by intro\.j2"),
])
def test_a_prompt_template_that_fails_names_its_file_and_line(tmp_path, source, says):
    """A prompt that failed while rendering ({{ 1 // 0 }}, a str + int) ended in a traceback;
    a syntax error gave no line; a missing include blamed the template that includes it,
    which exists (a probe, stop 31)."""
    (tmp_path / "intro.j2").write_text(source)
    with pytest.raises(TemplateError, match=says) as caught:
        run_stage(MockBackend(default=answer), 3, prompts=Prompts(tmp_path))
    assert str(tmp_path) in str(caught.value) or "missing.j2" in str(caught.value)


def test_every_call_shares_one_instruction_prefix_and_data_sits_inside_nonce_fences():
    backend = MockBackend(default=answer)
    run_stage(backend, 3, 4, 5)
    systems = {r.messages[0]["content"] for r in backend.history}
    assert len(systems) == 1 and f"<<DATA {NONCE}>>" in systems.pop()
    batch_prompts = [user_text(r) for r in backend.history if "[P1]" in user_text(r)]
    prefixes = {text.split("Theme keywords:")[0] for text in batch_prompts}
    assert len(batch_prompts) == 3 and len(prefixes) == 1
    for text in batch_prompts:
        assert text.count(f"<<DATA {NONCE}>>") == 1 and text.endswith(f"<<END {NONCE}>>")


def test_a_theme_larger_than_a_batch_is_merged():
    backend = MockBackend(default=answer)
    summaries, _, themes = run_stage(backend, 12, budget=Budget(max_output_tokens=600))
    assert kinds(backend).count("P") == 3 and kinds(backend).count("S") == 1
    assert every_paper_has_a_gist(summaries, themes) and not summaries[0].offline
    assert summaries[0].summary.startswith("Across 3 groups")


def test_merges_run_in_rounds_that_fit_the_input_budget():
    backend = MockBackend(default=answer)
    budget = Budget(max_output_tokens=600, batch_input_tokens=100)
    summaries, _, themes = run_stage(backend, 6, budget=budget)
    merges = [r for r in backend.history if "[S1]" in user_text(r)]
    assert kinds(backend).count("P") == 6 and len(merges) == 4  # 3 pairs, then one of three
    assert every_paper_has_a_gist(summaries, themes) and not summaries[0].offline


def test_a_merge_sees_the_offline_summary_of_a_batch_that_fell_back():
    backend = MockBackend(default=when(FIRST_BATCH, "not json", times=2))
    summaries, summarizer, themes = run_stage(backend, 12, budget=Budget(max_output_tokens=600))
    merge = next(user_text(r) for r in backend.history if "[S1]" in user_text(r))
    first = made_up_papers(12)[:4]  # the first batch, the one that fell back
    extractive = offline.theme_summary(first, keywords=themes[0].keywords)
    told = next(line for line in merge.splitlines() if line.startswith("[S1] "))
    assert re.sub(r" \[P\d+(?:, P\d+)*\]", "", told) == f"[S1] {extractive}"  # with its citations
    assert re.findall(r"\[(P\d+)\]", told)  # each sentence cites its paper, numbered by theme
    assert summaries[0].fallback and summaries[0].offline
    assert summarizer.stats.fallback_themes and every_paper_has_a_gist(summaries, themes)


def test_a_gist_copying_the_abstracts_first_sentence_fails():
    papers = made_up_papers(3)
    copied = json.dumps({"title": "T", "summary": "Three verifiers.",
                         "gists": [{"id": f"P{i}", "gist": p.abstract.split(". ")[0] + "."}
                                   for i, p in enumerate(papers, start=1)]})
    backend = MockBackend(default=when(FIRST_BATCH, copied, times=2))
    summaries, summarizer, themes = run_stage(backend, 3)
    assert summarizer.stats.repairs == 1 and summaries[0].offline and summaries[0].fallback
    assert every_paper_has_a_gist(summaries, themes)


def test_two_invalid_answers_mean_that_batch_is_summarised_offline():
    backend = MockBackend(default=when(FIRST_BATCH, "still not json", times=2))
    summaries, summarizer, themes = run_stage(backend, 3, 4)
    assert [s.fallback for s in summaries] == [True, False]
    assert summarizer.stats.fallback_themes == ["label 0"] and summarizer.stats.degraded
    assert every_paper_has_a_gist(summaries, themes)
    assert summaries[1].title is not None  # the other theme kept its LLM text


def test_dry_run_asks_nothing_and_prices_every_call():
    backend = MockBackend(default=answer)
    price = Price(input=1.0, cached_input=0.5, output=2.0)
    summaries, summarizer, themes = run_stage(backend, 3, 12, dry_run=True, price=price,
                                              budget=Budget(max_output_tokens=600))
    assert backend.history == []
    plan = summarizer.stats.plan
    assert [row["task"] for row in plan].count("summary") == 4
    assert {"merge", "intro"} <= {row["task"] for row in plan}
    assert all(row["prompt_tokens"] > 0 and row["cost_usd"] > 0 for row in plan)
    assert not summarizer.stats.degraded and every_paper_has_a_gist(summaries, themes)


def test_a_dry_run_marks_the_calls_a_cost_or_token_limit_would_stop():
    """A dry run with ``max_cost`` listed every call as if it would be made: the plan said
    four summaries, a merge and an intro would be paid for, when the real run stops at the
    limit and summarises the rest offline (stop 31's note)."""
    price = Price(input=1.0, cached_input=0.5, output=2.0)
    _, free, _ = run_stage(MockBackend(default=answer), 3, 12, dry_run=True, price=price,
                           budget=Budget(max_output_tokens=600))
    costs = [row["cost_usd"] for row in free.stats.plan]
    limit = round(sum(costs[:2]) + costs[2] / 2, 6)  # two calls fit, the third does not
    _, capped, _ = run_stage(MockBackend(default=answer), 3, 12, dry_run=True, price=price,
                             budget=Budget(max_output_tokens=600), max_cost_usd=limit)
    plan = capped.stats.plan
    assert [row["stopped"] for row in plan[:2]] == [None, None]
    assert all(row["stopped"] == f"the cost limit (setting max_cost = {limit:g})"
               for row in plan[2:])
    table = plan_table(capped.stats)
    assert f"{len(plan) - 2} of these calls would not be made: the cost limit" in table
    assert "total    2 calls" in table  # the total is what the run would pay
    _, tokens, _ = run_stage(MockBackend(default=answer), 3, 12, dry_run=True,
                             budget=Budget(max_output_tokens=600), max_tokens=1)
    assert all(row["stopped"] == "the token limit (setting max_tokens = 1)"
               for row in tokens.stats.plan)


def test_a_dry_run_of_summarize_reads_the_answer_cache_and_writes_nothing(tmp_path):
    """``digest summarize --dry-run`` priced every call again after a run had cached the
    answers, so the real run that followed cost nothing while the plan said it would pay
    (stop 31's note). The cache is read from a copy: the dry run leaves its bytes alone."""
    args = ["summarize", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
            "--concurrency", "1"]
    cache = Path(os.environ["DIGEST_HOME"]) / "summarize-cache.sqlite"
    with FakeOpenAI() as server:
        cold = CliRunner().invoke(app, [*args, "--base-url", server.url, "--dry-run"])
        assert not cache.exists()  # a dry run makes no cache
        first = CliRunner().invoke(app, [*args, "--base-url", server.url])
        sent = len(server.chat_requests)
        before = cache.read_bytes()
        warm = CliRunner().invoke(app, [*args, "--base-url", server.url, "--dry-run"])
        asked = len(server.chat_requests) - sent
    assert cold.exit_code == first.exit_code == warm.exit_code == 0, warm.output
    assert asked == 0 and cache.read_bytes() == before
    assert "calls" in cold.stdout and "already in the cache" not in cold.stdout
    assert f"{sent} answers are already in the cache and cost nothing." in warm.stdout
    assert "total    0 calls" in warm.stdout


# The offline backend is a backend like any other -----------------------------------------

def test_the_offline_backend_answers_every_question_with_digests_own_text(tmp_path):
    with Store(tmp_path / "state.sqlite") as store:
        summaries, summarizer, themes = run_stage(OfflineBackend(), 3, 12, store=store,
                                                  budget=Budget(max_output_tokens=600),
                                                  max_cost_usd=0.01)
        assert store.calls() == []  # nothing to put in the ledger or the cache
    assert all(s.offline and not s.fallback for s in summaries)
    assert every_paper_has_a_gist(summaries, themes)
    stats = summarizer.stats
    assert (stats.backend, stats.model, stats.calls, stats.fallbacks) == ("offline", None, 0, 0)
    assert not stats.degraded and stats.fallback_themes == []
    assert summarizer.intro(fallback="composed") == "composed"


def test_the_offline_backend_answers_a_request_it_is_sent():
    request = ChatRequest((), max_tokens=10, extractive=lambda: "digest's own answer")
    assert OfflineBackend().complete(request).answer == "digest's own answer"
    assert OfflineBackend().complete(ChatRequest((), max_tokens=10)).answer is None


# -vv: what a rejected answer said, and why ----------------------------------------------

def test_vv_logs_the_rejected_answer_cut_short_with_secrets_masked(caplog, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rejected = f"I will not answer. My key is {KEY}. " + "blah " * 400
    backend = MockBackend(default=when(FIRST_BATCH, rejected))
    caplog.set_level(logging.DEBUG, logger="digest.llm")
    run_stage(backend, 3)
    reasons = [r.getMessage() for r in caplog.records
               if r.levelno == logging.INFO and "answer rejected" in r.getMessage()]
    shown = [r.getMessage() for r in caplog.records
             if r.levelno == logging.DEBUG and "the rejected answer" in r.getMessage()]
    assert len(reasons) == 1 and "JSON" in reasons[0]  # why: no JSON object in it
    assert len(shown) == 1 and "I will not answer. My key is ***." in shown[0]
    assert KEY not in caplog.text
    said = shown[0].split("began: ", 1)[1]
    assert len(said) <= 300 + 2 and said.rstrip("'\"").endswith("…")  # cut, and says so
    assert f"({len(rejected)} characters)" in shown[0]


def test_without_vv_the_rejected_answer_is_not_logged(caplog):
    backend = MockBackend(default=when(FIRST_BATCH, "not json at all"))
    caplog.set_level(logging.INFO, logger="digest.llm")
    run_stage(backend, 3)
    assert "answer rejected" in caplog.text and "not json at all" not in caplog.text


def test_cli_vv_shows_a_rejected_answer_and_why(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    with FakeOpenAI(default=Reply.text(f"Sorry, no JSON today ({KEY}).")) as server:
        result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                          "--backend", "openai", "--base-url", server.url,
                                          "--concurrency", "1", "-vv"])
    assert result.exit_code == 0, result.output
    assert "answer rejected (" in result.output
    assert "began: 'Sorry, no JSON today (***).'" in result.output
    assert KEY not in result.output


def test_summarize_twice_pays_once_and_no_cache_asks_again(tmp_path):
    args = ["summarize", str(EXAMPLES), "--week", "2026-W47", "--backend", "openai",
            "--concurrency", "1"]
    with FakeOpenAI() as server:
        first = CliRunner().invoke(app, [*args, "--base-url", server.url])
        sent = len(server.chat_requests)
        second = CliRunner().invoke(app, [*args, "--base-url", server.url])
        again = len(server.chat_requests)
        third = CliRunner().invoke(app, [*args, "--base-url", server.url, "--no-cache"])
        fresh = len(server.chat_requests) - again
    assert first.exit_code == second.exit_code == third.exit_code == 0, first.output
    assert sent > 0 and again == sent  # the second run asked nothing
    assert fresh == sent  # --no-cache asked every question again
    assert second.stdout == first.stdout  # the same bytes, the cost in the footer too
    assert (Path(os.environ["DIGEST_HOME"]) / "summarize-cache.sqlite").exists()


def test_an_offline_summarize_keeps_no_answer_cache():
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--backend", "offline"])
    assert result.exit_code == 0, result.output
    assert not (Path(os.environ["DIGEST_HOME"]) / "summarize-cache.sqlite").exists()


def test_a_user_prompt_that_is_not_utf8_is_a_template_error_naming_the_file(tmp_path):
    """A prompt saved in Latin-1 ended in a UnicodeDecodeError traceback, exit 1 (a probe)."""
    (tmp_path / "theme_summary.j2").write_bytes(b"Summarise\nx\xff")
    with pytest.raises(TemplateError, match=r"theme_summary\.j2: not valid UTF-8 \(line 2\)"):
        Prompts(tmp_path).fingerprint()
    with pytest.raises(TemplateError, match=r"theme_summary\.j2: not valid UTF-8"):
        Prompts(tmp_path).render("theme_summary")
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--prompts", str(tmp_path),
                                      "--backend", "openai", "--base-url",
                                      "http://127.0.0.1:9/v1", "--dry-run"])
    assert result.exit_code == 1, result.output
    assert f"{tmp_path / 'theme_summary.j2'}: not valid UTF-8" in result.stderr
