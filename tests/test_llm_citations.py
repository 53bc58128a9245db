"""An LLM's summary cites papers by batch id ([P3]) and its answer has a TL;DR line: ids are
checked against the batch (a wrong one is repaired, then summarised offline), and the cited
ids become links from each sentence to its paper's entry, in Markdown, HTML and text."""

from __future__ import annotations

import json
import re
from pathlib import Path

from digest import Options, Store, build_issue
from digest.chunk import Budget, plan_batches
from digest.llm.base import ChatRequest
from digest.llm.mock import MockBackend
from digest.llm.runner import RunLimits
from digest.models import Theme
from digest.prompts import Prompts
from digest.render import Renderer
from digest.summarize import Summarizer
from digest.tokens import TokenCounter

from .fake_openai import made_up_papers, smart_answer

ROOT = Path(__file__).parent.parent
EXAMPLES = [str(ROOT / "examples")]
_DATA = re.compile(r"<<DATA (\w+)>>\n(.*?)<<END \1>>", re.DOTALL)
_ITEM = re.compile(r"^\[([PST])(\d+)\] (.*)$", re.MULTILINE)
_CITED = re.compile(r"\[(P\d+)\]")


def _data(request: ChatRequest) -> str:
    user = next(m["content"] for m in request.messages if m["role"] == "user")
    match = _DATA.search(user)
    return match[2] if match else ""


def citing_answer(request: ChatRequest) -> str:
    """A model that cites: the batch summary names its first and last paper, the merge keeps
    the ids its parts cite; each answer has a TL;DR line."""
    data = json.loads(smart_answer({"messages": [dict(m) for m in request.messages]}))
    items = _ITEM.findall(_data(request))
    if items and items[0][0] == "P":
        first, last = f"P{items[0][1]}", f"P{items[-1][1]}"
        data["summary"] = (f"The first paper opens the theme [{first}]. The last one closes "
                           f"it [{last}]. Together they show where the field is going.")
        data["tldr"] = f"What {len(items)} papers on one question found."
    elif items and items[0][0] == "S":
        cited = sorted(set(_CITED.findall(_data(request))), key=lambda ref: int(ref[1:]))
        data["summary"] = f"Across the parts the theme holds together [{', '.join(cited)}]."
        data["tldr"] = f"One theme told across {len(items)} parts."
    return json.dumps(data)


def _built(backend: MockBackend, budget: Budget | None = None):
    with Store(":memory:") as store:
        options = Options(week="2026-W47", budget=budget or Budget())
        return build_issue(EXAMPLES, options, backend=backend, store=store)


def test_a_whole_llm_made_issue_cites_its_papers_and_has_the_models_tldr():
    built = _built(MockBackend(default=citing_answer))
    issue = built.issue
    assert not issue.fallback_themes
    for number, section in enumerate(issue.sections, start=1):
        summary = section.summary
        assert summary.tldr and summary.tldr.startswith("What ")
        cited = [pid for segment in summary.segments for pid in segment.paper_ids]
        assert cited[0] == section.papers[0].id and cited[-1] == section.papers[-1].id
        last = len(section.papers)
        assert f"(#paper-{number}-1))" in built.markdown
        assert f"(#paper-{number}-{last}))" in built.markdown
        assert f"**: {summary.tldr}" in built.markdown  # the TL;DR bullet is the model's line
    assert "[P1]" not in built.markdown and "P1]" not in built.markdown
    html = Renderer().render(issue, "html")
    text = Renderer().render(issue, "txt")
    assert 'href="#paper-1-1"' in html and "[1.1]" in text
    assert "[P" not in html and "[P" not in text


def test_an_id_outside_the_batch_is_repaired_and_the_repair_is_used():
    wrong = json.dumps({"title": "Agents", "tldr": "Agents.", "summary": "It builds on [P9].",
                        "gists": [{"id": f"P{i}", "gist": f"Gist number {i} here."}
                                  for i in range(1, 9)]})
    backend = MockBackend(default=citing_answer).enqueue(wrong)
    built = _built(backend)
    repair = next(r for r in backend.history if len(r.messages) > 2)
    assert "cites ids that are not in this batch: P9" in repair.messages[-1]["content"]
    assert not built.issue.fallback_themes  # the second answer (from citing_answer) was good


def _stage(backend: MockBackend, size: int):
    papers = made_up_papers(size)
    theme = Theme("label", ("verifier", "retrieval"), tuple(p.id for p in papers))
    by_id = {p.id: p for p in papers}
    summarizer = Summarizer(backend, prompts=Prompts(), counter=TokenCounter("gpt-4o-mini"),
                            budget=Budget(), limits=RunLimits())
    batches = plan_batches([theme], by_id, summarizer.paper_tokens, summarizer.budget)
    return summarizer.summarize([theme], by_id, batches)[0], papers


def test_an_id_outside_a_four_paper_batch_is_repaired_then_summarised_offline():
    def answer(request: ChatRequest) -> str:
        data = json.loads(citing_answer(request))
        if _ITEM.findall(_data(request))[0][0] == "P":
            data["summary"] = "One paper goes further than the rest [P9]."
        return json.dumps(data)

    backend = MockBackend(default=answer)
    summary, papers = _stage(backend, 4)
    batch = [r for r in backend.history if _ITEM.findall(_data(r))[0][0] == "P"]
    assert len(batch) == 2  # the answer, then one repair
    assert "cites ids that are not in this batch: P9" in batch[1].messages[-1]["content"]
    assert summary.offline and summary.tldr is None  # the renderer composes the TL;DR
    assert set(summary.gists) == {p.id for p in papers}
    assert summary.segments and all(s.paper_ids for s in summary.segments)  # offline cites too


def test_a_merged_theme_keeps_citations_with_ids_unique_across_its_batches():
    backend = MockBackend(default=citing_answer)
    built = _built(backend, Budget(max_output_tokens=600, batch_input_tokens=700))
    merges = [_data(r) for r in backend.history if _ITEM.findall(_data(r))
              and _ITEM.findall(_data(r))[0][0] == "S"]
    assert merges, "no theme needed a merge at this budget"
    for data in merges:  # the parts' citations, renumbered across the theme: never two P1s
        per_part = [set(_CITED.findall(text)) for _, _, text in _ITEM.findall(data)]
        assert all(per_part)
        assert sum(map(len, per_part)) == len(set().union(*per_part))
    merged = [s for s in built.issue.sections if s.summary.tldr
              and s.summary.tldr.startswith("One theme")]
    assert merged
    for section in merged:
        cited = {pid for segment in section.summary.segments for pid in segment.paper_ids}
        ids = [p.id for p in section.papers]
        assert cited <= set(ids) and len(cited) >= 2


def test_a_merge_citing_a_paper_outside_its_parts_is_repaired():
    def answer(request: ChatRequest) -> str:
        data = json.loads(citing_answer(request))
        if _ITEM.findall(_data(request))[:1] and _ITEM.findall(_data(request))[0][0] == "S":
            data["summary"] = "The theme reaches far [P99]."
        return json.dumps(data)

    backend = MockBackend(default=answer)
    built = _built(backend, Budget(max_output_tokens=600, batch_input_tokens=700))
    repairs = [r for r in backend.history if len(r.messages) > 2]
    assert repairs and all("P99" in r.messages[-1]["content"] for r in repairs)
    merged = [s for s in built.issue.sections if len({p.id for p in s.papers}) > 4]
    assert any(s.summary.offline for s in merged)  # twice wrong: the offline summary, cited
