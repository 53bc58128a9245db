"""Turn paper text into terms: tokenizing, domain stop words, term counts per paper."""

from __future__ import annotations

import re
import unicodedata
from array import array
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import sparse

from ..models import Paper
from ..normalize import TermNumbers

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
# The English stop words of the University of Glasgow's Information Retrieval Group, as
# scikit-learn ships them (BSD-3-Clause; tests/test_themes_math.py checks they are the same).
_ENGLISH = """
    a about above across after afterwards again against all almost alone along already also
    although always am among amongst amoungst amount an and another any anyhow anyone
    anything anyway anywhere are around as at back be became because become becomes becoming
    been before beforehand behind being below beside besides between beyond bill both bottom
    but by call can cannot cant co con could couldnt cry de describe detail do done down due
    during each eg eight either eleven else elsewhere empty enough etc even ever every
    everyone everything everywhere except few fifteen fifty fill find fire first five for
    former formerly forty found four from front full further get give go had has hasnt have
    he hence her here hereafter hereby herein hereupon hers herself him himself his how
    however hundred i ie if in inc indeed interest into is it its itself keep last latter
    latterly least less ltd made many may me meanwhile might mill mine more moreover most
    mostly move much must my myself name namely neither never nevertheless next nine no
    nobody none noone nor not nothing now nowhere of off often on once one only onto or
    other others otherwise our ours ourselves out over own part per perhaps please put
    rather re same see seem seemed seeming seems serious several she should show side since
    sincere six sixty so some somehow someone something sometime sometimes somewhere still
    such system take ten than that the their them themselves then thence there thereafter
    thereby therefore therein thereupon these they thick thin third this those though three
    through throughout thru thus to together too top toward towards twelve twenty two un
    under until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither
    who whoever whole whom whose why will with within without would yet you your yours
    yourself yourselves
    """
# Dropped like English stop words, so "large language models" gives "language models".
STOP_WORDS = frozenset(_ENGLISH.split()) | {"et", "al", "ie", "eg", "vs", "wrt", "large", "com"}
STOP_WORDS |= {"http", "https", "www", "github"}

_MATH = re.compile(r"\$[^$]*\$")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]+")
_PHRASE_BREAK = re.compile(r"[.,;:!?()\[\]{}\"\n]+")


# Whole words of Latin letters (after accents are folded): a word with other letters ("größe",
# "ℓ2") is left out rather than cut into pieces that read like other words. A run of phrase
# breaks matches as "": one scan of the text instead of a split into phrases and a scan of each.
_WORD_OR_BREAK = re.compile(r"(?<![^\W_])([a-z][a-z0-9]+)(?![^\W_])|" + _PHRASE_BREAK.pattern)


def tokenize(text: str) -> list[str]:
    """Unigrams (strong words only) and bigrams of adjacent non-stop words, not both weak."""
    if "$" in text:
        text = _MATH.sub(" . ", text)
    if "\\" in text:
        text = _LATEX_COMMAND.sub(" ", text)
    terms: list[str] = []
    append = terms.append
    previous, previous_weak = "", False
    for word in _WORD_OR_BREAK.findall(_fold(text.lower())):
        if not word or word in STOP_WORDS:  # a phrase ends, or a stop word breaks it
            previous = ""
            continue
        weak = word in WEAK_WORDS
        if not weak:
            append(word)
        if previous and not (previous_weak and weak):
            append(f"{previous} {word}")
        previous, previous_weak = word, weak
    return terms


def paper_text(paper: Paper) -> str:
    """The text that is clustered: the title twice (to weigh it up), then the abstract."""
    return f"{paper.title}\n{paper.title}\n{paper.abstract}"

@dataclass(frozen=True)
class TermCounts:
    """How often each term occurs in each paper (papers × terms), and the terms."""

    matrix: sparse.csr_matrix
    terms: np.ndarray
    in_title: sparse.csr_matrix  # 1 where the term is in the paper's title (names weigh it up)


def count_terms(papers: Sequence[Paper]) -> TermCounts | None:
    """Count the terms of every paper, or None if no term survives pruning.

    What ``CountVectorizer(min_df=2, max_df=0.5)`` computes (terms sorted, then pruned), with
    each paper's terms tallied by ``Counter`` in C: sklearn's per-term Python loop was 60% of
    the themes stage at 50,000 papers. Each paper's terms are made, counted and dropped in
    turn (the lists of 45,000 papers held at once were ~350 MB of strings)."""
    titles = [tokenize(p.title) for p in papers]
    counted = term_matrix(map(paper_terms, papers, titles), len(papers))
    if counted is None:  # only stop words
        return None
    matrix, terms = counted
    kept = _frequent_enough(matrix, len(papers))
    if not kept.size or (matrix := matrix[:, kept]).nnz == 0:
        return None
    terms = terms[kept]
    return TermCounts(matrix, terms, _in_title(titles, {t: j for j, t in enumerate(terms)}))


def term_matrix(term_lists: Iterable[list[str]], n: int
                ) -> tuple[sparse.csr_matrix, np.ndarray] | None:
    """Each of the ``n`` lists' term counts, one row each, and the terms in sorted order
    (column j counts ``terms[j]``): what ``CountVectorizer`` computes, entries in its order.
    None when no list has a term."""
    vocabulary = TermNumbers()
    columns, values, row_ends = array("i"), array("i"), array("q", [0])
    for listed in term_lists:
        tally = Counter(listed)
        columns.extend(map(vocabulary.__getitem__, tally))
        values.extend(tally.values())
        row_ends.append(len(columns))
    if not vocabulary:
        return None
    matrix = sparse.csr_matrix(
        (np.frombuffer(values, dtype=np.intc).astype(np.float64),
         np.frombuffer(columns, dtype=np.intc), np.frombuffer(row_ends, dtype=np.int64)),
        shape=(n, len(vocabulary)))
    # The order of each row's entries is sklearn's: by first sight in the corpus, then
    # renumbered in term order without sorting again. Sums over a row follow that order, and
    # the same order gives the same bits, so the same themes.
    matrix.sort_indices()
    ordered, matrix.indices = _sorted_terms(vocabulary, matrix.indices)
    return matrix, ordered


def _sorted_terms(vocabulary: dict[str, int], columns: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray]:
    """The terms in sorted order (as sklearn keeps them), and the columns renumbered so."""
    ordered = sorted(vocabulary)
    new_index = np.empty(len(ordered), dtype=np.intc)
    new_index[[vocabulary[term] for term in ordered]] = np.arange(len(ordered), dtype=np.intc)
    return np.array(ordered, dtype=object), new_index.take(columns)


def _frequent_enough(matrix: sparse.csr_matrix, n: int) -> np.ndarray:
    """The columns of terms in at least 2 papers and at most half of them (20 papers or more;
    every term below that)."""
    papers_with = np.bincount(matrix.indices, minlength=matrix.shape[1])
    low, high = (2, 0.5 * n) if n >= 20 else (1, 1.0 * n)
    return np.flatnonzero((papers_with >= low) & (papers_with <= high))


def _in_title(titles: Sequence[list[str]], column: dict[str, int]) -> sparse.csr_matrix:
    """1 where a kept term is in the paper's title (names weigh it up)."""
    rows = [sorted({column[t] for t in title if t in column}) for title in titles]
    row_ends = np.cumsum([0] + [len(row) for row in rows])
    flat = np.fromiter((j for row in rows for j in row), dtype=np.intc, count=int(row_ends[-1]))
    return sparse.csr_matrix((np.ones(len(flat)), flat, row_ends),
                             shape=(len(titles), len(column)))


def paper_terms(paper: Paper, title_terms: list[str]) -> list[str]:
    """``tokenize(paper_text(paper))`` with the title tokenized once: a line break ends every
    phrase, so the title's terms repeat as they are; only a "$" can open math across lines."""
    if "$" in paper.title:
        return tokenize(paper_text(paper))
    return title_terms + title_terms + tokenize(paper.abstract)


_NON_ASCII = re.compile(r"[^\x00-\x7f]+")


def _fold(text: str) -> str:
    """'café' → 'cafe', 'naïve' → 'naive': accents kept apart would split a word in two.

    Only the runs of non-ASCII characters are decomposed: the same result as decomposing the
    whole text (a combining mark is never ASCII, and is dropped wherever it ends up), at a
    fraction of the cost on an abstract with one "é" or "–" in it."""
    if text.isascii():
        return text
    return _NON_ASCII.sub(_fold_run, text)


def _fold_run(match: re.Match[str]) -> str:
    decomposed = unicodedata.normalize("NFKD", match[0])
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
