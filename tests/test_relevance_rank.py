"""Ranking the week for a reader: keywords, excludes, follows, signals, the library."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.dedup import deduplicate
from digest.errors import ConfigError
from digest.ingest import load_sources, parse_text
from digest.models import Paper, Sighting
from digest.relevance import Profile, Ranked, rank, ranking_report, select

FIXTURES = Path(__file__).parent / "fixtures" / "relevance"


def paper(n: int, title: str, abstract: str = "", authors: tuple[str, ...] = (),
          listings: int = 1, upvotes: int | None = None) -> Paper:
    sightings = tuple(Sighting(f"listing{i}", n) for i in range(listings))
    return Paper(id=f"p{n}", title=title, abstract=abstract, authors=authors,
                 sightings=sightings, upvotes=upvotes)


@pytest.fixture(scope="module")
def seed_week() -> list[Paper]:
    from tests.conftest import SEEDS

    return deduplicate(load_sources([str(SEEDS)]).records).papers


def test_without_a_profile_the_order_is_exactly_the_input(seed_week: list[Paper]) -> None:
    for profile in (None, Profile()):
        ranking = rank(seed_week, profile)
        assert [r.paper for r in ranking.ranked] == seed_week
        assert ranking.excluded == () and ranking.method == "none"
        assert {r.score for r in ranking.ranked} == {0.0}


def test_keywords_match_phrases_ignoring_case_hyphens_accents_and_plurals() -> None:
    week = [paper(0, "Plain paper"),
            paper(1, "Learning World Models for Control"),
            paper(2, "Robots", "We close the Sim-to-Real gap."),
            paper(3, "Sim to real transfer of wörld-model policies"),
            paper(4, "Worldwide modelling"),  # words inside other words do not match
            paper(5, "Simulated reality")]
    ranking = rank(week, Profile(keywords=("world model", "sim-to-real")))
    assert [r.paper.id for r in ranking.ranked] == ["p3", "p1", "p2", "p0", "p4", "p5"]
    assert ranking.ranked[0].reasons == ("matches: world model, sim-to-real",)
    assert ranking.ranked[1].reasons == ("matches: world model",)
    assert ranking.ranked[3].reasons == () and ranking.method == "profile"


def test_exclude_drops_by_title_and_says_which_and_why() -> None:
    week = [paper(0, "A Survey of World Models"), paper(1, "World models", "We survey nothing."),
            paper(2, "SURVEYS: a benchmark"), paper(3, "Other")]
    ranking = rank(week, Profile(exclude=("survey",)))
    assert [r.paper.id for r in ranking.ranked] == ["p1", "p3"]
    assert [(e.paper.id, e.term) for e in ranking.excluded] == [("p0", "survey"),
                                                                ("p2", "survey")]
    assert len(ranking.ranked) + len(ranking.excluded) == len(week)


@pytest.mark.parametrize("author, followed", [
    ("Chelsea Finn", True), ("C. Finn", True), ("Finn, Chelsea", True), ("Chelsea B. Finn", True),
    ("Chélsea FINN", True), ("Chélsea B. Finn", True), ("C Finn", True), ("Carl Finn", False),
    ("Chelsea Finnegan", False), ("Finn", False), ("Huckleberry Finn", False),
])
def test_follows_match_names_by_family_name_and_first_initial(author: str, followed: bool
                                                              ) -> None:
    week = [paper(0, "Someone else's", authors=("Sergey Levine",)),
            paper(1, "Maybe hers", authors=("Pieter Abbeel", author))]
    ranking = rank(week, Profile(authors=("Chelsea Finn",)))
    top = ranking.ranked[0]
    if followed:
        assert top.paper.id == "p1" and top.reasons == ("follows: Chelsea Finn",)
    else:
        assert top.paper.id == "p0" and top.reasons == ranking.ranked[1].reasons == ()


@pytest.mark.parametrize("authors", ['"Finn, Chelsea and Levine, Sergey"',
                                     '["Finn, Chelsea", "Levine, Sergey"]'])
def test_a_followed_author_matches_a_bibtex_style_author_string(authors: str) -> None:
    """"Finn, Chelsea and Levine, Sergey" in a JSON listing was read as "Finn", "Chelsea",
    "Levine", "Sergey", which no profile's "Chelsea Finn" matched (a probe, stop 29)."""
    abstract = "A study of how robots learn to manipulate objects from a few demonstrations."
    listing = (f'[{{"title": "Meta-learning for manipulation", "abstract": "{abstract}", '
               f'"authors": {authors}}}, {{"title": "Someone else\'s paper", '
               f'"abstract": "{abstract} Another one.", "authors": "Pieter Abbeel"}}]')
    week = deduplicate(parse_text(listing, "week.json")).papers
    top = rank(week, Profile(authors=("Chelsea Finn",))).ranked[0]
    assert top.paper.authors == ("Chelsea Finn", "Sergey Levine")
    assert top.reasons == ("follows: Chelsea Finn",)


@pytest.mark.parametrize(("followed", "authors"), [
    ("Robert Heath", '[["Heath,", "Robert W.", "Jr."]]'),  # the arXiv sample's authors_parsed
    ("Heath, Robert", '[["Heath,", "Robert W.", "Jr."]]'),
    ("Neal J. Evans II", '"Evans, Neal J."'),
    ("Valles Jr., James", '"James Valles"'),
])
def test_a_followed_author_with_a_suffix_or_a_trailing_comma_matches(followed: str,
                                                                      authors: str) -> None:
    """["Heath,", "Robert W.", "Jr."] was shown "Robert W. Heath," and no spelling of Heath
    followed it; a suffix ("II", "Jr.") in a followed name was taken for the family name (a
    probe, this stop)."""
    abstract = "A study of how antennas share a channel between many users at once."
    listing = (f'[{{"title": "Channels for many users", "abstract": "{abstract}", '
               f'"authors": {authors}}}]')
    week = deduplicate(parse_text(listing, "week.json")).papers
    ranked = rank(week, Profile(authors=(followed,))).ranked[0]
    assert ranked.reasons == (f"follows: {followed}",), ranked.paper.authors
    assert not ranked.paper.authors[0].endswith(",")


def test_listings_and_upvotes_order_papers_the_profile_says_nothing_about() -> None:
    week = [paper(0, "a"), paper(1, "b", listings=3), paper(2, "c", upvotes=40),
            paper(3, "d", upvotes=2), paper(4, "e about robots")]
    ranking = rank(week, Profile(keywords=("robot",)))
    assert [r.paper.id for r in ranking.ranked] == ["p4", "p1", "p2", "p3", "p0"]


def test_the_library_ranks_similar_papers_first_and_names_one(seed_week: list[Paper]) -> None:
    library = [p for p in seed_week if "multi-agent" in p.title.lower()][:6]
    week = [p for p in seed_week if p not in library]
    ranking = rank(week, Profile(), library=library)
    top = ranking.ranked[:10]
    assert ranking.method == "learned"
    assert sum("agent" in r.paper.title.lower() for r in top) >= 8
    assert all(r.reasons[0].startswith("like: ") for r in top)
    named = top[0].reasons[0][len("like: "):].rstrip("…")
    assert len(named) <= 80 and any(p.title.startswith(named) for p in library)
    assert all(0.0 <= r.similarity <= 1.0 for r in ranking.ranked if r.similarity is not None)


def test_a_week_paper_already_in_the_library_says_so(seed_week: list[Paper]) -> None:
    library = seed_week[:5]
    ranking = rank(seed_week[:40], Profile(), library=library)
    mine = [r for r in ranking.ranked if r.paper in library]
    assert len(mine) == 5 and all(r.reasons == ("in your library",) for r in mine)
    assert all(r in ranking.ranked[:10] for r in mine)  # learned as positives, not negatives


def test_the_profile_reads_its_library_files(seed_week: list[Paper]) -> None:
    profile = Profile(library=(FIXTURES / "library.bib",), keywords=("world model",))
    ranking = rank(seed_week, profile)
    assert ranking.method == "learned" and len(ranking.ranked) == len(seed_week)
    assert ranking.ranked[0].reasons[0].startswith("matches: world model")


@pytest.mark.parametrize("method", ["learned", "centroid"])
def test_ranking_is_deterministic(seed_week: list[Paper], method: str) -> None:
    profile = Profile(keywords=("agent",), authors=("Chelsea Finn",))
    runs = [rank(seed_week, profile, library=seed_week[:10], method=method)  # type: ignore[arg-type]
            for _ in range(2)]
    assert runs[0] == runs[1]


def test_a_library_of_only_this_weeks_papers_falls_back_to_the_centroid() -> None:
    week = [paper(0, "world models for robots"), paper(1, "language agents")]
    ranking = rank(week, Profile(), library=[week[0], week[1]])
    assert len(ranking.ranked) == 2 and ranking.method == "centroid"  # nothing to learn from


def test_everything_excluded_or_empty_weeks_are_fine() -> None:
    assert rank([], Profile(keywords=("x",)), library=[paper(9, "x")]).ranked == ()
    ranking = rank([paper(0, "A survey")], Profile(exclude=("survey",)), library=[paper(9, "x")])
    assert ranking.ranked == () and len(ranking.excluded) == 1


def test_select_cuts_at_max_papers() -> None:
    ranked = [Ranked(paper(i, str(i))) for i in range(5)]
    assert select(ranked, 2) == (ranked[:2], ranked[2:])
    assert select(ranked, None) == (ranked, [])
    assert select(ranked, 10) == (ranked, [])
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ConfigError, match="max_papers must be a whole number"):
            select(ranked, bad)  # type: ignore[arg-type]


def test_heavy_libraries_are_imported_inside_functions_only() -> None:
    for module in (Path(__file__).parents[1] / "digest" / "relevance").glob("*.py"):
        for node in ast.parse(module.read_text()).body:
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            heavy = [n for n in names if n.split(".")[0] in ("sklearn", "numpy", "scipy")]
            assert not heavy, f"{module.name} imports {heavy} at module level"


def test_upvotes_is_an_optional_field() -> None:
    assert paper(0, "x").upvotes is None
    assert dataclasses.replace(paper(0, "x"), upvotes=3).upvotes == 3


@pytest.mark.parametrize("method", ["learned", "centroid"])
def test_titles_without_words_still_rank_in_input_order(method: str) -> None:
    week = [paper(0, "∑∑"), paper(1, "12 34"), paper(2, "the of")]
    ranking = rank(week, Profile(), library=[paper(9, "∫")], method=method)  # type: ignore[arg-type]
    assert [r.paper.id for r in ranking.ranked] == ["p0", "p1", "p2"]


def test_the_report_accounts_for_every_paper() -> None:
    week = [paper(0, "A survey"), paper(1, "robots"), paper(2, "b"), paper(3, "c")]
    ranking = rank(week, Profile(keywords=("robot",), exclude=("survey",)))
    top, rest = select(ranking, 2)
    report = ranking_report(ranking, top, rest)
    assert report == {"method": "profile", "papers_ranked": 3, "papers_selected": 2,
                      "papers_also": 1, "papers_left_out": 0, "papers_excluded": 1,
                      "excluded": [{"id": "p0", "title": "A survey", "term": "survey"}]}
    hidden = ranking_report(ranking, top, rest, rest_shown=False)
    assert (hidden["papers_also"], hidden["papers_left_out"]) == (0, 1)
    assert report["papers_selected"] + report["papers_also"] + report["papers_excluded"] == 4


def test_an_unknown_method_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="use one of learned, centroid"):
        rank([paper(0, "x")], Profile(keywords=("x",)), method="bm25")  # type: ignore[arg-type]


def _plain_fold(text: str) -> str:
    """``fold`` as it was before its ASCII fast path: every text decomposed."""
    import re
    import unicodedata
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    plain = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return " ".join(re.findall(r"[\w+#]+", plain.replace("_", " ")))


@settings(max_examples=1000, deadline=None)
@given(st.lists(st.sampled_from(list("aZ é-_+#/ 2\u0301ßİﬁ\u00a0") + ["Réal", "C++"]),
                max_size=30).map("".join))
def test_folding_ascii_without_decomposing_it_is_the_plain_fold(text):
    from digest.relevance._match import fold
    assert fold(text) == _plain_fold(text)
