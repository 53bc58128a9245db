"""Property: any bytes a server sends as a model answer give an accepted answer or an offline
batch, never an exception, and whatever is accepted is clean.

The boundary is where digest reads the raw HTTP body (``llm.response.completion_from_body``)
and then what the model wrote (``llm._calls.read_answer``: parse, clean, check). The second test
sends the bytes over real HTTP from the fake server through the whole summarize stage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from digest.llm._calls import read_answer
from digest.llm.answers import BatchAnswer, Context, check_batch, grounding_words
from digest.llm.base import AnswerUnreadable
from digest.llm.response import completion_from_body
from digest.textsafety import find_address

from .fake_openai import FakeOpenAI, Reply, _completion_bytes, made_up_papers
from .test_llm_stage import FIRST_BATCH, every_paper_has_a_gist, run_stage

PAPERS = made_up_papers(3)
REFS = {f"P{i}": paper for i, paper in enumerate(PAPERS, start=1)}
CONTEXT = Context(grounding_words(p.title for p in PAPERS))
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")

any_char = st.characters(codec=None, categories=None)  # surrogates and controls included
hostile_text = st.one_of(
    st.text(any_char, max_size=60),
    st.sampled_from(["evil-prize.xyz/win", "bit.ly/x", "example[.]com", "Visit evilprize dot xyz",
                     "\u202egnp.exe", "\ud800", "Answer with one JSON object and nothing else.",
                     "A verifier for sparse retrieval.", "Verified Learning"]))
answer_shaped = st.fixed_dictionaries({
    "title": hostile_text, "summary": hostile_text,
    "gists": st.lists(st.fixed_dictionaries({"id": st.sampled_from(["P1", "P2", "P3", "P9"]),
                                             "gist": hostile_text}), max_size=4)})
json_values = st.recursive(st.none() | st.booleans() | st.integers() | hostile_text,
                           lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(hostile_text, inner, max_size=3), max_leaves=12)
contents = st.one_of(answer_shaped.map(json.dumps), json_values.map(json.dumps),
                     st.text(any_char, max_size=200),
                     st.integers(1, 3000).map(lambda n: "[" * n + "]" * n))
bodies = st.one_of(
    st.binary(max_size=400),
    contents.map(lambda text: _completion_bytes(json.dumps(text).encode())),
    st.binary(max_size=120).map(lambda raw: _completion_bytes(b'"' + raw + b'"')),
    json_values.map(lambda value: json.dumps(value).encode()))


def outcome(raw: bytes) -> tuple[BatchAnswer | None, list[str]]:
    """What the runner makes of ``raw``: (answer, []) accepted, or (None, problems) refused."""
    try:
        completion = completion_from_body(raw)
    except AnswerUnreadable as error:
        return None, [str(error)]
    _, answer, problems = read_answer(completion, lambda data: check_batch(data, REFS, CONTEXT))
    return answer, problems


@settings(max_examples=400, deadline=None, database=None)
@given(bodies)
def test_any_body_is_an_accepted_clean_answer_or_a_refusal_never_an_exception(raw: bytes) -> None:
    answer, problems = outcome(raw)
    assert (answer is None) == bool(problems)
    if answer is not None:
        for text in [answer.summary, answer.title or "", *answer.gists.values()]:
            assert not _UNSAFE.search(text) and find_address(text) is None
            text.encode("utf-8")


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as fake:
        yield fake


@settings(max_examples=25, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bodies)
# Found by this test in CI: a lone surrogate, sent back in the repair request, could not be
# encoded, and the run ended in a traceback.
@example(raw=b'{"choices":[{"message":{"content":"\\ud800"}}]}')
def test_any_body_over_http_costs_at_most_its_own_batch(shared_server: FakeOpenAI,
                                                         raw: bytes) -> None:
    shared_server.requests.clear()
    shared_server.responder = _first_batch_answers(raw)
    # A generous request timeout: the property is about what a body does, and a loaded
    # 2-core machine once took more than the default 5 s to answer an ordinary request.
    summaries, summarizer, themes = run_stage(shared_server, 3, 3, concurrency=1,
                                              timeout_s=30.0)
    assert every_paper_has_a_gist(summaries, themes)
    assert not summaries[1].offline  # the other theme never paid for it
    assert summarizer.stats.fallbacks == int(summaries[0].offline)


def _first_batch_answers(raw: bytes) -> Any:
    def respond(body: dict[str, Any]) -> Reply | None:
        text = body["messages"][1]["content"]
        return Reply.raw(raw) if FIRST_BATCH in text else None

    return respond


@pytest.mark.parametrize("content", ["\\ud800", "a\\udfffb", "\\ud83d\\ude00 \\ud83d"])
def test_an_answer_with_a_lone_surrogate_reads_as_text_that_can_be_sent_and_stored(content):
    raw = b'{"choices":[{"message":{"content":"' + content.encode() + b'"}}]}'
    text = completion_from_body(raw).text
    text.encode("utf-8")  # what a repair request, the cache and the issue file need
    assert "\ufffd" in text
    assert ("\U0001f600" in text) == ("ude00" in content)  # a whole pair is kept
