"""The recording mock backend: a whole LLM-made issue in-process, no socket, and the tests
assert on what was sent."""

from __future__ import annotations

import json
from pathlib import Path

from digest import Options, Store, build_issue
from digest.llm.base import ChatRequest, RequestRejected
from digest.llm.mock import MockBackend

from .fake_openai import smart_answer

ROOT = Path(__file__).parent.parent
EXAMPLES = [str(ROOT / "examples")]


def _answer(request: ChatRequest) -> str:
    return smart_answer({"messages": [dict(message) for message in request.messages]})


def _issue(backend: MockBackend):
    with Store(":memory:") as store:
        return build_issue(EXAMPLES, Options(week="2026-W47"), backend=backend, store=store)


def test_an_llm_made_issue_in_process_records_every_prompt():
    backend = MockBackend(default=_answer)
    built = _issue(backend)
    assert built.issue.backend == "mock" and built.issue.model == "mock-model"
    assert not built.issue.fallback_themes
    assert backend.history, "no request reached the backend"
    asked = "\n".join(m["content"] for r in backend.history for m in r.messages)
    for section in built.issue.sections:
        for paper in section.papers:
            assert paper.title[:30] in asked  # every paper was put to the model
    assert "These " in built.markdown and "papers share one question" in built.markdown


def test_queued_answers_come_first_and_a_refusal_costs_one_batch():
    backend = MockBackend(default=_answer)
    backend.enqueue(RequestRejected("refused by the test"))
    built = _issue(backend)
    assert len(built.issue.fallback_themes) == 1  # the refused batch, summarised offline
    assert len(backend.history) >= 2


def test_with_nothing_queued_and_no_default_every_batch_falls_back_visibly():
    backend = MockBackend()
    built = _issue(backend)
    assert built.issue.sections
    assert len(built.issue.fallback_themes) == len(built.issue.sections)


def test_an_unreadable_answer_is_refused_not_published():
    backend = MockBackend(default=lambda request: json.dumps({"title": "x"}))
    built = _issue(backend)
    assert len(built.issue.fallback_themes) == len(built.issue.sections)
