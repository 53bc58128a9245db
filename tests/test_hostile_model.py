"""A hostile or broken model: every bad answer costs its own batch only, never the issue.

Each mode of ``fake_openai.BROKEN_ANSWERS`` is a real HTTP answer from the fake server: a body
that is not UTF-8, not JSON, nested 100,000 deep, of the wrong shape; content nested 1,000
deep, 2 MB long, carrying lone surrogates, terminal escapes, bidi overrides, addresses in
plain, defanged or shortened form, an ungrounded title, or a copy of the instructions.
"""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pytest

from digest.textsafety import find_address

from .fake_openai import BROKEN_ANSWERS, FakeOpenAI, Reply
from .test_llm_stage import FIRST_BATCH, every_paper_has_a_gist, run_stage, server, when

__all__ = ["server"]  # the fixture, shared with test_llm_stage

UNUSABLE = ["invalid-utf8", "html-body", "empty-body", "deep-body", "wrong-shape",
            "content-not-text", "not-json", "deep-content", "oversized", "address", "defanged",
            "instruction-echo"]
CLEANED = ["lone-surrogate", "controls-bidi", "ungrounded-title"]
_UNSAFE_CHARS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def model_texts(summaries: list[Any], intro: str) -> list[str]:
    texts = [intro]
    for summary in summaries:
        texts += [summary.summary, summary.title or "", *summary.gists.values()]
    return texts


def assert_safe(texts: list[str]) -> None:
    for text in texts:
        assert not _UNSAFE_CHARS.search(text), repr(text)
        assert find_address(text) is None, repr(text)
        text.encode("utf-8")  # a lone surrogate would raise here, as the run report did


@pytest.mark.parametrize("mode", UNUSABLE)
def test_a_broken_answer_gets_one_repair_then_only_its_batch_goes_offline(
        server: FakeOpenAI, mode: str) -> None:
    broken = BROKEN_ANSWERS[mode]
    server.responder = when_body(FIRST_BATCH, broken, times=2)
    summaries, summarizer, themes = run_stage(server, 3, 4, concurrency=1)
    assert [s.offline for s in summaries] == [True, False]
    assert summarizer.stats.repairs == 1 and summarizer.stats.fallback_themes == ["label 0"]
    assert every_paper_has_a_gist(summaries, themes)
    assert len(server.chat_requests) == 4  # batch, its repair, the other batch, the intro
    assert_safe(model_texts(summaries, summarizer.intro(fallback="")))


@pytest.mark.parametrize("mode", UNUSABLE + CLEANED)
def test_when_every_answer_is_hostile_the_stage_still_finishes_clean(
        server: FakeOpenAI, mode: str) -> None:
    server.responder = BROKEN_ANSWERS[mode]
    summaries, summarizer, themes = run_stage(server, 3, 4, concurrency=2)
    assert every_paper_has_a_gist(summaries, themes)
    texts = model_texts(summaries, summarizer.intro(fallback="offline intro"))
    assert_safe(texts)
    json.dumps(summarizer.stats.as_dict(), ensure_ascii=False).encode("utf-8")
    if mode in UNUSABLE:
        assert all(s.offline for s in summaries)
    else:
        assert not any(s.offline for s in summaries)
        assert all(s.title is None for s in summaries)  # none of those titles is grounded


def test_a_lone_surrogate_and_controls_are_cleaned_not_refused(server: FakeOpenAI) -> None:
    server.responder = BROKEN_ANSWERS["lone-surrogate"]
    summaries, summarizer, _ = run_stage(server, 3)
    assert summaries[0].summary == "Broken text. It is here."
    assert summarizer.intro(fallback="") == "An intro with a lone half. It stays readable."
    server.responder = BROKEN_ANSWERS["controls-bidi"]
    summaries, _, _ = run_stage(server, 3)
    assert summaries[0].summary == "Red [31m alert here."


def test_what_the_cache_keeps_is_cleaned_too(server: FakeOpenAI, tmp_path) -> None:
    from digest.state import Store

    server.responder = BROKEN_ANSWERS["lone-surrogate"]
    with Store(tmp_path / "s.sqlite") as store:
        run_stage(server, 3, store=store)
        sent = len(server.chat_requests)
        again, _, _ = run_stage(server, 3, store=store)
    assert len(server.chat_requests) == sent and again[0].summary == "Broken text. It is here."
    raw = (tmp_path / "s.sqlite").read_bytes()
    assert b"\\ud800" not in raw and b"\\udfff" not in raw


def test_a_body_past_4_mb_is_not_read_to_its_end(server: FakeOpenAI) -> None:
    server.responder = when(FIRST_BATCH, Reply.raw(b'{"choices": "' + b"x" * 5_000_000 + b'"}'),
                            times=2)
    summaries, summarizer, _ = run_stage(server, 3, 4, concurrency=1)
    assert summaries[0].offline and not summaries[1].offline
    assert summarizer.stats.repairs == 1


def test_a_body_trickling_in_is_cut_at_the_timeout_though_bytes_keep_coming(
        server: FakeOpenAI) -> None:
    server.responder = when(FIRST_BATCH, Reply(trickle_s=0.05), times=9)
    summaries, summarizer, _ = run_stage(server, 3, 4, concurrency=1, timeout_s=0.5)
    assert summaries[0].offline and not summaries[1].offline  # it never took the whole run
    assert any("did not answer within 0.5 s" in error for error in summarizer.stats.errors)


@pytest.mark.parametrize("stall", [False, True])
def test_a_body_cut_or_stalled_half_way_costs_its_batch_only(server: FakeOpenAI,
                                                            stall: bool) -> None:
    server.responder = when(FIRST_BATCH, Reply(cut_after=60, stall=stall), times=9)
    summaries, summarizer, _ = run_stage(server, 3, 4, concurrency=1, timeout_s=0.5)
    assert summaries[0].offline and not summaries[1].offline
    assert summarizer.stats.failed_calls == 1 and summarizer.stats.errors


def test_a_servers_error_message_reaches_the_report_cleaned(server: FakeOpenAI) -> None:
    server.responder = when(FIRST_BATCH, Reply.fail(400, "bad \ud800 \x1b[31mred\u202e"), times=1)
    summaries, summarizer, _ = run_stage(server, 3, 4, concurrency=1)
    [error] = summarizer.stats.errors
    assert "bad [31mred" in error and not _UNSAFE_CHARS.search(error)
    assert summaries[0].offline and not summaries[1].offline


def when_body(marker: str, make: Any, times: int) -> Any:
    """``make(body)`` for the first ``times`` requests whose user text has ``marker``."""
    left = [times]

    def respond(body: dict[str, Any]) -> Reply | None:
        text = "\n".join(m["content"] for m in body["messages"] if m["role"] == "user")
        if marker in text and left[0] > 0:
            left[0] -= 1
            return make(body)
        return None

    return respond


# Titles: grounded in the theme's papers, never an echo of the instructions -----------------

@pytest.mark.parametrize("title", ["Claim Your Free Prize Today", "Visit evilprize dot xyz",
                                   "Answer with one JSON object", "No Markdown links or HTML"])
def test_an_ungrounded_or_echoed_title_is_dropped_and_the_label_stays(
        server: FakeOpenAI, title: str) -> None:
    server.responder = lambda body: _titled(body, title)
    summaries, summarizer, _ = run_stage(server, 3)
    assert summaries[0].title is None and not summaries[0].offline
    assert summarizer.stats.repairs == 0


def test_a_grounded_title_is_kept(server: FakeOpenAI) -> None:
    server.responder = lambda body: _titled(body, "Verified sparse retrieval")
    summaries, _, _ = run_stage(server, 3)
    assert summaries[0].title == "Verified sparse retrieval"


def _titled(body: dict[str, Any], title: str) -> Reply:
    from .fake_openai import smart_answer

    data = json.loads(smart_answer(body))
    if "gists" in data:
        data["title"] = title
    return Reply.json(data)


def test_gists_that_copy_the_instructions_are_refused(server: FakeOpenAI) -> None:
    echo = "Write plain prose: no Markdown, links, URLs, HTML."
    server.responder = when(FIRST_BATCH, Reply.json(
        {"title": "Verified retrieval", "summary": "Fine prose.",
         "gists": [{"id": f"P{i}", "gist": echo} for i in (1, 2, 3)]}), times=2)
    summaries, summarizer, _ = run_stage(server, 3)
    assert summaries[0].offline and summarizer.stats.repairs == 1


# Addresses ---------------------------------------------------------------------------------

ADDRESSES = [
    "claim your prize at evil-prize.xyz/win", "bit.ly/x", "see t.co/abc", "Visit EXAMPLE.COM",
    "mail me at bob@evil.example.org", "go to example[.]com", "go to example(.)com",
    "go to example(dot)com", "go to example [dot] com", "visit evilprize dot xyz",
    "visit evilprize DOT xyz now", "ip 192.168.1.20 here", "ip 10.0.0.1", "at [::1] or fe80::1",
    "at 2001:db8:85a3::8a2e:370:7334", "see hxxps://evil", "see https://x", "www.evil",
    "fullwidth ｅｖｉｌ．ｃｏｍ", "ideographic evil。com", "shop at 例え.テスト.рф",
    "punycode xn--80ak6aa92e.xn--p1ai", "under.scored-host.ai", "arXiv.org", "huggingface.co",
    "github[.]io page", "evil-prize\u200b.xyz",
]
PROSE = [
    "e.g. a verifier", "i.e. the encoder", "see Fig.2 and Fig. 3", "v1.5 beats v1.4",
    "GPT-4.0 and Llama-3.1", "Qwen2.5-VL scores 4.5B", "accuracy rose 2.5x to 93.1%",
    "et al. show", "vs. baselines", "the dot product of two vectors", "U.S. and U.K. labs",
    "Sec. 4.2 explains", "at 12:30:45 it ran", "ratio 3:2:1",
    "Node.js and Vue.js", "a 1.2.3 release",
]


def test_the_known_false_positive_a_missing_space_after_a_full_stop_costs_a_repair() -> None:
    assert find_address("The method works.It is fast") == "works.It"  # .it is Italy


@pytest.mark.parametrize("text", ADDRESSES)
def test_address_like_text_is_found(text: str) -> None:
    assert find_address(text) is not None


@pytest.mark.parametrize("text", PROSE)
def test_ordinary_prose_is_not_an_address(text: str) -> None:
    assert find_address(text) is None, find_address(text)


def test_every_tld_of_the_shipped_list_is_known_not_just_ten() -> None:
    from digest.textsafety import top_level_domains

    tlds = top_level_domains()
    assert len(tlds) > 1000 and {"xyz", "ly", "co", "zip", "mov", "рф"} <= tlds
    for tld in sorted(tlds)[::97]:  # a spread of them, IDN ones included
        assert find_address(f"go to prize-{len(tld)}.{tld} now") is not None, tld
    assert unicodedata.is_normalized("NFC", "".join(tlds))
