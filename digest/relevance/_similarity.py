"""How much each paper of the week is like the reader's library.

``learned`` does what arxiv-sanity does: TF-IDF over words and bigrams, then a linear SVM
with balanced class weights, trained with the library as positives and the week's papers
as negatives, and the week scored by its decision function. ``centroid`` is the plain
baseline: cosine similarity to the mean library vector. Both give, per week paper, a score
(higher is closer) and the library paper it is most like (cosine), for the "like:" reason.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..models import Paper, Record
from ..normalize import title_key

__all__ = ["METHODS", "Similarity", "library_similarity"]

logger = logging.getLogger("digest")

Method = Literal["learned", "centroid"]
METHODS: tuple[Method, ...] = ("learned", "centroid")
# arxiv-sanity-lite's choices: a strongly regularized SVM on sublinear TF-IDF of 1-2-grams.
SVM_C = 0.01  # insensitive on the seed tasks: C = 0.1 and 1 give p@10 0.656 and 0.644
MAX_FEATURES = 50_000


@dataclass(frozen=True)
class Similarity:
    """Per week paper: the raw score, its percentile in the week (0 lowest … 1 highest),
    the closest library paper (index) and the cosine to it."""

    score: tuple[float, ...]
    percentile: tuple[float, ...]
    nearest: tuple[int, ...]
    nearest_cosine: tuple[float, ...]
    method: Method = "learned"  # "centroid" when asked, or when no week paper is a negative


def library_similarity(week: Sequence[Paper], library: Sequence[Record | Paper],
                       method: Method = "learned") -> Similarity:
    """Score every week paper against the library (neither may be empty)."""
    matrix = _tfidf([_text(p) for p in library] + [_text(p) for p in week])
    lib, wk = matrix[: len(library)], matrix[len(library):]
    in_library = _in_library(week, library)
    if all(in_library):
        method = "centroid"  # nothing to learn "not this" from
    scores = _svm_scores(lib, wk, in_library) if method == "learned" else _centroid_scores(lib, wk)
    nearest, cosine = _nearest(lib, wk)
    return Similarity(tuple(scores), tuple(_percentiles(scores)), nearest, cosine, method)


def _text(paper: Record | Paper) -> str:
    return f"{paper.title}. {paper.abstract}"


def _tfidf(texts: list[str]) -> Any:
    from sklearn.feature_extraction.text import TfidfVectorizer

    words_and_bigrams = TfidfVectorizer(
        strip_accents="unicode", lowercase=True, stop_words="english",
        token_pattern=r"(?u)\b[a-zA-Z_][a-zA-Z0-9_]+\b", ngram_range=(1, 2)).build_analyzer()
    vectorizer = TfidfVectorizer(analyzer=_Bounded(words_and_bigrams), sublinear_tf=True,
                                 max_features=MAX_FEATURES, norm="l2")
    try:
        return vectorizer.fit_transform(texts)
    except ValueError:  # no word at all (titles of digits and symbols)
        from scipy import sparse

        return sparse.csr_matrix((len(texts), 1))


# Distinct words and bigrams read before the most frequent MAX_FEATURES are kept: the 2,000
# papers of the arXiv sample have 132,000, the 50k benchmark 401,000; made-up text has
# millions, which scikit-learn keeps (~100 bytes each) until it has read every text.
MAX_GRAMS = 4_000_000


class _Bounded:
    """The analyzer ``analyze``, except that past ``MAX_GRAMS`` distinct features a feature
    not seen before is left out (logged once). Below it, what ``analyze`` gives."""

    def __init__(self, analyze: Any):
        self._analyze = analyze
        self._seen: set[str] = set()
        self._full = False

    def __call__(self, text: str) -> list[str]:
        grams = self._analyze(text)
        if len(self._seen) + len(grams) <= MAX_GRAMS:
            self._seen.update(grams)
            return grams
        if not self._full:
            self._full = True
            logger.warning("relevance: the papers hold more than %s distinct words and bigrams "
                           "(generated or garbled text?); those first seen after that are not "
                           "counted", f"{MAX_GRAMS:,}")
        kept = []
        for gram in grams:
            if gram not in self._seen and len(self._seen) < MAX_GRAMS:
                self._seen.add(gram)
            if gram in self._seen:
                kept.append(gram)
        return kept


def _in_library(week: Sequence[Paper], library: Sequence[Record | Paper]) -> list[bool]:
    """Which week papers the reader already has (same arXiv id or same title)."""
    ids = {p.arxiv_id for p in library if p.arxiv_id}
    titles = {title_key(p.title) for p in library}
    return [bool(p.arxiv_id and p.arxiv_id in ids) or title_key(p.title) in titles
            for p in week]


def _svm_scores(lib: Any, week: Any, in_library: list[bool]) -> list[float]:
    """The SVM's decision value for each week paper; week papers already in the library
    count as positives, not negatives."""
    from scipy import sparse
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    features = sparse.vstack([lib, week]).tocsr()
    labels = [1] * lib.shape[0] + [int(flag) for flag in in_library]
    svm = LinearSVC(class_weight="balanced", C=SVM_C, max_iter=10_000, tol=1e-6,
                    random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svm.fit(features, labels)
    if svm.n_iter_ >= svm.max_iter:  # the ranking is still usable: say so rather than fail
        logger.info("relevance: the SVM stopped before converging (%d iterations)",
                    svm.n_iter_)
    return [float(v) for v in svm.decision_function(week)]


def _centroid_scores(lib: Any, week: Any) -> list[float]:
    import numpy as np

    centroid = np.asarray(lib.mean(axis=0)).ravel()
    norm = float(np.linalg.norm(centroid))
    if norm == 0.0:
        return [0.0] * week.shape[0]
    return [float(v) for v in week @ (centroid / norm)]


def _nearest(lib: Any, week: Any) -> tuple[tuple[int, ...], tuple[float, ...]]:
    import numpy as np

    cosines = np.asarray((week @ lib.T).todense())
    best = cosines.argmax(axis=1)  # the first of equals: deterministic
    return (tuple(int(i) for i in best),
            tuple(float(cosines[row, i]) for row, i in enumerate(best)))


def _percentiles(scores: list[float]) -> list[float]:
    """0 for the lowest score of the week, 1 for the highest; ties share their mean rank."""
    from scipy.stats import rankdata

    if len(scores) < 2:
        return [1.0] * len(scores)
    ranks = rankdata(scores, method="average")
    return [float((r - 1) / (len(scores) - 1)) for r in ranks]
