"""Reading a model's answer: parse the JSON, check everything, keep nothing half-right.

``parse_json_answer`` finds the JSON object in what the model wrote, refuses one nested
deeper than any answer format (``MAX_DEPTH``), and cleans every string in it
(``textsafety.clean_untrusted``: no lone surrogates, controls or bidi overrides) and
masks the API key in it (a lying server may echo it; the ``***`` then fails the prose
rules like any markup), so what reaches the checks, the cache, a template or the run
report is clean. Each ``check_*`` function returns ``(answer, problems)``: the checked
answer when ``problems`` is empty, else None and what to tell the model in the repair
request. Rules: every id cited exists in the batch; every paper gets exactly one gist;
lengths are bounded; prose has no links, images, markup or anything address-like
(``textsafety.find_address``); no prose copies the prompt's instructions; a gist that
merely copies the abstract's opening sentence is rejected. Titles are soft: one that
fails those rules, or is not grounded (fewer than half of its content words come from
its papers' titles or the theme's keywords), is dropped (the theme keeps its term label)
without failing the answer.
A TL;DR line is soft the same way (dropped: the renderer composes one offline).

A summary cites papers by their ids (``[P3]``, ``[P1, P4]``): an id outside the
batch fails the answer; the ids it cites become the paper ids of its sentences
(``cited_summary`` → ``CitedText``), so the issue links each sentence to its papers.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import offline
from ..models import CitedText, Paper, SummarySegment
from ..redaction import api_key_from_environment, mask_secret
from ..textsafety import clean_untrusted, find_address

MAX_SUMMARY_CHARS = 1_200
MAX_GIST_CHARS = 400
MAX_THEME_TITLE_CHARS = 60
MAX_THEME_TITLE_WORDS = 8
MAX_INTRO_CHARS = 700
MAX_TLDR_CHARS = 200
MAX_DEPTH = 8  # the answer formats nest 3 deep (object > gists > item)
ECHO_WORDS = 6  # prose sharing this many words in a row with the instructions copies them

# Links, images, HTML, code, emphasis, and what would start a Markdown block.
_MARKUP = re.compile(
    r"https?://|www\.|\]\(|!\[|<[a-zA-Z/!]|`|\*\*|__|~~|"
    r"^\s*(?:#|[-*+]\s|\d+[.)]\s|>|\|)", re.MULTILINE | re.IGNORECASE)
# Ids cited in brackets: [P3], (P3), [P3, P5], (P3-P5).
_CITATION = re.compile(r"\s*[\[(]\s*([PST]\d+(?:\s*[,;–-]\s*[PST]?\d+)*)\s*[\])]")
_ID = re.compile(r"[PST]\d+")
_WORD = re.compile(r"\w+")
# Where one sentence ends; a citation just after the period is moved back to its sentence.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_LEADING_CITATION = re.compile(r"^(?:\s*[\[(]\s*[PST]\d+(?:\s*[,;–-]\s*[PST]?\d+)*\s*[\])])+")

ITEM_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["id", "gist"],
               "properties": {"id": {"type": "string"}, "gist": {"type": "string"}}}
SUMMARY_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "required": ["title", "tldr", "summary", "gists"],
    "properties": {"title": {"type": "string"}, "tldr": {"type": "string"},
                   "summary": {"type": "string"},
                   "gists": {"type": "array", "items": ITEM_SCHEMA}}}
MERGE_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["title", "tldr", "summary"],
    "properties": {"title": {"type": "string"}, "tldr": {"type": "string"},
                   "summary": {"type": "string"}}}
INTRO_SCHEMA = {"type": "object", "additionalProperties": False, "required": ["intro"],
                "properties": {"intro": {"type": "string"}}}


@dataclass(frozen=True)
class Instructions:
    """The words of a prompt's instructions, to catch prose that copies them."""

    words: str = ""  # " w1 w2 ... " in lower case
    runs: frozenset[tuple[str, ...]] = frozenset()

    @classmethod
    def of(cls, text: str) -> Instructions:
        words = _words(text)
        return cls(f" {' '.join(words)} ", frozenset(_runs(words)))

    def echoed_by(self, text: str) -> bool:
        """True when ``text`` shares ECHO_WORDS words in a row with the instructions, or is a
        shorter piece of them (3 words or more)."""
        words = _words(text)
        if len(words) >= ECHO_WORDS:
            return not self.runs.isdisjoint(_runs(words))
        return len(words) >= 3 and f" {' '.join(words)} " in self.words


@dataclass(frozen=True)
class Context:
    """What an answer is checked against besides its ids.

    ``grounds``: the content words of the papers' titles and the theme's keywords, which a
    title must share (None: titles are not checked for grounding); ``instructions``: what no
    prose may copy.
    """

    grounds: frozenset[str] | None = None
    instructions: Instructions = field(default_factory=Instructions)


def grounding_words(texts: Iterable[str]) -> frozenset[str]:
    """Content words (no stop words, plurals folded) of paper titles and theme keywords."""
    return frozenset(word for text in texts for word in offline._tokens(text))


@dataclass(frozen=True)
class BatchAnswer:
    title: str | None
    summary: CitedText  # its sentences know the paper ids they cite
    gists: dict[str, str]  # short ref (P1) -> gist
    tldr: str | None = None


@dataclass(frozen=True)
class MergeAnswer:
    title: str | None
    summary: CitedText
    tldr: str | None = None


def parse_json_answer(text: str, secret: str | None = None) -> Any:
    """The JSON object in a model's answer (code fences and chatter around it are fine),
    with every string cleaned and ``secret`` masked in it (by default the run's API key);
    ValueError says what is wrong with it."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise ValueError("the answer holds no JSON object")
    try:
        data = json.loads(text[start:end + 1])
    except json.JSONDecodeError as error:
        raise ValueError(f"the answer is not valid JSON ({error.msg})") from None
    except RecursionError:
        data = None  # nested deeper than the parser goes: refused just below
    return clean_answer(data, secret) if data is not None else _too_deep()


def clean_answer(data: Any, secret: str | None = None) -> Any:
    """``data`` with every string (and key) cleaned and ``secret`` (by default the run's API
    key, from the environment) masked in it, after cleaning, which could join its pieces;
    ValueError when nested too deep."""
    if _depth(data) > MAX_DEPTH:
        _too_deep()
    return _cleaned(data, api_key_from_environment() if secret is None else secret)


def check_batch(data: Any, refs: Mapping[str, Paper], context: Context | None = None
                ) -> tuple[BatchAnswer | None, list[str]]:
    if not isinstance(data, dict):
        return None, ["the answer must be a JSON object"]
    context = context or Context(grounding_words(paper.title for paper in refs.values()))
    problems = prose_problems("summary", data.get("summary"), MAX_SUMMARY_CHARS, refs, context)
    items = _gist_items(data.get("gists"))
    if items is None:
        return None, [*problems, '"gists" must be a list of {"id": ..., "gist": ...}']
    problems += _coverage_problems([ref for ref, _ in items], refs)
    for ref, gist in items:
        if ref in refs:
            problems += prose_problems(f"gist {ref}", gist, MAX_GIST_CHARS, refs, context)
            if isinstance(gist, str) and copies_opening(gist, refs[ref].abstract):
                problems.append(f"gist {ref} copies the abstract's first sentence")
    if problems:
        return None, problems
    summary = cited_summary(data["summary"], {ref: paper.id for ref, paper in refs.items()})
    return BatchAnswer(clean_title(data.get("title"), context), summary,
                       {ref: tidy(gist) for ref, gist in items},
                       clean_tldr(data.get("tldr"), refs, context)), []


def check_merge(data: Any, refs: Sequence[str], context: Context | None = None,
                papers: Mapping[str, str] | None = None) -> tuple[MergeAnswer | None, list[str]]:
    """A merge answer; it may cite the parts (``refs``: S1, ...) and the papers (``papers``:
    theme-wide P1 -> paper id), and its sentences then cite those papers."""
    if not isinstance(data, dict):
        return None, ["the answer must be a JSON object"]
    context = context or Context()
    papers = papers or {}
    citable = [*refs, *papers]
    problems = prose_problems("summary", data.get("summary"), MAX_SUMMARY_CHARS, citable,
                              context)
    if problems:
        return None, problems
    return MergeAnswer(clean_title(data.get("title"), context),
                       cited_summary(data["summary"], papers),
                       clean_tldr(data.get("tldr"), citable, context)), []


def check_intro(data: Any, refs: Sequence[str], context: Context | None = None
                ) -> tuple[str | None, list[str]]:
    if not isinstance(data, dict):
        return None, ["the answer must be a JSON object"]
    intro = data.get("intro")
    problems = prose_problems("intro", intro, MAX_INTRO_CHARS, refs, context or Context())
    if problems or not isinstance(intro, str):
        return None, problems or ["the intro must be a string"]
    if not 1 <= len(offline.split_sentences(intro)) <= 4:
        problems.append("the intro must be 2 or 3 sentences")
    return (None, problems) if problems else (tidy(intro), [])


def prose_problems(name: str, value: Any, max_chars: int, refs: Sequence[str] | Mapping[str, Any],
                   context: Context | None = None) -> list[str]:
    if not isinstance(value, str) or not value.strip():
        return [f"{name} is missing or empty"]
    problems = []
    if len(value) > max_chars:
        problems.append(f"{name} is longer than {max_chars} characters")
    if _MARKUP.search(value):
        problems.append(f"{name} contains links or markup; write plain prose")
    if find_address(value):
        problems.append(f"{name} contains a web address, host name or IP address; name no "
                        "site at all")
    if context is not None and context.instructions.echoed_by(value):
        problems.append(f"{name} repeats the instructions; write about the papers")
    unknown = sorted(set(cited_ids(value)) - set(refs))
    if unknown:
        problems.append(f"{name} cites ids that are not in this batch: {', '.join(unknown)}")
    return problems


def cited_summary(text: str, papers: Mapping[str, str]) -> CitedText:
    """The summary as sentences, each with the paper ids its citations name (``papers``:
    ref -> paper id; other ids, such as a part's S1, cite nothing) and the citations removed."""
    sentences: list[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        leading = _LEADING_CITATION.match(sentence)
        if leading and sentences:  # "... works. [P2] Another ..." : [P2] ends the sentence before
            sentences[-1] += leading[0]
            sentence = sentence[leading.end():]
        sentences.append(sentence)
    segments = [SummarySegment(tidy(sentence), _paper_ids(sentence, papers))
                for sentence in sentences]
    return CitedText([segment for segment in segments if segment.text])


def _paper_ids(sentence: str, papers: Mapping[str, str]) -> tuple[str, ...]:
    ids = [papers[ref] for ref in cited_ids(sentence) if ref in papers]
    return tuple(dict.fromkeys(ids))


def theme_refs(paper_ids: Iterable[str]) -> dict[str, str]:
    """Paper id -> its id in a merge prompt: P1, P2, ... in the theme's order. Each batch
    prompt numbers its own papers from P1, so a merge of several batches renumbers them
    across the whole theme: ids stay unique in every round of merging."""
    return {pid: f"P{number}" for number, pid in enumerate(paper_ids, start=1)}


def cited_prompt(summary: str, numbers: Mapping[str, str]) -> str:
    """A part's summary as a merge prompt shows it: each sentence with its citations, in the
    ids of ``numbers`` ("ToolWeaver plans with graphs [P1, P4].")."""
    if not isinstance(summary, CitedText):
        return summary
    return " ".join(_with_citation(segment.text, [numbers[pid] for pid in segment.paper_ids
                                                  if pid in numbers])
                    for segment in summary.segments)


def _with_citation(sentence: str, refs: Sequence[str]) -> str:
    if not refs:
        return sentence
    body, end = (sentence[:-1], sentence[-1]) if sentence[-1:] in ".!?" else (sentence, "")
    return f"{body} [{', '.join(refs)}]{end}"


def clean_tldr(value: Any, refs: Sequence[str] | Mapping[str, Any],
               context: Context | None = None) -> str | None:
    """A usable TL;DR line (one line, no citations), or None: the renderer then composes one."""
    if prose_problems("tldr", value, MAX_TLDR_CHARS, refs, context) or not isinstance(value, str):
        return None
    return tidy(value) or None


def cited_ids(text: str) -> list[str]:
    """Ids cited in brackets; a range "P3-P5" cites its two ends."""
    ids = []
    for match in _CITATION.finditer(text):
        letter = match[1][0]
        ids += [token if token[0].isalpha() else letter + token
                for token in re.findall(r"[PST]?\d+", match[1])]
    return ids


def copies_opening(gist: str, abstract: str) -> bool:
    """True when the gist is (nearly) the abstract's first sentence, or a long verbatim piece."""
    sentences = offline.split_sentences(abstract)
    if not sentences:
        return False
    gist_words = _words(gist)
    first_words = _words(sentences[0])
    if not gist_words:
        return False
    if difflib.SequenceMatcher(None, gist_words, first_words).ratio() >= 0.85:
        return True
    return len(gist_words) >= 6 and f" {' '.join(gist_words)} " in f" {' '.join(first_words)} "


def clean_title(value: Any, context: Context | None = None) -> str | None:
    """A usable theme title, or None (the theme then keeps its term label)."""
    if not isinstance(value, str):
        return None
    title = clean_untrusted(value).strip("\"'“”‘’ ").rstrip(".")
    if (not title or len(title) > MAX_THEME_TITLE_CHARS
            or len(title.split()) > MAX_THEME_TITLE_WORDS):
        return None
    if _MARKUP.search(title) or _CITATION.search(title) or not re.search(r"[^\W\d_]", title):
        return None
    context = context or Context()
    if find_address(title) or context.instructions.echoed_by(title):
        return None
    if context.grounds is not None and not _grounded(title, context.grounds):
        return None
    return title


def _grounded(title: str, grounds: Collection[str]) -> bool:
    """At least half of the title's content words come from its papers' titles or keywords."""
    words = set(offline._tokens(title))
    return bool(words) and 2 * len(words & set(grounds)) >= len(words)


def tidy(text: str) -> str:
    """One line of prose, with bracketed id citations removed (readers never see the ids)."""
    return " ".join(_CITATION.sub("", text).split())


def _gist_items(value: Any) -> list[tuple[str, Any]] | None:
    """[(ref, gist)] from a list of {"id", "gist"} objects or, from plain-text servers, a dict."""
    if isinstance(value, dict):
        return [(str(ref).strip("[]"), gist) for ref, gist in value.items()]
    if not isinstance(value, list):
        return None
    items = []
    for item in value:
        if not isinstance(item, dict) or "id" not in item:
            return None
        items.append((str(item["id"]).strip("[]"), item.get("gist")))
    return items


def _coverage_problems(cited: list[str], refs: Mapping[str, Paper]) -> list[str]:
    problems = []
    unknown = sorted(set(cited) - set(refs), key=_ref_order)
    repeated = sorted({ref for ref in cited if cited.count(ref) > 1}, key=_ref_order)
    missing = sorted(set(refs) - set(cited), key=_ref_order)
    if unknown:
        problems.append(f"unknown ids {', '.join(unknown)}")
    if repeated:
        problems.append(f"more than one gist for {', '.join(repeated)}")
    if missing:
        problems.append(f"no gist for {', '.join(missing)}")
    return problems


def _ref_order(ref: str) -> tuple[int, str]:
    digits = ref[1:]
    return (int(digits) if digits.isdigit() else 10**9, ref)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _runs(words: Sequence[str]) -> Iterable[tuple[str, ...]]:
    return (tuple(words[i:i + ECHO_WORDS]) for i in range(len(words) - ECHO_WORDS + 1))


def _depth(data: Any) -> int:
    """How deep ``data`` nests, counted without recursion and only up to MAX_DEPTH + 1."""
    deepest, stack = 0, [(data, 1)]
    while stack and deepest <= MAX_DEPTH:
        value, depth = stack.pop()
        deepest = max(deepest, depth)
        children = value.values() if isinstance(value, dict) else value
        if isinstance(value, (dict, list)):
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _cleaned(value: Any, secret: str) -> Any:
    if isinstance(value, str):
        return mask_secret(clean_untrusted(value), secret)
    if isinstance(value, list):
        return [_cleaned(item, secret) for item in value]
    if isinstance(value, dict):
        return {mask_secret(clean_untrusted(str(key)), secret): _cleaned(item, secret)
                for key, item in value.items()}
    return value


def _too_deep() -> Any:
    raise ValueError(f"the answer is nested deeper than {MAX_DEPTH} levels; answer with the "
                     "flat JSON object asked for")
