"""The embeddings theme backend: clustering on vectors, the store cache, and the endpoint
through the LLM layer against the fake OpenAI server (tests/fake_openai.py): batches,
ledger rows, and faults that behave exactly as they do for chat (one retry layer)."""

from __future__ import annotations

import base64
import json
import re
import struct
from collections.abc import Sequence

import pytest
from typer.testing import CliRunner

from digest.cli import app
from digest.errors import LLMError, LLMUnavailable
from digest.llm import BackendSettings, OpenAIChat
from digest.llm.base import ChatRequest, DeadlineReached
from digest.state import Store
from digest.themes import CachedEmbedder, EmbeddingThemes, OpenAIEmbedder, group_papers
from digest.themes._embeddings import embedding_text
from tests.fixtures.themes.evalsets import agreement, assignment

from .conftest import EXAMPLES
from .fake_openai import FakeOpenAI, Reply
from .test_themes import TOPICS, topical_papers

WORDS = [word for title, _ in TOPICS.values() for word in title.lower().split()[:2]]
KEY = "sk-embed-secret-0123456789"


class CountingEmbedder:
    """In-process vectors counting a few topic words; records every batch it was given."""

    model = "embed-small"

    def __init__(self) -> None:
        self.requests: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.requests.append(list(texts))
        return [self.vector(text) for text in texts]

    @staticmethod
    def vector(text: str) -> list[float]:
        lowered = text.lower()
        return [float(lowered.count(word)) + 0.01 * (len(text) % 7) for word in WORDS]


def settings(server: FakeOpenAI, **changes) -> BackendSettings:
    values = {"model": "embed-small", "api_key": KEY, "base_url": server.url, "timeout_s": 5.0,
              "max_attempts": 2, **changes}
    return BackendSettings(**values)


def test_embedding_themes_separate_the_topics():
    papers, truth = topical_papers()
    themes = group_papers(papers, max_themes=5, backend=EmbeddingThemes(CountingEmbedder()))
    ari, _ = agreement(assignment(themes), truth)
    assert ari == pytest.approx(1.0)
    assert all(theme.title and theme.keywords for theme in themes)


def test_vectors_are_cached_in_the_store(tmp_path):
    embedder = CountingEmbedder()
    papers, _ = topical_papers()
    with Store(tmp_path / "state.sqlite") as store:
        backend = EmbeddingThemes(CachedEmbedder(embedder, store))
        first = group_papers(papers, backend=backend)
        again = group_papers(papers, backend=backend)
    assert len(embedder.requests) == 1 and first == again
    with Store(tmp_path / "state.sqlite") as store:
        backend = EmbeddingThemes(CachedEmbedder(embedder, store))
        group_papers(papers[:-1] + [papers[-1]], backend=backend)
    assert len(embedder.requests) == 1


def test_requests_go_in_batches_and_each_is_a_ledger_row(tmp_path):
    papers, _ = topical_papers()
    with FakeOpenAI() as server, Store(tmp_path / "state.sqlite") as store:
        embedder = OpenAIEmbedder(settings(server), store=store, batch=5)
        group_papers(papers, max_themes=5, backend=EmbeddingThemes(embedder))
        embedder.close()
        sizes = [len(r.body["input"]) for r in server.embedding_requests]
        rows = [row for row in store.calls() if row.task == "embed"]
    assert sizes == [5, 5, 5, 5, 4]
    assert {r.body["model"] for r in server.embedding_requests} == {"embed-small"}
    assert len(rows) == 5 and {row.outcome for row in rows} == {"ok"}
    assert embedder.stats.calls == 5 and embedder.stats.prompt_tokens > 0


def test_batches_already_paid_for_stay_cached_when_a_later_one_fails(tmp_path):
    papers, _ = topical_papers()
    with FakeOpenAI() as server, Store(tmp_path / "state.sqlite") as store:
        server.script_embeddings(Reply(), *[Reply.fail(500)] * 2)
        embedder = OpenAIEmbedder(settings(server), store=store, batch=10)
        backend = EmbeddingThemes(CachedEmbedder(embedder, store))
        with pytest.raises(LLMUnavailable):
            group_papers(papers, max_themes=5, backend=backend)
        group_papers(papers, max_themes=5, backend=backend)  # the endpoint is back
        embedder.close()
        sizes = [len(r.body["input"]) for r in server.embedding_requests]
    assert sizes == [10, 10, 10, 10, 4]  # the first batch was not asked for again


FAULTS = {
    "429 then an answer": ([Reply.fail(429, "slow down", retry_after="0")], 2, None),
    "500 then an answer": ([Reply.fail(500)], 2, None),
    "500 for good": ([Reply.fail(500)] * 3, 2, LLMUnavailable),
    "a timeout for good": ([Reply(hang=True)] * 3, 2, LLMUnavailable),
    "400": ([Reply.fail(400, "bad input")], 1, LLMError),
}


def chat_requests_for(faults: list[Reply], **changes) -> int:
    """How many requests the chat backend sends for the same faults (the reference)."""
    with FakeOpenAI() as server:
        server.script(*faults)
        chat = OpenAIChat(settings(server, model="gpt-4o-mini", **changes),
                          sleep=lambda seconds: None)
        try:
            chat.complete(ChatRequest(({"role": "user", "content": "hi"},), max_tokens=20,
                                      json_output=False))  # no format step-down probe
        except LLMError:
            pass
        finally:
            chat.close()
        return len(server.chat_requests)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_an_embeddings_fault_is_retried_like_chat_by_one_retry_layer(fault, tmp_path):
    faults, expected, error = FAULTS[fault]
    changes = {"timeout_s": 0.5} if "timeout" in fault else {}
    papers, _ = topical_papers()
    with FakeOpenAI() as server, Store(tmp_path / "state.sqlite") as store:
        server.script_embeddings(*faults)
        embedder = OpenAIEmbedder(settings(server, **changes), store=store, batch=100)
        if error is None:
            group_papers(papers, max_themes=5, backend=EmbeddingThemes(embedder))
        else:
            with pytest.raises(error, match="^embeddings: ") as raised:
                group_papers(papers, max_themes=5, backend=EmbeddingThemes(embedder))
            assert KEY not in str(raised.value)
        embedder.close()
        sent = len(server.embedding_requests)
        rows = [row for row in store.calls() if row.task == "embed"]
    assert sent == expected == chat_requests_for(faults, **changes)
    assert len(rows) == 1 and rows[0].retries == expected - 1
    assert (rows[0].outcome == "ok") == (error is None)


def test_the_run_deadline_cuts_an_embeddings_call_and_says_so(tmp_path):
    papers, _ = topical_papers()
    with FakeOpenAI() as server:
        server.script_embeddings(Reply(hang=True))
        embedder = OpenAIEmbedder(settings(server, timeout_s=30.0), deadline_s=0.5, batch=100)
        with pytest.raises(DeadlineReached, match="setting deadline") as raised:
            group_papers(papers, max_themes=5, backend=EmbeddingThemes(embedder))
        embedder.close()
        assert len(server.embedding_requests) == 1  # no retry past the deadline
    assert "timeout" not in str(raised.value)


def test_cli_themes_embeddings_needs_an_endpoint(tmp_path):
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--backend", "offline", "--themes", "embeddings"])
    assert result.exit_code == 2
    assert "theme backend embeddings needs an endpoint" in result.output


def test_cli_rejects_an_unknown_themes_backend():
    result = CliRunner().invoke(app, ["summarize", str(EXAMPLES), "--week", "2026-W47",
                                      "--backend", "offline", "--themes", "lda"])
    assert result.exit_code == 2 and "theme backend 'lda' is unknown" in result.output


def test_cli_themes_from_a_real_embeddings_server_are_cached_in_the_store(tmp_path):
    state, out = tmp_path / "state.sqlite", tmp_path / "out"
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--themes", "embeddings", "--state", str(state), "--out", str(out)]
    reports = [tmp_path / "first.json", tmp_path / "second.json"]
    with FakeOpenAI() as server:
        first = CliRunner().invoke(app, [*args, "--base-url", server.url,
                                         "--report", str(reports[0])])
        assert first.exit_code == 0, first.output
        asked = len(server.embedding_requests)
        texts = sum(len(r.body["input"]) for r in server.embedding_requests)
        second = CliRunner().invoke(app, [*args, "--base-url", server.url,
                                          "--report", str(reports[1])])
        assert second.exit_code == 0, second.output
        assert len(server.embedding_requests) == asked  # every vector came from the store
    assert asked >= 1 and texts == 30  # one vector per paper
    # the report's llm block says what the embeddings cost in calls (issue 16): they go
    # through the LLM layer like chat
    first_stats, second_stats = (json.loads(r.read_text())["llm"]["embeddings"] for r in reports)
    assert first_stats["calls"] == asked and first_stats["prompt_tokens"] > 0
    assert first_stats["cache_hits"] == 0 and first_stats["failed_calls"] == 0
    assert second_stats["calls"] == 0 and second_stats["cache_hits"] == 30
    issue = (out / "2026-W47.md").read_text(encoding="utf-8")
    assert len(re.findall(r"^- \*\*", issue, re.MULTILINE)) == 30
    assert len(re.findall(r"^## ", issue, re.MULTILINE)) >= 2 + 3  # TL;DR, contents, 3+ themes


def _answer(*vectors) -> bytes:
    """An embeddings answer, as raw JSON (Python's json writes NaN and Infinity, as a lying
    server may)."""
    data = [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(vectors)]
    return json.dumps({"object": "list", "data": data, "model": "embed-small"}).encode()


LYING_VECTORS = {
    "NaN": [[1.0, float("nan")], [0.5, 0.5]],
    "Infinity": [[1.0, float("inf")], [0.5, 0.5]],
    "lengths differ": [[1.0, 0.0, 0.0], [0.5, 0.5]],
    "empty": [[], []],
    "text": [["1.0", "0.5"], ["0.5", "0.5"]],
    "null": [[1.0, None], [0.5, 0.5]],
    "not a list": [{"x": 1.0}, [0.5, 0.5]],
}


@pytest.mark.parametrize("lie", list(LYING_VECTORS))
def test_an_embeddings_answer_that_is_not_finite_vectors_of_one_length_is_refused(lie, tmp_path):
    """A lying server's vectors never become themes (NaN ones made one theme of everything,
    ragged ones a traceback) nor reach the cache. Like a chat answer that cannot be read, the
    answer is not asked again and costs what it was for: the themes are TF-IDF ones, and the
    report says why."""
    papers, _ = topical_papers()
    with FakeOpenAI() as server, Store(tmp_path / "state.sqlite") as store:
        server.script_embeddings(Reply.raw(_answer(*LYING_VECTORS[lie])))
        embedder = OpenAIEmbedder(settings(server), store=store, batch=100)
        backend = EmbeddingThemes(CachedEmbedder(embedder, store))
        themes = group_papers(papers, max_themes=5, backend=backend)
        embedder.close()
        assert len(server.embedding_requests) == 1
        assert [row.outcome for row in store.calls() if row.task == "embed"] != ["ok"]
        assert not store._db.execute("SELECT count(*) FROM llm_cache").fetchone()[0]
    assert themes == group_papers(papers, max_themes=5)  # the offline TF-IDF themes
    assert re.match(r"tfidf: embeddings: the endpoint returned (a vector that|\d+ vectors)",
                    backend.stats()["fallback"])


MALFORMED_ANSWERS = {
    "empty object": b"{}",
    "data is text": b'{"data": "x"}',
    "data holds text": b'{"data": ["x"]}',
    "data holds numbers": b'{"data": [1, 2]}',
    "a list": b"[]",
    "bad base64": b'{"data": [{"embedding": "abc", "index": 0}]}',
    "data is null": b'{"data": null}',
    "no index": b'{"data": [{"embedding": [1.0, 0.5]}]}',
    "index is text": b'{"data": [{"embedding": [1.0, 0.5], "index": "0"}]}',
}


def _base64_answer(count: int, vector: bytes) -> bytes:
    """``count`` embeddings, each ``vector`` as base64 text, as the client asks for."""
    data = [{"object": "embedding", "index": i,
             "embedding": base64.b64encode(vector).decode()} for i in range(count)]
    return json.dumps({"object": "list", "data": data}).encode()


@pytest.mark.parametrize("shape", list(MALFORMED_ANSWERS))
def test_an_embeddings_answer_of_any_malformed_shape_gives_tfidf_themes(shape, tmp_path):
    """A malformed answer ({}, data null or text, items that are no embeddings, bad base64)
    was a traceback from inside the openai client (a probe, stop 31): now it is refused
    like a lying vector, and the themes are TF-IDF ones."""
    papers, _ = topical_papers()
    with FakeOpenAI() as server, Store(tmp_path / "state.sqlite") as store:
        server.script_embeddings(Reply.raw(MALFORMED_ANSWERS[shape]))
        embedder = OpenAIEmbedder(settings(server), store=store, batch=100)
        backend = EmbeddingThemes(CachedEmbedder(embedder, store))
        themes = group_papers(papers, max_themes=5, backend=backend)
        embedder.close()
        assert len(server.embedding_requests) == 1
        assert not store._db.execute("SELECT count(*) FROM llm_cache").fetchone()[0]
    assert themes == group_papers(papers, max_themes=5)
    assert backend.stats()["fallback"].startswith("tfidf: embeddings: the endpoint returned ")


@pytest.mark.parametrize("text", ["abc", base64.b64encode(b"12345").decode()],
                         ids=["unpadded", "5 bytes"])
def test_base64_embeddings_that_are_no_float32_vectors_give_tfidf_themes(text, tmp_path):
    """One base64 text per paper, but no whole float32 numbers in it (a probe, stop 31)."""
    papers, _ = topical_papers()
    with FakeOpenAI() as server:
        server.script_embeddings(Reply.raw(json.dumps({"data": [
            {"index": i, "embedding": text} for i in range(len(papers))]}).encode()))
        backend = EmbeddingThemes(OpenAIEmbedder(settings(server), batch=100))
        themes = group_papers(papers, max_themes=5, backend=backend)
    assert themes == group_papers(papers, max_themes=5)
    assert backend.stats()["fallback"] == ("tfidf: embeddings: the endpoint returned a vector "
                                           "that is not base64 float32 numbers")


def test_base64_embeddings_as_openai_sends_them_are_read(tmp_path):
    """The client asks for base64 (OpenAI's compact form): float32 vectors in it are used."""
    papers, _ = topical_papers()
    with FakeOpenAI() as server:
        server.script_embeddings(Reply.raw(_base64_answer(len(papers), struct.pack(
            "=3f", 1.0, 0.5, 0.25))))
        embedder = OpenAIEmbedder(settings(server), batch=100)
        vectors = embedder.embed([embedding_text(p) for p in papers])
        assert server.embedding_requests[0].body["encoding_format"] == "base64"
    assert vectors == [[1.0, 0.5, 0.25]] * len(papers)


@pytest.mark.parametrize("command", ["newsletter", "summarize"])
@pytest.mark.parametrize("shape", list(MALFORMED_ANSWERS))
def test_cli_a_malformed_embeddings_answer_costs_the_embedding_themes_not_the_run(
        command, shape, tmp_path):
    """`digest summarize|newsletter --themes embeddings` against a server answering {} (and
    the other shapes) ended in a Python traceback, exit 1, no issue (a probe, stop 31)."""
    args = [command, str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--themes", "embeddings"]
    if command == "newsletter":
        args += ["--state", str(tmp_path / "state.sqlite"), "--out", str(tmp_path / "out")]
    with FakeOpenAI() as server:
        server.script_embeddings(Reply.raw(MALFORMED_ANSWERS[shape]))
        result = CliRunner().invoke(app, [*args, "--base-url", server.url])
    assert result.exit_code == 0, result.output
    assert "the themes are TF-IDF ones this time" in result.stderr
    assert "Traceback" not in result.output and "Error" not in result.stderr
    if command == "newsletter":
        assert (tmp_path / "out" / "2026-W47.md").exists()
    else:
        assert "## " in result.stdout


def test_cli_a_server_answering_every_post_with_an_empty_object_still_gives_an_issue(
        tmp_path, monkeypatch):
    """The probe's own run: chat and embeddings both answered `{}` with HTTP 200."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-x")
    with FakeOpenAI(default=Reply.raw(b"{}")) as server:
        server.script_embeddings(*[Reply.raw(b"{}")] * 3)
        result = CliRunner().invoke(app, [
            "summarize", str(EXAMPLES), "--week", "2026-W47", "--themes", "embeddings",
            "--base-url", server.url])
    assert result.exit_code == 0, result.output
    assert "the themes are TF-IDF ones this time" in result.stderr
    assert "Traceback" not in result.output


class LyingEmbedder(CountingEmbedder):
    """Another Embedder (a plug-in, an old cache): vectors of two lengths, or a NaN."""

    def __init__(self, lie: str) -> None:
        super().__init__()
        self.lie = lie

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors = super().embed(texts)
        vectors[1] = vectors[1][:-1] if self.lie == "short" else [float("nan")] * len(vectors[1])
        return vectors


@pytest.mark.parametrize("lie", ["short", "nan"])
def test_any_embedder_s_bad_vectors_are_refused_before_clustering(lie):
    papers, _ = topical_papers()
    backend = EmbeddingThemes(LyingEmbedder(lie))
    assert group_papers(papers, max_themes=5, backend=backend) == group_papers(papers,
                                                                               max_themes=5)
    assert backend.stats()["fallback"].startswith("tfidf: embeddings: a vector given for")


def test_a_bad_vector_kept_by_an_older_store_is_asked_for_again(tmp_path):
    """Stores written before vectors were checked may hold a NaN one: it is not used."""
    papers, _ = topical_papers()
    inner = CountingEmbedder()
    with Store(tmp_path / "state.sqlite") as store:
        cached = CachedEmbedder(inner, store)
        texts = ["first text about bees", "second text about robots"]
        cached.embed(texts)
        store.cache_response(cached._key(texts[0]), inner.model,
                             {"embedding": [float("nan")] * len(WORDS)})
        again = cached.embed(texts)
    assert inner.requests == [texts, texts[:1]]
    assert again[0] == CountingEmbedder.vector(texts[0])
    assert cached.cache_hits == 1


def test_a_bad_vector_is_never_kept(tmp_path):
    with Store(tmp_path / "state.sqlite") as store:
        cached = CachedEmbedder(LyingEmbedder("nan"), store)
        with pytest.raises(LLMError, match="^embeddings: a vector from embed-small holds NaN"):
            cached.embed(["first text about bees", "second text about robots"])
        assert not store._db.execute("SELECT count(*) FROM llm_cache").fetchone()[0]


def test_cli_a_lying_embeddings_server_costs_the_embedding_themes_not_the_issue(tmp_path):
    """No traceback and no nonsense themes: the issue goes out with TF-IDF themes, the run
    warns and its report says why."""
    report = tmp_path / "report.json"
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--themes", "embeddings", "--state", str(tmp_path / "state.sqlite"),
            "--out", str(tmp_path / "out"), "--report", str(report)]
    with FakeOpenAI() as server:
        server.script_embeddings(Reply.raw(_answer(*[[float("nan"), 1.0]] * 30)))
        result = CliRunner().invoke(app, [*args, "--base-url", server.url])
    assert result.exit_code == 0, result.output
    assert "the endpoint returned a vector that holds NaN" in result.stderr
    assert "Traceback" not in result.output
    assert (tmp_path / "out" / "2026-W47.md").exists()
    fallback = json.loads(report.read_text())["llm"]["embeddings"]["fallback"]
    assert fallback == ("tfidf: embeddings: the endpoint returned a vector that holds NaN "
                        "or an infinity")


def test_cli_an_embeddings_server_that_is_down_stops_the_run_for_a_retry(tmp_path):
    """Unlike a lying answer, an outage may pass: exit 75 (cron or the mail hook retry), no
    issue written."""
    args = ["newsletter", str(EXAMPLES), "--week", "2026-W47", "--backend", "offline",
            "--themes", "embeddings", "--state", str(tmp_path / "state.sqlite"),
            "--out", str(tmp_path / "out"), "--timeout", "5"]
    with FakeOpenAI() as server:
        server.script_embeddings(*[Reply.fail(503, "down", retry_after="0")] * 10)
        result = CliRunner().invoke(app, [*args, "--base-url", server.url])
    assert result.exit_code == 75, result.output
    assert "embeddings: " in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out" / "2026-W47.md").exists()


class ShortEmbedder(CountingEmbedder):
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return super().embed(texts)[:-1]


def test_an_embedder_that_gives_too_few_vectors_costs_the_embedding_themes(tmp_path):
    papers, _ = topical_papers()
    with Store(tmp_path / "state.sqlite") as store:
        backend = EmbeddingThemes(CachedEmbedder(ShortEmbedder(), store))
        assert group_papers(papers, max_themes=5, backend=backend) == group_papers(
            papers, max_themes=5)
        assert backend.stats()["fallback"] == (
            f"tfidf: embeddings: embed-small gave {len(papers) - 1} vectors for "
            f"{len(papers)} texts")
    direct = EmbeddingThemes(ShortEmbedder())
    group_papers(papers, max_themes=5, backend=direct)
    assert direct.stats() == {"fallback": f"tfidf: embeddings: {len(papers) - 1} vectors "
                                          f"given for {len(papers)} papers"}
    good = EmbeddingThemes(CountingEmbedder())
    good.fell_back.append("from an earlier grouping")
    group_papers(papers, max_themes=5, backend=good)
    assert good.fell_back == []  # each grouping says only its own
