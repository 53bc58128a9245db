"""The embeddings theme backend against a fake /v1/embeddings server (httpx.MockTransport)."""

from __future__ import annotations

import json
import re

import httpx
import openai
import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.errors import LLMError, LLMUnavailable
from digest.state import Store
from digest.themes import CachedEmbedder, EmbeddingThemes, OpenAIEmbedder, group_papers
from tests.fixtures.themes.evalsets import agreement, assignment

from .conftest import EXAMPLES
from .fake_openai import FakeOpenAI
from .test_themes import TOPICS, topical_papers

WORDS = [word for title, _ in TOPICS.values() for word in title.lower().split()[:2]]


class FakeEmbeddings:
    """Vectors counting a few topic words; records every request body."""

    def __init__(self, status: int = 200):
        self.requests: list[dict] = []
        self.status = status

    def __call__(self, request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/v1/embeddings"
        body = json.loads(request.content)
        self.requests.append(body)
        if self.status != 200:
            return httpx.Response(self.status, json={"error": {"message": "nope"}})
        data = [{"object": "embedding", "index": i, "embedding": self.vector(text)}
                for i, text in reversed(list(enumerate(body["input"])))]  # any order
        return httpx.Response(200, json={"object": "list", "data": data, "model": body["model"],
                                         "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    @staticmethod
    def vector(text: str) -> list[float]:
        lowered = text.lower()
        return [float(lowered.count(word)) + 0.01 * (len(text) % 7) for word in WORDS]


def embedder(fake: FakeEmbeddings, batch: int = 5) -> OpenAIEmbedder:
    client = openai.OpenAI(api_key="test", base_url="http://fake.test/v1", max_retries=0,
                           http_client=httpx.Client(transport=httpx.MockTransport(fake)))
    return OpenAIEmbedder(client, model="embed-small", batch=batch)


def test_embedding_themes_separate_the_topics_and_batch_requests():
    fake = FakeEmbeddings()
    papers, truth = topical_papers()
    themes = group_papers(papers, max_themes=5, backend=EmbeddingThemes(embedder(fake)))
    ari, _ = agreement(assignment(themes), truth)
    assert ari == pytest.approx(1.0)
    assert [len(r["input"]) for r in fake.requests] == [5, 5, 5, 5, 4]
    assert {r["model"] for r in fake.requests} == {"embed-small"}
    assert all(theme.title and theme.keywords for theme in themes)


def test_vectors_are_cached_in_the_store(tmp_path):
    fake = FakeEmbeddings()
    papers, _ = topical_papers()
    with Store(tmp_path / "state.sqlite") as store:
        backend = EmbeddingThemes(CachedEmbedder(embedder(fake, batch=100), store))
        first = group_papers(papers, backend=backend)
        again = group_papers(papers, backend=backend)
    assert len(fake.requests) == 1 and first == again
    with Store(tmp_path / "state.sqlite") as store:
        backend = EmbeddingThemes(CachedEmbedder(embedder(fake, batch=100), store))
        group_papers(papers[:-1] + [papers[-1]], backend=backend)
    assert len(fake.requests) == 1


@pytest.mark.parametrize(("status", "error"), [(503, LLMUnavailable), (400, LLMError)])
def test_endpoint_failures_are_named_errors(status, error):
    papers, _ = topical_papers()
    with pytest.raises(error, match="embeddings endpoint"):
        group_papers(papers, backend=EmbeddingThemes(embedder(FakeEmbeddings(status))))


def test_cli_themes_embeddings_needs_an_endpoint(tmp_path):
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--backend", "offline", "--themes", "embeddings"])
    assert result.exit_code == 2
    assert "--themes embeddings needs an endpoint" in result.output


def test_cli_rejects_an_unknown_themes_backend():
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--backend", "offline", "--themes", "lda"])
    assert result.exit_code == 2 and "--themes lda: unknown" in result.output


def test_cli_themes_from_a_real_embeddings_server_are_cached_in_the_store(tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--themes", "embeddings", "--state", str(state), "--out", str(out)]
    with FakeOpenAI() as server:
        first = CliRunner().invoke(app, [*args, "--base-url", server.url])
        assert first.exit_code == 0, first.output
        asked = len(server.embedding_requests)
        texts = sum(len(r.body["input"]) for r in server.embedding_requests)
        second = CliRunner().invoke(app, [*args, "--base-url", server.url])
        assert second.exit_code == 0, second.output
        assert len(server.embedding_requests) == asked  # every vector came from the store
    assert asked >= 1 and texts == 30  # one vector per paper
    issue = (out / "2026-W47.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^- \*\*", issue, re.MULTILINE)) == 30
    assert len(re.findall(r"^## ", issue, re.MULTILINE)) >= 2 + 3  # TL;DR, contents, 3+ themes
