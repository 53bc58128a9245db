"""Fixed sections: themes the config file names, filled before the rest is clustered.

A section is a title plus keywords and/or a description::

    [[themes]]
    title = "Reward models & RLHF"
    keywords = ["reward model", "RLHF", "preference optimization", "human feedback"]

A paper joins the named section its text is most similar to (cosine of TF-IDF vectors over
the same terms the clustering uses), when that similarity reaches the section's
``threshold`` (default ``DEFAULT_THRESHOLD``). The other papers are clustered as usual.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError
from ..models import Paper, Theme
from ..tables import check_table

if TYPE_CHECKING:
    import numpy as np

DEFAULT_THRESHOLD = 0.1
NO_SECTION = -1

logger = logging.getLogger("digest.themes")


@dataclass(frozen=True)
class Section:
    """A theme named in the config file."""

    title: str
    keywords: tuple[str, ...] = ()
    description: str = ""
    threshold: float = DEFAULT_THRESHOLD

    def text(self) -> str:
        """What papers are compared with: the title, the keywords (weighed up), the description."""
        keywords = ". ".join(self.keywords)
        return f"{self.title}. {keywords}. {keywords}. {self.description}"


def parse_sections(value: Any, where: str = "config") -> tuple[Section, ...]:
    """The ``[[themes]]`` tables of a config file, checked; ``where`` names the file."""
    if not isinstance(value, list):
        raise ConfigError(f"{where}: 'themes' must be a list of [[themes]] tables")
    return tuple(_parse_section(entry, f"{where}: [[themes]] #{number}")
                 for number, entry in enumerate(value, start=1))


def _parse_section(entry: Any, where: str) -> Section:
    entry = check_table(entry, ("title", "keywords", "description", "threshold"), where,
                        example='title = "Bees" and keywords = ["honey bee"]')
    title, keywords = entry.get("title"), entry.get("keywords", [])
    description, threshold = entry.get("description", ""), entry.get("threshold", DEFAULT_THRESHOLD)
    if not isinstance(title, str) or not title.strip():
        raise ConfigError(f"{where} needs a 'title' (a non-empty string)")
    if not isinstance(keywords, list) or not all(isinstance(k, str) for k in keywords):
        raise ConfigError(f"{where}: 'keywords' must be a list of strings")
    if not isinstance(description, str):
        raise ConfigError(f"{where}: 'description' must be a string")
    keywords = [keyword for keyword in keywords if keyword.strip()]
    if not keywords and not description.strip():
        raise ConfigError(f"{where} ('{title}') needs 'keywords' or a 'description' to match on")
    if (isinstance(threshold, bool) or not isinstance(threshold, int | float)
            or not 0 <= threshold <= 1):
        raise ConfigError(f"{where}: 'threshold' must be a number from 0 to 1")
    return Section(title.strip(), tuple(keywords), description, float(threshold))


def assign_sections(papers: Sequence[Paper], sections: Sequence[Section], *,
                    everyone: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Each paper's section index (``NO_SECTION`` when none is similar enough, unless
    ``everyone``) and its similarity to that section."""
    import numpy as np

    from ._text import paper_text, term_matrix, tokenize
    from ._vectors import tfidf, unit_rows_sparse

    nothing = np.full(len(papers), NO_SECTION, dtype=int), np.zeros(len(papers))
    if not papers or not sections:
        return nothing
    texts = [paper_text(p) for p in papers] + [s.text() for s in sections]
    counted = term_matrix(map(tokenize, texts), len(texts))
    if counted is None:  # nothing but stop words anywhere
        return nothing
    # Unit rows made unit again: the bits of the TfidfVectorizer + normalize this was.
    matrix = unit_rows_sparse(tfidf(counted[0]))
    similarity = (matrix[: len(papers)] @ matrix[len(papers):].T).toarray().round(6)
    best = similarity.argmax(axis=1)
    score = similarity[np.arange(len(papers)), best]
    close = score >= np.array([s.threshold for s in sections])[best]
    keep = close & (score > 0) | everyone
    placed = np.where(keep, best, NO_SECTION)
    _log_empty_sections(papers, sections, similarity, placed)
    return placed, score


def _log_empty_sections(papers: Sequence[Paper], sections: Sequence[Section],
                        similarity: np.ndarray, placed: np.ndarray) -> None:
    """Say why a configured section got no paper: its closest paper and the threshold."""
    for index, section in enumerate(sections):
        if (placed == index).any():
            continue
        nearest = int(similarity[:, index].argmax())
        best = float(similarity[nearest, index])
        if best <= 0:
            logger.info("fixed section '%s' got no paper: no paper shares a term with it "
                        "(threshold %g)", section.title, section.threshold)
            continue
        if best >= section.threshold:
            other = sections[int(similarity[nearest].argmax())].title
            why = f"reaches the threshold {section.threshold:g} but is closer to '{other}'"
        else:
            why = f"is below the threshold {section.threshold:g}"
        logger.info("fixed section '%s' got no paper: the closest, '%s', has similarity "
                    "%.3f, which %s", section.title, papers[nearest].title, best, why)


def section_themes(papers: Sequence[Paper], sections: Sequence[Section], placed: np.ndarray,
                   score: np.ndarray) -> list[Theme]:
    """One theme per section that got papers, in config order; papers most similar first."""
    import numpy as np

    from ._build import TOP_TITLES

    themes = []
    for index, section in enumerate(sections):
        members = sorted(np.flatnonzero(placed == index).tolist(),
                         key=lambda i: (-score[i], -papers[i].times_seen, papers[i].id))
        if members:
            ordered = [papers[i] for i in members]
            themes.append(Theme(title=section.title, keywords=section.keywords[:5],
                                paper_ids=tuple(p.id for p in ordered), label=section.title,
                                top_titles=tuple(p.title for p in ordered[:TOP_TITLES])))
    return themes
