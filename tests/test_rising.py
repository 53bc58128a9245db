"""Rising themes are judged by what the themes' papers say, not by their labels' words.

A three-week archive of real arXiv records (../shared/data, grouped by category, so the
answer is known) is published into one output folder, each week with labels chosen to
mislead a word matcher."""

from __future__ import annotations

import csv
import itertools
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from digest.models import Paper
from digest.outputs import load_history, publish
from digest.render.rising import (
    MATCH,
    PastIssue,
    PastTheme,
    heaviest,
    rising_themes,
    similarity,
    term_profiles,
)

from .conftest import SHARED_DATA
from .render_samples import SectionSpec, make_issue
from .test_render_content import md_list_items


@pytest.fixture(scope="module")
def by_category() -> dict[str, list[Paper]]:
    groups: dict[str, list[Paper]] = {}
    with open(SHARED_DATA / "arxiv_metadata_sample.csv", encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            paper = Paper(id=row["id"], title=" ".join(row["title"].split()),
                          abstract=" ".join(row["abstract"].split()),
                          url=f"https://arxiv.org/abs/{row['id']}")
            groups.setdefault(row["categories"].split()[0], []).append(paper)
    return groups


def _publish(out: Path, week: str, themes: list[tuple[str, list[Paper]]]) -> str:
    specs = [SectionSpec(title, "A summary.", papers, {}, tuple(title.lower().split(" & ")))
             for title, papers in themes]
    publish(make_issue(specs, week=week), out)
    return (out / f"{week}.md").read_text(encoding="utf-8")


def test_a_three_week_archive_gives_true_rising_themes(tmp_path, by_category):
    quantum, gravity = by_category["quant-ph"], by_category["gr-qc"]
    astro, probability = by_category["astro-ph"], by_category["math.PR"]
    _publish(tmp_path, "2026-W45", [("Entanglement & qubits", quantum[:18]),  # 36%
                                    ("Galaxies & stars", astro[:32])])
    _publish(tmp_path, "2026-W46", [("Black holes & gravity", gravity[:10]),  # 33%
                                    ("Multi-scale decision making", probability[:3]),  # 10%
                                    ("Galaxies & stars", astro[32:49])])
    markdown = _publish(tmp_path, "2026-W47", [
        ("Multi-agent decision making", gravity[10:22]),  # 40%: last week's 33% theme
        ("Photon states & measurement", quantum[18:28]),  # 33%: had 18 papers in W45
        ("Star formation", astro[49:57])])
    assert md_list_items(markdown, "Rising themes") == [
        "Photon states & measurement: 10 papers, 33% of this issue, up from 18%"]
    assert "Compared with 2 earlier issues (2026-W45, 2026-W46):" in markdown
    assert "no similar theme before" not in markdown
    assert "up from 10%" not in markdown and "up from 5%" not in markdown


def test_the_history_keeps_each_themes_term_profile(tmp_path, by_category):
    _publish(tmp_path, "2026-W46", [("Black holes & gravity", by_category["gr-qc"][:10])])
    saved = json.loads((tmp_path / ".history.json").read_text(encoding="utf-8"))
    terms = saved["issues"][0]["themes"][0]["terms"]
    assert 10 <= len(terms) <= 60 and {"black", "hole"} & set(terms)
    loaded = load_history(tmp_path)["2026-W46"].themes[0].terms
    assert abs(sum(weight * weight for _, weight in loaded) - 1) < 0.01  # unit length


def test_issues_recorded_without_profiles_are_not_compared(tmp_path):
    old = PastIssue("2026-W46", 10, (PastTheme("Agents & tools", ("agents",), 1),))
    current = (PastTheme("Agents & tools", ("agents",), 5, (("agent", 1.0),)),)
    assert rising_themes("2026-W47", current, [old]) is None


def test_the_match_threshold_separates_categories_of_real_papers(by_category):
    """The calibration behind MATCH: groups of 3-12 papers of one arXiv category, in two
    'weeks', against groups of other categories (measured: 67% of same-category pairs match,
    2% of other pairs)."""
    rng = random.Random(1)
    categories = [c for c, papers in by_category.items() if len(papers) >= 24]
    same, other = [], []
    for _ in range(20):
        chosen = rng.sample(categories, 5)
        pools = [rng.sample(by_category[c], 24) for c in chosen]
        week1 = term_profiles([pool[:rng.randint(3, 12)] for pool in pools])
        week2 = term_profiles([pool[12:12 + rng.randint(3, 12)] for pool in pools])
        for i, j in itertools.product(range(5), range(5)):
            (same if i == j else other).append(similarity(week1[i], week2[j]) >= MATCH)
    assert sum(same) / len(same) >= 0.6
    assert sum(other) / len(other) <= 0.05


@settings(max_examples=500, deadline=None)
@given(st.dictionaries(st.text("abc", max_size=3),
                       st.sampled_from([0.0, 0.25, 0.5, 0.5000000000000001, 1.0, 3.0]),
                       max_size=30),
       st.integers(0, 12))
def test_the_heaviest_terms_are_the_first_of_all_terms_sorted(weights, n):
    """Only the terms as heavy as the n-th are sorted; ties at that weight are many here."""
    everything = sorted(((t, w) for t, w in weights.items() if w > 0),
                        key=lambda tw: (-tw[1], tw[0]))
    assert heaviest(weights, n) == everything[:n]
