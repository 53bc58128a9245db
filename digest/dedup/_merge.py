"""One ``Paper`` from the records of one paper: the richest fields, every sighting."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence

from ..models import Paper, Record
from ..normalize import title_key
from ._keys import blemishes, identity_key, loose_title


def paper_id(arxiv_id: str | None, title: str) -> str:
    """The arXiv id when known, else ``t:`` + a hash of the normalized title."""
    if arxiv_id:
        return arxiv_id
    return "t:" + _short_hash(title_key(title))


def merge(cluster: Sequence[Record], title_keys: Sequence[str] | None = None) -> Paper:
    """The richest record's link, the fullest abstract and author list, the cleanest title.
    ``title_keys``: the records' ``title_key``s, when the caller has them."""
    if len(cluster) == 1:
        return _single(cluster[0], title_keys[0] if title_keys else None)
    keys = list(title_keys) if title_keys else [title_key(r.title) for r in cluster]
    flaws = {r.title: blemishes(r.title) for r in cluster}  # each title's, counted once
    by_richness = sorted(cluster, key=_richness, reverse=True)  # stable: first of equals
    richest = by_richness[0]
    arxiv_id = next((r.arxiv_id for r in cluster if r.arxiv_id), None)
    title = min((r.title for r in by_richness), key=flaws.__getitem__)
    return Paper(
        id=paper_id(arxiv_id, _usual_title(keys)),
        title=title,
        abstract=max((r.abstract for r in cluster), key=len),
        url=richest.url or next((r.url for r in cluster if r.url), None),
        authors=max((r.authors for r in cluster), key=len),
        published=min((r.published for r in cluster if r.published), default=None),
        arxiv_id=arxiv_id,
        sightings=tuple(r.sighting for r in cluster),
        upvotes=max((r.upvotes for r in cluster if r.upvotes is not None), default=None),
        also_listed_as=_other_titles(cluster, title, keys, flaws),
    )


def _single(record: Record, key: str | None) -> Paper:
    if record.arxiv_id or key is None:
        paper = paper_id(record.arxiv_id, record.title)
    else:
        paper = "t:" + _short_hash(key)
    return Paper(id=paper, title=record.title,
                 abstract=record.abstract, url=record.url, authors=record.authors,
                 published=record.published, arxiv_id=record.arxiv_id,
                 sightings=(record.sighting,), upvotes=record.upvotes)


def _other_titles(cluster: Sequence[Record], title: str, keys: Sequence[str],
                  flaws: dict[str, int]) -> tuple[str, ...]:
    """The cleanest form of each title other than ``title`` (by identity key), in the order
    first seen: a merge of differently titled listings hides none of them. ``keys``: the
    records' title keys; ``flaws``: each title's ``blemishes``."""
    forms: dict[str, str] = {identity_key(title): title}
    for record, key in zip(cluster, keys, strict=True):
        identity = loose_title(record.title, key).replace(" ", "")  # = identity_key(title)
        if identity and (identity not in forms or flaws[record.title] < flaws[forms[identity]]):
            forms[identity] = record.title
    return tuple(list(forms.values())[1:])


def published_names(paper: Paper) -> tuple[str, ...]:
    """What the state store records for a published paper: its id and, for a paper with an
    arXiv id, ``~`` + its title id, so a later listing of it without the id is known; and
    ``~`` + the title id of every other title its listings gave it ("also listed as"), so a
    later listing under one of those without the id is known too."""
    others = tuple("~" + paper_id(None, title) for title in paper.also_listed_as)
    if paper.arxiv_id:
        return paper.id, "~" + paper_id(None, paper.title), *others
    return (paper.id, *others)


def known_names(paper: Paper) -> tuple[str, ...]:
    """The names under which an earlier issue may have published ``paper``: its id, or its
    title id when one listing had the arXiv id and the other did not. A paper with an arXiv
    id matches only title-only papers, never another arXiv id under the same title."""
    title_id = paper_id(None, paper.title)
    return (paper.id, title_id) if paper.arxiv_id else (paper.id, "~" + title_id)


def distinct_id(paper_id: str, paper: Paper, digits: int = 6) -> str:
    """An id for a paper whose title-based id another paper already has ("Comment on X"):
    ``digits`` hex digits (up to 12) of a hash of its abstract after it."""
    return f"{paper_id}-{_short_hash(paper.abstract or paper.title)[:digits]}"


def _richness(record: Record) -> tuple[bool, bool, int, int]:
    return bool(record.arxiv_id), bool(record.url), len(record.authors), len(record.abstract)


def _usual_title(keys: Sequence[str]) -> str:
    """The title key most listings used, so the id stays put when one adds a variant; among
    equally used ones the first in sorted order, so the id does not depend on input order."""
    counts = Counter(keys)
    return min(counts, key=lambda key: (-counts[key], key))


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]
