"""Summarize: a summary and one gist per paper for every theme.

With a chat backend, each batch goes out through the prompt templates; the answer
must be JSON that passes ``validate_batch_answer``, or it gets one repair request,
and then the offline summarizer takes that batch ("summarised offline" in the
issue). A theme of several batches is merged by a reduce prompt. No paper is ever
lost: every paper gets a gist from somewhere. Answers are cached in the store.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from . import offline
from .chunk import Budget
from .errors import LLMError, LLMUnavailable
from .llm import ChatBackend, ChatRequest, Completion
from .models import Batch, Paper, Theme, ThemeSummary
from .normalize import title_key
from .prompts import Prompts
from .state import Store
from .tokens import TokenCounter

logger = logging.getLogger("digest.summarize")

MAX_SUMMARY_CHARS = 1_200
MAX_GIST_CHARS = 400
GIST_WORDS = 30
SUMMARY_SENTENCES = "2-3"
# Links, images, HTML tags, and lines that would start Markdown blocks.
_MARKUP = re.compile(r"https?://|www\.|\]\(|!\[|<[a-zA-Z/!]|`|^\s*(#|[-*+]\s|\d+\.\s|>|\|)",
                     re.MULTILINE)


@dataclass
class LLMStats:
    """The run report's ``llm`` block."""

    backend: str
    model: str | None
    calls: int = 0
    cache_hits: int = 0
    retries: int = 0
    failed_calls: int = 0
    fallbacks: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    abstract_tokens: int = 0
    cost_usd: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Part:
    summary: str
    gists: dict[str, str]
    offline: bool


Validator = Callable[[Any], list[str]]


class Summarizer:
    """Runs the summarize stage for a set of themes and their batches."""

    def __init__(self, backend: ChatBackend | None, *, prompts: Prompts, counter: TokenCounter,
                 budget: Budget, store: Store | None = None, nonce: str = "0"):
        self.backend = backend
        self.prompts = prompts
        self.counter = counter
        self.budget = budget
        self.store = store
        self.nonce = nonce
        self.stats = LLMStats(backend=backend.name if backend else "offline",
                              model=backend.model if backend else None)
        self._system = prompts.render("system", nonce=nonce)

    def paper_tokens(self, paper: Paper) -> int:
        """Prompt tokens one paper costs inside a batch (what the chunker budgets)."""
        return self.counter.count(f"[P00] {paper.title}\n{paper.abstract}\n")

    def summarize(self, themes: Sequence[Theme], papers: Mapping[str, Paper],
                  batches: Sequence[Batch]) -> list[ThemeSummary]:
        results = []
        for index, theme in enumerate(themes):
            theme_batches = [b for b in batches if b.theme_index == index]
            parts = [self._summarize_batch(theme, [papers[p] for p in b.paper_ids])
                     for b in theme_batches]
            theme_papers = [papers[pid] for pid in theme.paper_ids]
            results.append(self._combine(theme, theme_papers, parts))
        self.stats.abstract_tokens = sum(
            self.counter.count(f"{p.title}\n{p.abstract}") for b in batches
            for p in (papers[pid] for pid in b.paper_ids))
        self.stats.retries = self.backend.retries if self.backend else 0
        return results

    # One batch ---------------------------------------------------------------------------

    def _summarize_batch(self, theme: Theme, batch_papers: list[Paper]) -> _Part:
        if self.backend is None:
            return _offline_part(theme, batch_papers)
        refs = {f"P{i}": paper for i, paper in enumerate(batch_papers, start=1)}
        user = self.prompts.render(
            "theme_summary", theme_title=theme.title, nonce=self.nonce, gist_words=GIST_WORDS,
            summary_sentences=SUMMARY_SENTENCES,
            papers=[{"ref": ref, "title": p.title, "abstract": p.abstract}
                    for ref, p in refs.items()])
        answer = self._ask(user, lambda data: validate_batch_answer(data, refs))
        if answer is None:
            self.stats.fallbacks += 1
            logger.warning("theme %r: summarised offline after an unusable answer", theme.title)
            return _offline_part(theme, batch_papers)
        gists = {refs[ref].id: _tidy(text) for ref, text in answer["gists"].items()}
        return _Part(_tidy(answer["summary"]), gists, offline=False)

    def _combine(self, theme: Theme, theme_papers: list[Paper], parts: list[_Part]) -> ThemeSummary:
        gists = {pid: text for part in parts for pid, text in part.gists.items()}
        any_offline = any(part.offline for part in parts)
        if len(parts) == 1:
            return ThemeSummary(parts[0].summary, gists, offline=any_offline)
        if self.backend is None or all(part.offline for part in parts):
            return ThemeSummary(offline.theme_summary(theme_papers, keywords=theme.keywords),
                                gists, offline=True)
        user = self.prompts.render("merge", theme_title=theme.title, nonce=self.nonce,
                                   summary_sentences=SUMMARY_SENTENCES,
                                   parts=[part.summary for part in parts])
        answer = self._ask(user, validate_merge_answer)
        if answer is None:
            self.stats.fallbacks += 1
            return ThemeSummary(offline.theme_summary(theme_papers, keywords=theme.keywords),
                                gists, offline=True)
        return ThemeSummary(_tidy(answer["summary"]), gists, offline=any_offline)

    # One question, with cache and one repair -------------------------------------------

    def _ask(self, user: str, validate: Validator) -> dict[str, Any] | None:
        question: tuple[dict[str, str], ...] = (
            {"role": "system", "content": self._system}, {"role": "user", "content": user})
        messages = question
        for attempt in ("first", "repair"):
            completion = self._complete(messages)
            if completion is None:
                return None
            data, problems = _parse_and_validate(completion, validate)
            if not problems:
                self._remember(question, data)  # a re-run asks the question, not the repair
                return data
            logger.warning("llm answer rejected (%s): %s", attempt, "; ".join(problems))
            messages = (*messages, {"role": "assistant", "content": completion.text},
                        {"role": "user", "content": self.prompts.render("repair", problems=problems)})
        self.stats.failed_calls += 1
        return None

    def _complete(self, messages: tuple[dict[str, str], ...]) -> Completion | None:
        assert self.backend is not None
        cached = self.store.cached_response(self._cache_key(messages)) if self.store else None
        if cached is not None:
            self.stats.cache_hits += 1
            return Completion(json.dumps(cached), 0, 0)
        request = ChatRequest(messages, max_tokens=self.budget.max_output_tokens)
        try:
            self.stats.calls += 1
            completion = self.backend.complete(request)
        except LLMUnavailable as error:
            logger.error("%s; finishing the issue offline", error)
            self.stats.failed_calls += 1
            self.backend = None  # circuit open: no more calls this run
            return None
        except LLMError as error:
            logger.error("%s", error)
            self.stats.failed_calls += 1
            return None
        self.stats.prompt_tokens += completion.prompt_tokens or self._count_messages(messages)
        self.stats.completion_tokens += (completion.completion_tokens
                                         or self.counter.count(completion.text))
        return completion

    def _remember(self, messages: tuple[dict[str, str], ...], data: dict[str, Any]) -> None:
        if self.store is not None and self.backend is not None:
            self.store.cache_response(self._cache_key(messages), self.backend.model, data)

    def _cache_key(self, messages: tuple[dict[str, str], ...]) -> str:
        assert self.backend is not None
        payload = json.dumps({"model": self.backend.model, "messages": messages,
                              "max_tokens": self.budget.max_output_tokens}, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()

    def _count_messages(self, messages: Sequence[Mapping[str, str]]) -> int:
        return sum(self.counter.count(m["content"]) + 4 for m in messages)


def _offline_part(theme: Theme, batch_papers: list[Paper]) -> _Part:
    return _Part(offline.theme_summary(batch_papers, keywords=theme.keywords),
                 {p.id: offline.paper_gist(p) for p in batch_papers}, offline=True)


def _parse_and_validate(completion: Completion, validate: Validator) -> tuple[Any, list[str]]:
    if completion.finish_reason == "length":
        return None, ["the answer was cut off; write shorter gists"]
    try:
        data = parse_json_answer(completion.text)
    except ValueError as error:
        return None, [str(error)]
    return data, validate(data)


def parse_json_answer(text: str) -> Any:
    """The JSON object in a model's answer, tolerating code fences and chatter around it."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the answer holds no JSON object")
    try:
        return json.loads(text[start:end + 1])
    except json.JSONDecodeError as error:
        raise ValueError(f"the answer is not valid JSON ({error.msg})") from None


def validate_batch_answer(data: Any, refs: Mapping[str, Paper]) -> list[str]:
    """Everything wrong with a batch answer; an empty list means usable."""
    if not isinstance(data, dict):
        return ["the answer must be a JSON object"]
    problems = _prose_problems("summary", data.get("summary"), MAX_SUMMARY_CHARS)
    gists = data.get("gists")
    if not isinstance(gists, dict):
        return [*problems, "'gists' must be an object keyed by paper id"]
    unknown = sorted(set(gists) - set(refs))
    missing = sorted(set(refs) - set(gists), key=lambda r: int(r[1:]))
    if unknown:
        problems.append(f"unknown ids {', '.join(map(str, unknown))}")
    if missing:
        problems.append(f"no gist for {', '.join(missing)}")
    for ref, gist in gists.items():
        if ref in refs:
            problems += _prose_problems(f"gist {ref}", gist, MAX_GIST_CHARS)
            if isinstance(gist, str) and _copies_opening(gist, refs[ref]):
                problems.append(f"gist {ref} copies the abstract's first sentence")
    return problems


def validate_merge_answer(data: Any) -> list[str]:
    if not isinstance(data, dict):
        return ["the answer must be a JSON object"]
    return _prose_problems("summary", data.get("summary"), MAX_SUMMARY_CHARS)


def _prose_problems(name: str, value: Any, max_chars: int) -> list[str]:
    if not isinstance(value, str) or not value.strip():
        return [f"{name} is missing or empty"]
    problems = []
    if len(value) > max_chars:
        problems.append(f"{name} is longer than {max_chars} characters")
    if _MARKUP.search(value):
        problems.append(f"{name} contains links or markup; write plain prose")
    return problems


def _copies_opening(gist: str, paper: Paper) -> bool:
    sentences = offline.split_sentences(paper.abstract)
    return bool(sentences) and title_key(sentences[0]) == title_key(gist)


def _tidy(text: str) -> str:
    return " ".join(text.split())
