"""Group papers into themes: the ``themes`` stage (dedup → **themes** → chunk).

The default backend, :class:`TfidfThemes`, works offline and deterministically:

1. Text → TF-IDF over words and bigrams of title (counted twice) + abstract, with
   sublinear tf. English stop words are dropped; *weak* domain words ("model",
   "method", "propose", "large", …) are never features on their own but may
   appear in a bigram with a strong word ("language models", "reward model").
2. LSA: TruncatedSVD, then rows normalized to unit length (cosine geometry).
3. k-means for every k in 2..max_themes; k is the silhouette winner after a
   penalty for straying from a size-based target (about sqrt(n / 3) themes:
   ~3 for 30 papers, ~6-10 for 100-300). Clusters smaller than
   max(3, 2% of papers) are folded into their nearest neighbour.
4. Names: class-based TF-IDF (c-TF-IDF, as in BERTopic) over the clusters;
   the top distinct terms, title-cased, joined by " · ".

Another backend (embeddings, config-named sections) implements
:class:`ThemeBackend`; :func:`themes_from_labels` turns any labelling into named,
ordered :class:`Theme` values, so backends only have to decide who goes with whom.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfTransformer
from sklearn.metrics import silhouette_score
from sklearn.preprocessing import normalize

from .errors import ConfigError
from .models import Paper, Theme

log = logging.getLogger("digest.themes")

OTHER_TITLE = "Other"
OTHER = -1  # label of papers with no usable term
KEYWORDS_PER_THEME = 5
TITLE_SEPARATOR = " · "

# Words too common in paper listings to name or separate a theme on their own.
WEAK_WORDS = frozenset(
    ["propose", "proposed", "proposes", "proposing", "method", "methods", "model", "models", "modeling", "approach", "approaches", "paper", "papers", "result", "results", "show", "shows", "shown", "showing", "novel", "based", "using", "use", "used", "uses", "performance", "task", "tasks", "state", "art", "existing", "new", "work", "works", "experiment", "experiments", "experimental", "demonstrate", "demonstrates", "demonstrated", "achieve", "achieves", "achieved", "achieving", "outperform", "outperforms", "outperforming", "significant", "significantly", "effective", "effectively", "extensive", "framework", "frameworks", "present", "presents", "presented", "introduce", "introduces", "introduced", "study", "studies", "studied", "investigate", "investigated", "different", "various", "recent", "recently", "large", "small", "high", "low", "good", "better", "best", "obtain", "obtained", "find", "found", "consider", "considered", "given", "case", "cases", "terms", "number", "order", "provide", "provides", "general", "important", "key", "main", "simple", "able", "make", "makes", "way", "ways", "problem", "problems", "furthermore", "moreover", "finally", "addition", "particular", "respectively", "including", "improve", "improved", "improves", "improving", "improvement", "approach", "via", "well", "like", "code", "available", "github", "com", "http", "https", "www"]
)
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"et", "al", "ie", "eg", "vs", "wrt"}

_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"\n]+")
_WORD = re.compile(r"[a-z][a-z0-9]+")


def tokenize(text: str) -> list[str]:
    """Unigrams (strong words only) and bigrams of adjacent non-stop words, not both weak."""
    text = _LATEX_COMMAND.sub(" ", _MATH.sub(" . ", text)).lower()
    terms: list[str] = []
    for phrase in _PHRASE_BREAK.split(text):
        previous = None
        for word in _WORD.findall(phrase):
            if word in STOP_WORDS:
                previous = None
                continue
            if word not in WEAK_WORDS:
                terms.append(word)
            if previous and not (previous in WEAK_WORDS and word in WEAK_WORDS):
                terms.append(f"{previous} {word}")
            previous = word
    return terms


def paper_text(paper: Paper) -> str:
    """The text that is clustered: the title twice (to weigh it up), then the abstract."""
    return f"{paper.title}\n{paper.title}\n{paper.abstract}"


class ThemeBackend(Protocol):
    """Anything that can group papers into themes (same contract as :func:`group_papers`)."""

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]: ...


@dataclass(frozen=True)
class TfidfThemes:
    """The default backend: TF-IDF → LSA → k-means, k chosen by silhouette."""

    lsa_dimensions: int = 100
    n_init: int = 4
    silhouette_sample: int = 2000
    papers_per_theme_squared: float = 3.0  # target k = sqrt(n / this)
    target_penalty: float = 0.03  # silhouette given up per unit of |log(k / target)|
    max_share: float = 0.35  # a bigger theme is split in two while there is room

    def group(self, papers: Sequence[Paper], *, max_themes: int, seed: int) -> list[Theme]:
        if max_themes < 1:
            raise ConfigError(f"max_themes must be at least 1, not {max_themes}")
        papers = _unique_by_id(papers)
        counts = count_terms(papers)
        if counts is None:
            return themes_from_labels(papers, np.zeros(len(papers), dtype=int))
        vectors = self._embed(counts.matrix, seed)
        labels = np.full(len(papers), OTHER, dtype=int)
        has_terms = counts.matrix.getnnz(axis=1) > 0
        room = max_themes - 1 if not has_terms.all() and max_themes > 1 else max_themes
        labels[has_terms] = self._cluster(vectors[has_terms], room, seed)
        return themes_from_labels(papers, labels, vectors, counts)

    def _embed(self, counts: sparse.csr_matrix, seed: int) -> np.ndarray:
        tfidf = TfidfTransformer(sublinear_tf=True).fit_transform(counts)
        dimensions = min(self.lsa_dimensions, tfidf.shape[0] - 1, tfidf.shape[1] - 1)
        if dimensions < 2:
            return normalize(tfidf.toarray())
        svd = TruncatedSVD(n_components=dimensions, random_state=seed)
        return normalize(svd.fit_transform(tfidf))

    def _cluster(self, vectors: np.ndarray, max_themes: int, seed: int) -> np.ndarray:
        n = len(vectors)
        smallest = min_theme_size(n)
        distinct = len(np.unique(vectors.round(6), axis=0))
        k_max = min(max_themes, n // smallest, distinct)
        if k_max < 2:
            return np.zeros(n, dtype=int)
        target = math.sqrt(n / self.papers_per_theme_squared)
        best: tuple[float, np.ndarray] | None = None
        for k in range(2, k_max + 1):
            labels = self._kmeans(vectors, k, seed)
            score = self._silhouette(vectors, labels, seed)
            score -= self.target_penalty * abs(math.log(k / target))
            log.debug("k=%d adjusted silhouette=%.4f", k, score)
            if best is None or score > best[0]:
                best = (score, labels)
        assert best is not None
        labels = merge_small_clusters(vectors, best[1], smallest)
        return self._split_oversized(vectors, labels, max_themes, seed)

    def _kmeans(self, vectors: np.ndarray, k: int, seed: int) -> np.ndarray:
        model = KMeans(n_clusters=k, n_init=self.n_init, random_state=seed)
        return model.fit_predict(vectors)

    def _silhouette(self, vectors: np.ndarray, labels: np.ndarray, seed: int) -> float:
        if len(set(labels.tolist())) < 2:
            return -1.0
        sample = min(self.silhouette_sample, len(vectors))
        return float(silhouette_score(vectors, labels, sample_size=sample, random_state=seed))

    def _split_oversized(
        self, vectors: np.ndarray, labels: np.ndarray, max_themes: int, seed: int
    ) -> np.ndarray:
        """Split a theme holding more than ``max_share`` of the papers in two, while there is room."""
        smallest = min_theme_size(len(vectors))
        for _ in range(max_themes):
            sizes = np.bincount(labels)
            biggest = int(sizes.argmax())
            if sizes[biggest] <= self.max_share * len(vectors) or len(sizes) >= max_themes:
                break
            members = np.flatnonzero(labels == biggest)
            halves = self._kmeans(vectors[members], 2, seed)
            if min(np.bincount(halves, minlength=2)) < smallest:
                break
            labels = labels.copy()
            labels[members[halves == 1]] = len(sizes)
        return labels


def min_theme_size(n_papers: int) -> int:
    """Themes smaller than this are folded into their nearest neighbour."""
    return max(3, math.ceil(0.02 * n_papers))


def merge_small_clusters(vectors: np.ndarray, labels: np.ndarray, smallest: int) -> np.ndarray:
    """Move the papers of clusters under ``smallest`` to the nearest remaining centre."""
    labels = labels.copy()
    while True:
        ids, sizes = np.unique(labels, return_counts=True)
        if len(ids) < 2 or sizes.min() >= smallest:
            break
        tiny = ids[sizes.argmin()]
        keep = ids[ids != tiny]
        centres = np.stack([vectors[labels == c].mean(axis=0) for c in keep])
        members = np.flatnonzero(labels == tiny)
        labels[members] = keep[(vectors[members] @ centres.T).argmax(axis=1)]
    return np.unique(labels, return_inverse=True)[1]


def _unique_by_id(papers: Sequence[Paper]) -> list[Paper]:
    """Papers sorted by id, first occurrence of each id kept (so input order does not matter)."""
    by_id: dict[str, Paper] = {}
    for paper in papers:
        if paper.id in by_id:
            log.warning("paper id %s given twice; grouping the first", paper.id)
            continue
        by_id[paper.id] = paper
    return [by_id[key] for key in sorted(by_id)]


@dataclass(frozen=True)
class TermCounts:
    """How often each term occurs in each paper (papers × terms), and the terms."""

    matrix: sparse.csr_matrix
    terms: np.ndarray


def count_terms(papers: Sequence[Paper]) -> TermCounts | None:
    """Count the terms of every paper, or None if no term survives pruning."""
    n = len(papers)
    vectorizer = CountVectorizer(
        analyzer=tokenize,
        min_df=2 if n >= 20 else 1,
        max_df=0.5 if n >= 20 else 1.0,
        dtype=np.float64,
    )
    try:
        counts = vectorizer.fit_transform([paper_text(p) for p in papers]).tocsr()
    except ValueError:  # empty vocabulary: only stop words, or every term pruned
        return None
    if counts.nnz == 0:
        return None
    return TermCounts(counts, vectorizer.get_feature_names_out())


def themes_from_labels(
    papers: Sequence[Paper],
    labels: np.ndarray,
    vectors: np.ndarray | None = None,
    counts: TermCounts | None = None,
) -> list[Theme]:
    """Named themes in reading order, from one cluster label per paper (``OTHER``: unplaceable).

    Backends that only decide which papers go together reuse this for names and ordering.
    """
    if len(papers) == 0:
        return []
    groups = [np.flatnonzero(labels == label) for label in sorted(set(labels.tolist()) - {OTHER})]
    unplaceable = [papers[i] for i in np.flatnonzero(labels == OTHER)]
    if not groups:
        return [_other_theme(unplaceable)]
    ranked_terms = distinctive_terms(counts, groups) if counts is not None else [[] for _ in groups]
    drafts = [
        _draft_theme(papers, members, vectors, terms)
        for members, terms in zip(groups, ranked_terms)
    ]
    drafts.sort(key=lambda draft: (-len(draft[2].paper_ids), -draft[0], draft[2].title))
    themes = _unique_titles([(keywords, theme) for _, keywords, theme in drafts])
    if unplaceable:
        themes.append(_other_theme(unplaceable))
    return themes


def _draft_theme(
    papers: Sequence[Paper], members: np.ndarray, vectors: np.ndarray | None, terms: list[str]
) -> tuple[float, list[str], Theme]:
    """A theme plus what ordering and renaming need: its cohesion and all its ranked terms."""
    closeness = _closeness(vectors, members)
    order = sorted(
        range(len(members)), key=lambda i: _reading_key(papers[members[i]], closeness[i])
    )
    ordered = [papers[members[i]] for i in order]
    keywords = display_terms(pick_terms(terms, KEYWORDS_PER_THEME * 2), ordered)
    theme = Theme(
        title=theme_title(keywords) or OTHER_TITLE,
        keywords=tuple(keywords[:KEYWORDS_PER_THEME]),
        paper_ids=tuple(p.id for p in ordered),
    )
    return float(closeness.mean()), keywords, theme


def _closeness(vectors: np.ndarray | None, members: np.ndarray) -> np.ndarray:
    """Cosine of each member to the theme centre, rounded so float noise cannot reorder ties."""
    if vectors is None:
        return np.zeros(len(members))
    points = vectors[members]
    centre = points.mean(axis=0)
    norm = np.linalg.norm(centre)
    return (points @ (centre / norm)).round(6) if norm > 0 else np.zeros(len(members))


def _reading_key(paper: Paper, closeness: float) -> tuple[float, int, str]:
    return (-float(closeness), -paper.times_seen, paper.id)


def _other_theme(papers: Sequence[Paper]) -> Theme:
    ordered = sorted(papers, key=lambda p: _reading_key(p, 0.0))
    return Theme(title=OTHER_TITLE, keywords=(), paper_ids=tuple(p.id for p in ordered))


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
    for row, support in zip(scores, per_group):
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
    """The first ``count`` terms that share no word; a bigram replaces the lone unigram it contains."""
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
    pattern = r"\b" + r"[\s-]+".join(re.escape(w) for w in term.split()) + r"\b"
    forms = Counter(" ".join(m.split()) for m in re.findall(pattern, text, flags=re.IGNORECASE))
    if not forms:
        return term
    return min(forms, key=lambda form: (-forms[form], form))


def _title_case(phrase: str) -> str:
    """Capitalize each word; keep words written with inner capitals (LLM, ImageNet)."""
    words = re.split(r"([\s-]+)", phrase)
    return "".join(w if w[1:].lower() != w[1:] else w[:1].upper() + w[1:].lower() for w in words)


def theme_title(keywords: Sequence[str]) -> str:
    """Two distinctive terms, or three when the first two are single words."""
    count = 3 if all(" " not in k for k in keywords[:2]) else 2
    return TITLE_SEPARATOR.join(keywords[:count])


def _unique_titles(drafts: Sequence[tuple[list[str], Theme]]) -> list[Theme]:
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


DEFAULT_BACKEND: ThemeBackend = TfidfThemes()


def group_papers(papers: Sequence[Paper], *, max_themes: int = 10, seed: int = 0) -> list[Theme]:
    """Group papers into themes, in reading order (largest/most salient first).

    Each Theme: title (human-readable label from distinctive terms, e.g. "Reinforcement Learning ·
    Reward Models"), keywords (top ~5 distinctive terms), paper_ids (ordered by closeness to the
    theme centre, then Paper.times_seen desc, then id). Every input paper id appears in exactly one
    theme. Deterministic for the same input. Empty input -> [].
    """
    themes = DEFAULT_BACKEND.group(papers, max_themes=max_themes, seed=seed)
    log.info("grouped %d papers into %d themes", sum(len(t.paper_ids) for t in themes), len(themes))
    return themes
