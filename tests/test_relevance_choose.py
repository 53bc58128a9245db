"""choose(): the run's cut. Every paper of the week is in the issue, in "Also this week",
excluded with its term, or counted as left out."""

from __future__ import annotations

from digest.dedup import deduplicate
from digest.ingest import load_sources
from digest.relevance import Profile, choose


def week(seeds):
    return deduplicate(load_sources([str(seeds)]).records).papers


def test_without_a_profile_nothing_changes(seeds):
    papers = week(seeds)
    choice = choose(papers, None)
    assert choice.papers == tuple(papers) and not choice.also and not choice.reasons
    assert choice.report["papers_selected"] == len(papers)


def test_the_cut_keeps_the_best_and_accounts_for_every_paper(seeds):
    papers = week(seeds)
    profile = Profile(keywords=("world model",), exclude=("survey",))
    choice = choose(papers, profile, 20)
    assert len(choice.papers) == 20
    report = choice.report
    assert report["papers_excluded"] >= 1
    assert len(choice.papers) + len(choice.also) + report["papers_excluded"] == len(papers)
    matching = [p for p in papers if "world model" in (p.title + " " + p.abstract).lower()
                and "survey" not in p.title.lower()]
    assert matching and all(p in choice.papers for p in matching[:20])
    assert all(choice.reasons[p.id] == ("matches: world model",) or
               "matches: world model" in choice.reasons[p.id] for p in matching[:20])
    assert not any("survey" in p.title.lower() for p in choice.papers + choice.also)


def test_no_rest_counts_what_it_leaves_out(seeds):
    papers = week(seeds)
    choice = choose(papers, Profile(keywords=("agent",)), 10, show_rest=False)
    assert len(choice.papers) == 10 and choice.also == ()
    assert choice.report["papers_left_out"] == len(papers) - 10
