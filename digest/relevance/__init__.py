"""Relevance: rank the week's papers for one reader, and give every paper a link.

    profile = parse_profile(config["profile"], config_path)  # the [profile] table, checked
    ranking = rank(papers, profile)          # reads profile.library itself
    top, rest = select(ranking, max_papers)  # top → themes and LLM; rest → "Also this week"
    ranking.excluded                         # what exclude dropped, and the term that did
    paper_link(paper)                        # the source's link, arXiv's, or a title search
    ranking_report(ranking, top, rest)       # counts for the run report: nothing lost silently
    choose(papers, profile, max_papers)      # all of it for one run: papers, also, reasons, report

Offline and deterministic; sklearn and numpy are imported only when a library is ranked.
"""

from __future__ import annotations

from ..links import SEARCH_URL, Link, paper_link, title_search_url
from ._bibtex import parse_bibtex
from ._choose import Choice, choose
from ._library import Library, load_library
from ._profile import PROFILE_KEYS, Profile, parse_profile
from ._rank import Excluded, Ranked, Ranking, rank, ranking_report, select
from ._similarity import METHODS
from ._zotero import parse_zotero_csv

__all__ = ["METHODS", "PROFILE_KEYS", "SEARCH_URL", "Choice", "Excluded", "Library", "Link",
           "Profile", "Ranked", "Ranking", "choose", "load_library", "paper_link", "parse_bibtex",
           "parse_profile", "parse_zotero_csv", "rank", "ranking_report", "select",
           "title_search_url"]
