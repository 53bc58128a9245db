"""Summarize: a title, a summary and one gist per paper for every theme, and the intro.

Every question goes to the chat backend through ``llm.runner.CallRunner``, with
the answer digest would write itself (``extractive``: the offline summarizer's). A
model's answer must pass ``llm.answers.check_batch`` or it gets one repair request,
and then the extractive answer takes that batch ("summarised offline" in the issue:
a fallback). The offline backend answers every question with its extractive answer. A theme
of several batches is merged by a reduce prompt over the batch summaries, in as
many rounds as the token budget needs. No paper is ever lost: every paper gets a
gist from somewhere. Calls run in parallel through ``llm.runner.CallRunner``
(cache, ledger, budgets, circuit breaker); results are assembled in theme order,
so the issue is the same whatever order the answers arrive in.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from . import offline
from .chunk import Budget
from .llm.answers import (
    INTRO_SCHEMA,
    MAX_THEME_TITLE_CHARS,
    MAX_THEME_TITLE_WORDS,
    MERGE_SCHEMA,
    SUMMARY_SCHEMA,
    BatchAnswer,
    Context,
    Instructions,
    MergeAnswer,
    check_batch,
    check_intro,
    check_merge,
    cited_prompt,
    grounding_words,
    theme_refs,
)
from .llm.base import ChatBackend
from .llm.runner import Call, CallRunner, LLMStats, RunLimits
from .models import Batch, Paper, Theme, ThemeSummary
from .prompts import Prompts
from .state import Store
from .tokens import TokenCounter

__all__ = ["LLMStats", "RunLimits", "Summarizer"]

GIST_WORDS = 30
SUMMARY_SENTENCES = "2-3"
# Typical answer sizes, for --max-cost/--max-tokens reservations and --dry-run estimates
# (the chunker budgets with padded worst cases instead).
EXPECTED_GIST_TOKENS = 50
EXPECTED_SUMMARY_TOKENS = 150
MERGE_OUTPUT_TOKENS = 150
INTRO_OUTPUT_TOKENS = 120
INTRO_TITLES_PER_THEME = 3
# What a paper's "[P00] " label and line break add to its title and abstract in a batch
# prompt: 1-4 tokens (2,200 real papers), so the chunker budgets the most.
PAPER_LABEL_TOKENS = 4
_SLACK_TOKENS = 60  # keywords, message framing, a schema the server may add to the prompt


@dataclass(frozen=True)
class _Part:
    """A summary of some of a theme's papers, with their gists."""

    summary: str
    gists: dict[str, str]
    paper_ids: tuple[str, ...]
    offline: bool  # written by the offline summarizer (the backend's choice or a fallback)
    title: str | None = None
    tldr: str | None = None
    fallback: bool = False  # the offline text stands in for a model's answer that failed


class Summarizer:
    """Runs the summarize stage: ``summarize`` for the themes, then ``intro`` for the issue."""

    def __init__(self, backend: ChatBackend, *, prompts: Prompts, counter: TokenCounter,
                 budget: Budget, store: Store | None = None, nonce: str = "0",
                 limits: RunLimits | None = None):
        self.backend = backend
        self.prompts = prompts
        self.counter = counter
        self.nonce = nonce
        self.limits = (limits or RunLimits()).priced(backend.model,
                                                     getattr(backend, "price", None))
        self.stats = LLMStats(backend=backend.name, model=backend.model or None,
                              dry_run=self.limits.dry_run)
        self._system = prompts.render("system", nonce=nonce)
        self._intro: str | None = None
        self._text_tokens: dict[str, int] = {}
        self.budget = replace(budget, prompt_overhead=self._prompt_overhead())
        self._instructions = Instructions.of(self._instruction_text())
        self._runner = CallRunner(
            backend, stats=self.stats, counter=counter, limits=self.limits, store=store,
            repair_message=lambda problems: prompts.render("repair", problems=problems))

    def paper_tokens(self, paper: Paper) -> int:
        """Prompt tokens one paper costs inside a batch (what the chunker budgets): its title
        and abstract, counted once per paper (the report's ``abstract_tokens`` sums the same
        counts over the batches sent), and its ``[P00]`` label and line break."""
        tokens = self._text_tokens.get(paper.id)
        if tokens is None:
            tokens = self._text_tokens[paper.id] = self.counter.count(
                f"{paper.title}\n{paper.abstract}")
        return tokens + PAPER_LABEL_TOKENS

    # The themes ------------------------------------------------------------------------

    def summarize(self, themes: Sequence[Theme], papers: Mapping[str, Paper],
                  batches: Sequence[Batch]) -> list[ThemeSummary]:
        started = time.monotonic()
        jobs = [_ThemeJob(self, theme, [[papers[pid] for pid in b.paper_ids]
                                        for b in batches if b.theme_index == index])
                for index, theme in enumerate(themes)]
        for job in jobs:
            job.start()
        self._ask_intro(jobs)
        self._runner.run()
        results = _distinct_titles([job.result() for job in jobs])
        if not self.limits.dry_run:
            self.stats.fallback_themes = [summary.title or theme.title for theme, summary
                                          in zip(themes, results, strict=True) if summary.fallback]
        self._finish(started)
        return results

    def intro(self, *, fallback: str) -> str:
        """Two or three sentences opening the issue; ``fallback`` when there is no LLM answer.

        The intro is asked for inside ``summarize``, beside the batches: it is written from
        each theme's label and leading paper titles, so it waits for no other answer and
        never lengthens the stage's chain of dependent calls.
        """
        return self._intro or fallback

    # Calls, one per question -----------------------------------------------------------

    def ask_batch(self, theme: Theme, batch: list[Paper], priority: int,
                  on_done: Callable[[_Part], None], *, whole_theme: bool = False) -> None:
        """One batch's summary and gists. ``whole_theme``: the theme has several batches,
        so digest's own answer is the gists only (an offline theme is summarised whole)."""
        refs = {f"P{i}": paper for i, paper in enumerate(batch, start=1)}

        def user() -> str:
            return self.prompts.render(
                "theme_summary", nonce=self.nonce, keywords=_keywords(theme), **self._style(),
                papers=[{"ref": ref, "title": p.title, "abstract": p.abstract}
                        for ref, p in refs.items()])

        def check(data: Any) -> tuple[_Part | None, list[str]]:
            context = self._context(theme, [p.title for p in batch])
            answer, problems = check_batch(data, refs, context)
            return (batch_part(answer, refs) if answer is not None else None), problems

        extractive = partial(planned_part if self.limits.planning else
                             gists_part if whole_theme else offline_part, theme, batch)
        self._runner.submit(Call(
            "summary", theme.title, partial(self._messages, user), check=check,
            on_done=_or_fallback(on_done, extractive), max_tokens=self.budget.max_output_tokens,
            expected_output=EXPECTED_SUMMARY_TOKENS + EXPECTED_GIST_TOKENS * len(batch),
            schema=SUMMARY_SCHEMA, priority=priority, extractive=extractive,
            abstract_tokens=sum(self.paper_tokens(p) - PAPER_LABEL_TOKENS for p in batch)))

    def reduce(self, theme: Theme, parts: list[_Part], papers: Mapping[str, Paper],
               on_done: Callable[[_Part], None]) -> None:
        """Merge part summaries into one, in rounds of groups that fit the input budget."""
        groups = self._merge_groups(parts)
        if len(groups) == 1:
            self._ask_merge(theme, parts, papers, on_done, priority=1)
            return
        merged: list[_Part | None] = [None] * len(groups)

        def group_done(index: int, part: _Part) -> None:
            merged[index] = part
            if all(m is not None for m in merged):
                self.reduce(theme, [m for m in merged if m is not None], papers, on_done)

        for index, group in enumerate(groups):
            self._ask_merge(theme, group, papers, partial(group_done, index), priority=2)

    def _ask_merge(self, theme: Theme, parts: list[_Part], papers: Mapping[str, Paper],
                   on_done: Callable[[_Part], None], *, priority: int) -> None:
        refs = [f"S{i}" for i in range(1, len(parts) + 1)]
        paper_ids = tuple(pid for part in parts for pid in part.paper_ids)
        gists = {pid: gist for part in parts for pid, gist in part.gists.items()}
        numbers = theme_refs(papers)  # P1... across the theme: unique over its batches
        cites = {numbers[pid]: pid for pid in paper_ids}
        first_title = next((part.title for part in parts if part.title), None)

        def user() -> str:
            return self.prompts.render(
                "merge", nonce=self.nonce, keywords=_keywords(theme), **self._style(),
                parts=[{"ref": ref, "title": part.title or "",
                        "summary": cited_prompt(part.summary, numbers)}
                       for ref, part in zip(refs, parts, strict=True)])

        def check(data: Any) -> tuple[_Part | None, list[str]]:
            context = self._context(theme, [papers[pid].title for pid in paper_ids])
            answer, problems = check_merge(data, refs, context, papers=cites)
            return (merged_part(answer, parts, first_title) if answer is not None
                    else None), problems

        def extractive() -> _Part:
            text = offline.theme_summary([papers[pid] for pid in paper_ids],
                                         keywords=theme.keywords)
            return _Part(text, gists, paper_ids, offline=True, title=first_title,
                         fallback=any(part.fallback for part in parts))

        self._runner.submit(Call(
            "merge", theme.title, partial(self._messages, user), check=check,
            on_done=_or_fallback(on_done, extractive),
            max_tokens=min(600, self.budget.max_output_tokens),
            expected_output=MERGE_OUTPUT_TOKENS, schema=MERGE_SCHEMA, priority=priority,
            extractive=extractive))

    def _ask_intro(self, jobs: Sequence[_ThemeJob]) -> None:
        """The intro call; digest has no answer of its own (the pipeline composes one)."""
        material = [_intro_material(job) for job in jobs if job.batches]
        if not material:
            return
        refs = [f"T{i}" for i in range(1, len(material) + 1)]

        def done(intro: str | None) -> None:
            self._intro = intro

        def user() -> str:
            return self._intro_prompt(material, refs)

        self._runner.submit(Call(
            "intro", "the issue", partial(self._messages, user),
            check=lambda data: check_intro(data, refs, Context(instructions=self._instructions)),
            on_done=done,
            max_tokens=min(500, self.budget.max_output_tokens),
            expected_output=INTRO_OUTPUT_TOKENS, schema=INTRO_SCHEMA, priority=0))

    # Prompt pieces ---------------------------------------------------------------------

    def _messages(self, user: Callable[[], str]) -> tuple[dict[str, str], ...]:
        return ({"role": "system", "content": self._system},
                {"role": "user", "content": user()})

    def _style(self) -> dict[str, object]:
        return {"summary_sentences": SUMMARY_SENTENCES, "gist_words": GIST_WORDS,
                "title_chars": MAX_THEME_TITLE_CHARS, "title_words": MAX_THEME_TITLE_WORDS - 2}

    def _context(self, theme: Theme, titles: list[str]) -> Context:
        """What a theme's answers are checked against: its words, and the instructions."""
        return Context(grounding_words([*titles, *theme.keywords]), self._instructions)

    def _instruction_text(self) -> str:
        """Every prompt's instructions, without the data: what no answer may copy."""
        tasks = [self.prompts.render(name, nonce=self.nonce, keywords="", papers=[], parts=[],
                                     themes=[], n_papers=0, n_themes=0, **self._style())
                 for name in ("theme_summary", "merge", "intro")]
        texts = [self._system, *tasks, self.prompts.render("repair", problems=[])]
        return "\n".join(line for text in texts for line in text.splitlines()
                         if self.nonce not in line)

    def _prompt_overhead(self) -> int:
        """Tokens of one batch prompt around its papers: what the chunker must leave free."""
        empty = self.prompts.render("theme_summary", nonce=self.nonce, keywords="",
                                    papers=[], **self._style())
        return self.counter.count(self._system) + self.counter.count(empty) + _SLACK_TOKENS

    def _merge_groups(self, parts: list[_Part]) -> list[list[_Part]]:
        """Consecutive groups of at least two parts whose summaries fit one merge prompt."""
        room = self.budget.input_tokens
        groups: list[list[_Part]] = [[]]
        used = 0
        for part in parts:
            tokens = self.counter.count(part.summary) + 20
            if len(groups[-1]) >= 2 and used + tokens > room:
                groups.append([])
                used = 0
            groups[-1].append(part)
            used += tokens
        if len(groups) > 1 and len(groups[-1]) == 1:  # a lone last part joins its neighbour
            lone = groups.pop()
            groups[-1] += lone
        return groups

    def _intro_prompt(self, material: list[dict[str, Any]], refs: list[str]) -> str:
        """The intro prompt, with fewer paper titles per theme if it must fit the budget."""
        n_papers = sum(int(str(m["papers"])) for m in material)
        for keep in (INTRO_TITLES_PER_THEME, 1, 0):
            prompt = self.prompts.render(
                "intro", nonce=self.nonce, n_papers=n_papers, n_themes=len(material),
                themes=[{**m, "ref": ref, "leading": m["leading"][:keep]}
                        for ref, m in zip(refs, material, strict=True)])
            if self.counter.count(prompt) <= self.budget.input_tokens:
                break
        return prompt

    def _finish(self, started: float) -> None:
        self.stats.wall_s += time.monotonic() - started
        self.stats.degraded = not self.limits.dry_run and self.stats.fallbacks > 0


class _ThemeJob:
    """One theme on its way through the stage: batch answers in, one ThemeSummary out."""

    def __init__(self, owner: Summarizer, theme: Theme, batches: list[list[Paper]]):
        self.owner = owner
        self.theme = theme
        self.batches = batches
        self.papers = {p.id: p for batch in batches for p in batch}
        self.parts: list[_Part | None] = [None] * len(batches)
        self.summary: ThemeSummary | None = None

    def start(self) -> None:
        if not self.batches:
            self.summary = ThemeSummary("", {})
        # A theme of several batches is summarised once, as a whole, when every batch is
        # offline (_batch_done): digest's own answer for such a batch is its gists only.
        whole = len(self.batches) > 1 and not self.owner.limits.dry_run
        # Batches go before merges and the intro, and those of a theme that needs a merge
        # go first of all: a call waits behind them.
        priority = 3 if len(self.batches) > 1 else 2
        for index, batch in enumerate(self.batches):
            self.owner.ask_batch(self.theme, batch, priority, partial(self._batch_done, index),
                                 whole_theme=whole)

    def result(self) -> ThemeSummary:
        assert self.summary is not None, f"theme {self.theme.title!r} was never summarised"
        return self.summary

    def _batch_done(self, index: int, part: _Part) -> None:
        self.parts[index] = part
        parts = [p for p in self.parts if p is not None]
        if len(parts) < len(self.parts):
            return
        if len(parts) == 1 or self.owner.limits.planning:  # planning: nothing asked after
            self._done(parts[0])
        elif all(p.offline for p in parts) and not self.owner.limits.dry_run:
            theme_papers = [self.papers[pid] for pid in self.theme.paper_ids
                            if pid in self.papers]
            gists = {pid: gist for p in parts for pid, gist in p.gists.items()}
            self._done(_Part(offline.theme_summary(theme_papers, keywords=self.theme.keywords),
                             gists, tuple(self.papers), offline=True,
                             fallback=any(p.fallback for p in parts)))
        else:
            self.owner.reduce(self.theme, [self._with_summary(p) for p in parts], self.papers,
                              self._done)

    def _with_summary(self, part: _Part) -> _Part:
        """A gists-only part with its own offline summary, which a merge prompt shows."""
        if part.summary or not part.offline:
            return part
        batch = [self.papers[pid] for pid in part.paper_ids]
        return replace(part, summary=offline.theme_summary(batch, keywords=self.theme.keywords))

    def _done(self, part: _Part) -> None:
        self.summary = ThemeSummary(part.summary, part.gists, offline=part.offline,
                                    title=part.title, tldr=part.tldr, fallback=part.fallback)


def batch_part(answer: BatchAnswer, refs: Mapping[str, Paper]) -> _Part:
    """A model's checked answer for one batch, as a part of its theme."""
    return _Part(answer.summary, {refs[r].id: g for r, g in answer.gists.items()},
                 tuple(p.id for p in refs.values()), offline=False, title=answer.title,
                 tldr=answer.tldr)


def merged_part(answer: MergeAnswer, parts: Sequence[_Part], first_title: str | None) -> _Part:
    """A model's checked merge of several parts: their gists under its summary."""
    return _Part(answer.summary, {pid: gist for part in parts for pid, gist in part.gists.items()},
                 tuple(pid for part in parts for pid in part.paper_ids),
                 offline=any(part.offline for part in parts), title=answer.title or first_title,
                 tldr=answer.tldr, fallback=any(part.fallback for part in parts))


def _or_fallback(on_done: Callable[[_Part], None], extractive: Callable[[], _Part]
                 ) -> Callable[[_Part | None], None]:
    """``on_done`` for an answer; with none (the call failed), digest's own, as a fallback."""
    def done(part: _Part | None) -> None:
        on_done(part if part is not None else replace(extractive(), fallback=True))
    return done


def planned_part(theme: Theme, batch: list[Paper]) -> _Part:
    """Planning mode's stand-in for an answer: the plan needs the questions, not the work of
    digest's own answers (the planned run is thrown away)."""
    del theme
    return _Part("", {}, tuple(p.id for p in batch), offline=True)


def gists_part(theme: Theme, batch: list[Paper]) -> _Part:
    del theme  # the gists of a batch do not depend on its theme
    return _Part("", offline.paper_gists(batch), tuple(p.id for p in batch), offline=True)


def offline_part(theme: Theme, batch: list[Paper]) -> _Part:
    return _Part(offline.theme_summary(batch, keywords=theme.keywords),
                 {p.id: offline.paper_gist(p) for p in batch}, tuple(p.id for p in batch),
                 offline=True)


def _intro_material(job: _ThemeJob) -> dict[str, Any]:
    """A theme as the intro prompt shows it: its label and its most central paper titles."""
    return {"title": job.theme.title, "papers": len(job.theme.paper_ids),
            "leading": [paper.title for paper in job.batches[0][:INTRO_TITLES_PER_THEME]]}


def _distinct_titles(summaries: list[ThemeSummary]) -> list[ThemeSummary]:
    """A title already taken by an earlier theme is dropped (that theme keeps its label)."""
    seen: set[str] = set()
    results = []
    for summary in summaries:
        key = (summary.title or "").casefold()
        if key and key in seen:
            summary = replace(summary, title=None)
        seen.add(key)
        results.append(summary)
    return results


def _keywords(theme: Theme) -> str:
    return ", ".join(theme.keywords) or theme.title
