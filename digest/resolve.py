"""Finding the arXiv id of papers whose listing gave none (``--resolve-ids``, opt-in, network).

Daily Papers pages carry titles only. ``resolve_ids`` asks the arXiv API for each such title
(``export.arxiv.org/api/query?search_query=ti:"…"``) and, when an answer's title is the
paper's title, gives the paper its arXiv id and the abs link that digest builds from it.

Why the arXiv API and not Hugging Face's paper search: the arXiv id is what we want, and the
arXiv API is the authority for it (any arXiv paper, not only those someone put on Hugging
Face); its rate limit is documented (one request every 3 s), which the shared ``Fetcher``
already keeps for ``arxiv.org`` hosts; and its Atom answer is read by feedparser, which
ingest already uses for the arXiv API.

Safety: an answer is accepted only when its title matches closely (equal title keys, or a
rapidfuzz ratio of at least ``MIN_RATIO`` on them): a wrong id is worse than none. No URL is
taken from the answer: the id is parsed from it and the link re-built on https://arxiv.org.
Every answer (hit or miss, with its time) is kept in the state store, so a title is asked
about once. Only an arXiv API feed is an answer: Atom with the API's opensearch:totalResults
(a miss cached for good must be arXiv's "no such title", not an empty body or a maintenance
page that feedparser reads without complaint) and no error entry. Bounded: at most ``limit``
lookups and ``deadline_s`` seconds per run; a failure (timeout, 5xx, not such a feed) is
logged, not cached, and the paper kept as it was; after
``MAX_FAILURES_IN_A_ROW`` failures in a row the service is left alone for the rest of the run.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import quote

from .errors import DigestError
from .ingest.fetch import Fetcher
from .links import ARXIV_API
from .models import Paper
from .normalize import arxiv_abs_url, clean_text, find_arxiv_id, title_key
from .state import Store
from .textsafety import ellipsize

logger = logging.getLogger("digest")

DEFAULT_LIMIT = 200
DEFAULT_DEADLINE_S = 600.0
MIN_RATIO = 95.0
MAX_FAILURES_IN_A_ROW = 3
_MAX_RESULTS = 5
_MAX_ANSWER_BYTES = 1 << 20
_ROMAN = re.compile(r"[ivx]+")


class LookupFailed(Exception):
    """The service gave no usable answer (not a miss: nothing is cached)."""


@dataclasses.dataclass
class _Run:
    """What one ``resolve_ids`` call may still do, and what it did."""

    lookups_left: int
    deadline: float
    clock: Callable[[], float]
    looked_up: int = 0
    failures: int = 0
    failures_in_a_row: int = 0

    def may_look_up(self) -> bool:
        return (self.lookups_left > 0 and self.clock() < self.deadline
                and self.failures_in_a_row < MAX_FAILURES_IN_A_ROW)


def resolve_ids(papers: Sequence[Paper], store: Store, *, limit: int = DEFAULT_LIMIT,
                deadline_s: float = DEFAULT_DEADLINE_S, fetcher: Fetcher | None = None,
                base_url: str = ARXIV_API,
                clock: Callable[[], float] = time.monotonic) -> list[Paper]:
    """``papers`` in the same order, those without an arXiv id given one where it was found."""
    run = _Run(lookups_left=max(limit, 0), deadline=clock() + deadline_s, clock=clock)
    own = fetcher is None
    fetcher = fetcher or Fetcher(deadline_s=min(60.0, deadline_s))
    taken = {paper.id for paper in papers}
    try:
        resolved = [_resolve(paper, store, fetcher, base_url, run, taken) for paper in papers]
    finally:
        if own:
            fetcher.close()
    _log_summary(run, len(papers))
    return resolved


def _resolve(paper: Paper, store: Store, fetcher: Fetcher, base_url: str, run: _Run,
             taken: set[str]) -> Paper:
    key = title_key(paper.title)
    if paper.arxiv_id or not key:
        return paper
    cached = store.resolved(key)
    if cached is not None:
        return _with_id(paper, cached[0], taken)
    if not run.may_look_up():
        return paper
    arxiv_id = _look_up(paper.title, fetcher, base_url, run)
    if arxiv_id is _FAILED:
        return paper
    store.remember_resolved(key, arxiv_id, arxiv_abs_url(arxiv_id) if arxiv_id else None)
    return _with_id(paper, arxiv_id, taken)


_FAILED = "\0failed"


def _look_up(title: str, fetcher: Fetcher, base_url: str, run: _Run) -> str | None:
    """The arXiv id of ``title``, None when arXiv has no such title, or ``_FAILED``."""
    run.lookups_left -= 1
    run.looked_up += 1
    try:
        found = _ask_arxiv(title, fetcher, base_url)
    except (LookupFailed, DigestError) as exc:
        run.failures += 1
        run.failures_in_a_row += 1
        if run.failures == 1:  # once: the summary counts the rest
            logger.warning("--resolve-ids: a title lookup failed (%s); papers keep their "
                           "title-search link", exc)
        return _FAILED
    run.failures_in_a_row = 0
    return found


def _ask_arxiv(title: str, fetcher: Fetcher, base_url: str) -> str | None:
    import feedparser

    query = quote(f'ti:"{title_key(title)}"', safe=":")
    url = f"{base_url.rstrip('/')}/api/query?search_query={query}&max_results={_MAX_RESULTS}"
    answer = feedparser.parse(fetcher.fetch(url, max_bytes=_MAX_ANSWER_BYTES).data)
    _check_is_an_arxiv_answer(answer)
    for entry in answer.entries:
        found = find_arxiv_id(str(entry.get("id", "")))
        if found and titles_match(title, str(entry.get("title", ""))):
            return found[0]
    return None


def _check_is_an_arxiv_answer(answer: Any) -> None:
    """Raise ``LookupFailed`` unless ``answer`` is an arXiv API result feed."""
    total = str(answer.feed.get("opensearch_totalresults", "")).strip()
    if not str(answer.get("version", "")).startswith("atom") or not total.isdigit():
        raise LookupFailed("the answer was not an arXiv API Atom feed (no "
                           "opensearch:totalResults)")
    for entry in answer.entries:
        if "/api/errors" in str(entry.get("id", "")):
            raise LookupFailed(f"the arXiv API answered with an error: "
                               f"{ellipsize(clean_text(str(entry.get('summary', ''))), 120)}")


def titles_match(ours: str, theirs: str) -> bool:
    """The same title: equal keys, or keys at least ``MIN_RATIO`` alike (a typo, a dash) with
    the same numbers in them ("Part I" and "Part II" are close, but two papers)."""
    from rapidfuzz import fuzz

    a, b = title_key(ours), title_key(clean_text(theirs))
    if not (a and b):
        return False
    return a == b or (fuzz.ratio(a, b) >= MIN_RATIO and _numbers(a) == _numbers(b))


def _numbers(key: str) -> list[str]:
    return [word for word in key.split() if word.isdigit() or _ROMAN.fullmatch(word)]


def _with_id(paper: Paper, arxiv_id: str | None, taken: set[str]) -> Paper:
    """The paper with its id and abs link; unchanged when another paper of the run has that
    id already (dedup did not merge them, so we do not make them one paper here)."""
    if not arxiv_id or arxiv_id in taken:
        return paper
    taken.add(arxiv_id)
    return dataclasses.replace(paper, id=arxiv_id, arxiv_id=arxiv_id, url=arxiv_abs_url(arxiv_id))


def _log_summary(run: _Run, n_papers: int) -> None:
    if run.looked_up or run.failures:
        logger.info("--resolve-ids: %d lookups for %d papers, %d failed", run.looked_up,
                    n_papers, run.failures)
    if run.lookups_left == 0 or run.clock() >= run.deadline:
        logger.info("--resolve-ids: stopped at the run's cap or deadline; the rest are "
                    "looked up next run")
