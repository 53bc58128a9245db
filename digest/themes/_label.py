"""Name themes offline: class-based TF-IDF terms, shown as the papers write them."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import numpy as np
from scipy import sparse

from ..models import Paper, Theme
from ._text import STOP_WORDS, TermCounts

KEYWORDS_PER_THEME = 5
COMPLETION_SHARE = 0.7  # a bigram is completed by a third word seen after it this often
TITLE_SEPARATOR = " · "


def distinctive_terms(
    counts: TermCounts, groups: Sequence[np.ndarray], top: int = 30
) -> list[list[str]]:
    """Each group's terms ranked by class-based TF-IDF on document frequencies.

    score(t, c) = share of c's term occurrences that are t × log(1 + A / papers with t),
    A = average number of term occurrences per group (BERTopic's c-TF-IDF).
    """
    present = (counts.matrix > 0).astype(np.float64).tocsr()
    membership = sparse.csr_matrix(
        (
            np.ones(sum(len(g) for g in groups)),
            (np.repeat(np.arange(len(groups)), [len(g) for g in groups]), np.concatenate(groups)),
        ),
        shape=(len(groups), present.shape[0]),
    )
    per_group = np.asarray((membership @ present).todense())
    frequency = per_group / np.maximum(per_group.sum(axis=1, keepdims=True), 1)
    weight = np.log1p(per_group.sum(axis=1).mean() / np.maximum(per_group.sum(axis=0), 1))
    scores = frequency * weight
    ranked = []
    for row, support in zip(scores, per_group, strict=True):
        best = np.argsort(-row, kind="stable")[:top]
        ranked.append(
            [
                str(counts.terms[j])
                for j in best
                if row[j] > 0 and support[j] >= min(2, support.max())
            ]
        )
    return ranked


def _stems(term: str) -> set[str]:
    """Crude singular forms of a term's words, to spot "agent" vs "agents"."""
    stems = set()
    for word in term.split():
        if word.endswith("ies") and len(word) > 4:
            word = word[:-3] + "y"
        elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
            word = word[:-1]
        stems.add(word)
    return stems


def pick_terms(ranked: Sequence[str], count: int) -> list[str]:
    """The first ``count`` terms sharing no word; a bigram replaces the lone unigram it holds."""
    chosen: list[str] = []
    for term in ranked:
        if len(chosen) == count:
            break
        overlapping = [c for c in chosen if _stems(c) & _stems(term)]
        if not overlapping:
            chosen.append(term)
        elif len(overlapping) == 1 and " " in term and " " not in overlapping[0]:
            chosen[chosen.index(overlapping[0])] = term
    return chosen


def display_terms(terms: Sequence[str], papers: Sequence[Paper], sample: int = 50) -> list[str]:
    """Terms as written in the papers' text (hyphens, acronyms), title-cased."""
    text = " ".join(f"{p.title} {p.abstract}" for p in papers[:sample])
    return [_title_case(_surface_form(term, text)) for term in terms]


def _surface_form(term: str, text: str) -> str:
    """The commonest spelling of ``term`` in ``text``, completed by the word that nearly always
    follows it ("deep reinforcement" → "deep reinforcement learning")."""
    words = r"[\s-]+".join(re.escape(w) for w in term.split())
    pattern = rf"\b({words})\b(?:[\s-]+([A-Za-z][A-Za-z0-9]*))?"
    matches = list(re.finditer(pattern, text, flags=re.IGNORECASE))
    if not matches:
        return term
    forms = Counter(" ".join(m.group(1).split()) for m in matches)
    form = min(forms, key=lambda f: (-forms[f], f))
    followers = Counter(m.group(2).lower() for m in matches if m.group(2))
    if " " in term and followers:
        follower, count = min(followers.items(), key=lambda item: (-item[1], item[0]))
        if count >= COMPLETION_SHARE * len(matches) and follower not in STOP_WORDS:
            return f"{form} {_spelling(follower, text)}"
    return form


def _spelling(word: str, text: str) -> str:
    forms = Counter(re.findall(rf"\b{re.escape(word)}\b", text, flags=re.IGNORECASE))
    return min(forms, key=lambda f: (-forms[f], f)) if forms else word


def _title_case(phrase: str) -> str:
    """Capitalize each word; keep words written with inner capitals (LLM, ImageNet)."""
    words = re.split(r"([\s-]+)", phrase)
    return "".join(w if w[1:].lower() != w[1:] else w[:1].upper() + w[1:].lower() for w in words)


def theme_title(keywords: Sequence[str]) -> str:
    """Two distinctive terms, or three when the first two are single words."""
    count = 3 if all(" " not in k for k in keywords[:2]) else 2
    return TITLE_SEPARATOR.join(keywords[:count])


def unique_titles(drafts: Sequence[tuple[list[str], Theme]]) -> list[Theme]:
    """Themes whose titles collide get their next keyword appended, or a number."""
    seen: set[str] = set()
    themes = []
    for keywords, theme in drafts:
        title = theme.title
        spare = [k for k in keywords if k not in title.split(TITLE_SEPARATOR)]
        while title in seen:
            title = (
                f"{title}{TITLE_SEPARATOR}{spare.pop(0)}"
                if spare
                else f"{theme.title} ({len(seen) + 1})"
            )
        seen.add(title)
        themes.append(replace(theme, title=title))
    return themes

