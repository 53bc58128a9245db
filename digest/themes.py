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
from itertools import combinations
from typing import Protocol

import numpy as np
from scipy import sparse
from sklearn.cluster import KMeans
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer, TfidfTransformer
from sklearn.metrics import adjusted_rand_score
from sklearn.preprocessing import normalize

from .errors import ConfigError
from .models import Paper, Theme

log = logging.getLogger("digest.themes")

OTHER_TITLE = "Other"
OTHER = -1  # label of papers with no usable term
KEYWORDS_PER_THEME = 5
COMPLETION_SHARE = 0.7  # a bigram is completed by a third word seen after it this often
TITLE_SEPARATOR = " · "

# Words too common in paper listings to name or separate a theme on their own. They are
# still allowed in a bigram next to a strong word: "language models", "multi agent".
_WEAK = """
    propose proposed proposes proposing method methods model models modeling approach approaches
    paper papers result results show shows shown showing novel based using use used uses
    performance task tasks state art existing new work works experiment experiments experimental
    demonstrate demonstrates demonstrated achieve achieves achieved achieving outperform
    outperforms outperforming significant significantly effective effectively extensive framework
    frameworks present presents presented introduce introduces introduced study studies studied
    investigate investigated different various recent recently small high low good better best
    obtain obtained find found consider considered given case cases terms number order provide
    provides general important key main simple able make makes way ways problem problems
    furthermore moreover finally addition particular respectively including improve improved
    improves improving improvement via like code available analysis data time effect effects
    property properties function functions system systems structure process processes non multi
    self pre co sub semi prove proves proved let observed observation observations type types
    related certain possible second first allow allows allowing leads lead use general generally
    """
WEAK_WORDS = frozenset(_WEAK.split())
# Dropped like English stop words, so "large language models" gives "language models".
STOP_WORDS = frozenset(ENGLISH_STOP_WORDS) | {"et", "al", "ie", "eg", "vs", "wrt", "large", "com"}
STOP_WORDS |= {"http", "https", "www", "github"}

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
    restarts: int = 4  # k-means runs per k; their agreement measures how real a k is
    themes_per_decade: float = 3.0  # target k = this × log10(n papers)
    window: tuple[float, float] = (0.7, 1.5)  # k tried: this range × target
    target_penalty: float = 0.3  # agreement given up per unit of |log(k / target)|
    selection_sample: int = 2500  # papers used to choose k (all are clustered)
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
        """k-means at the most reproducible k near the size-based target, then tidied."""
        n = len(vectors)
        candidates = self.candidate_ks(n, max_themes, distinct=_distinct_rows(vectors))
        if not candidates:
            return np.zeros(n, dtype=int)
        k = self._choose_k(vectors, candidates, seed)
        labels, _ = self._kmeans_restarts(vectors, k, seed)
        labels = merge_small_clusters(vectors, labels, min_theme_size(n))
        return self._split_oversized(vectors, labels, max_themes, seed)

    def _choose_k(self, vectors: np.ndarray, candidates: range, seed: int) -> int:
        """The k whose k-means restarts agree best, less a penalty for straying from the target."""
        target = self.target_themes(len(vectors))
        if len(vectors) > self.selection_sample:
            rows = np.random.RandomState(seed).choice(
                len(vectors), self.selection_sample, replace=False
            )
            vectors = vectors[np.sort(rows)]
        scores = {}
        for k in candidates:
            _, agreement = self._kmeans_restarts(vectors, k, seed)
            scores[k] = agreement - self.target_penalty * abs(math.log(k / target))
            log.debug("k=%d restart agreement=%.3f score=%.3f", k, agreement, scores[k])
        return max(candidates, key=lambda k: scores[k])

    def target_themes(self, n_papers: int) -> float:
        """How many themes a reader expects: ~4 for 30 papers, 6-7 for 100-300, ~10 for 2,000."""
        return max(2.0, self.themes_per_decade * math.log10(max(n_papers, 2)))

    def candidate_ks(self, n_papers: int, max_themes: int, distinct: int) -> range:
        """The k values tried: a window around the target, within the hard limits."""
        target = self.target_themes(n_papers)
        upper = min(max_themes, n_papers // min_theme_size(n_papers), distinct)
        lower = min(max(2, round(target * self.window[0])), upper)
        return (
            range(lower, min(upper, int(target * self.window[1])) + 1) if upper >= 2 else range(0)
        )

    def _kmeans_restarts(self, vectors: np.ndarray, k: int, seed: int) -> tuple[np.ndarray, float]:
        """Best-inertia labels of several k-means restarts, and how much the restarts agree (mean ARI)."""
        rng = np.random.RandomState(seed)
        runs = []
        for _ in range(self.restarts):
            model = KMeans(n_clusters=k, n_init=1, random_state=rng.randint(2**31 - 1))
            runs.append((model.fit(vectors).inertia_, model.labels_))
        agreement = [adjusted_rand_score(a, b) for (_, a), (_, b) in combinations(runs, 2)]
        best = min(range(len(runs)), key=lambda i: runs[i][0])
        return runs[best][1], float(np.mean(agreement)) if agreement else 1.0

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
            halves, _ = self._kmeans_restarts(vectors[members], 2, seed)
            if min(np.bincount(halves, minlength=2)) < smallest:
                break
            labels = labels.copy()
            labels[members[halves == 1]] = len(sizes)
        return labels


def _distinct_rows(vectors: np.ndarray) -> int:
    return len(np.unique(vectors.round(6), axis=0))


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
